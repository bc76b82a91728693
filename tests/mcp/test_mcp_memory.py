"""The agent-memory tools through an in-process client: lookup, recent, context, snapshot, and
remember (only with --allow-write), plus two clients searching while a third remembers."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    Sample,
    call,
    call_error,
    connect,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

import lore

pytestmark = pytest.mark.anyio

MEMORY = ["lookup", "recent", "context", "snapshot"]


async def test_memory_tools_are_listed_read_only(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        instructions = client.instructions or ""
    assert [name for name in tools if name in MEMORY] == MEMORY
    for name in MEMORY:
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint and not hints.destructive_hint
        assert f"- {name}:" in instructions
    assert "remember" not in tools and "read-only" in instructions
    assert tools["lookup"].input_schema["required"] == ["query"]
    assert tools["context"].input_schema["required"] == ["task"]


async def test_lookup_names_its_level(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        by_alias = await call(client, "lookup", {"name": "zs"})
        assert by_alias["level"] == "L1" and by_alias["found"] is True
        assert by_alias["entity"]["name"] == "张三"
        assert "Zhang San" in by_alias["entity"]["aliases"]
        for hit in by_alias["hits"]:
            assert hit["path"] and hit["anchor"].startswith(hit["path"]) and "frontmatter" in hit
        unknown = await call(client, "lookup", {"query": "量子引力 超弦"})
        assert unknown["level"] == "L4" and unknown["found"] is False
        assert [t[:2] for t in unknown["tried"]] == ["L1", "L2", "L3"]


async def test_recent_context_snapshot(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    with lore.open(vault) as opened:
        expected_snapshot = opened.snapshot().to_dict()
        expected_context = opened.context("客户去重 v2 上线", budget=1024).to_dict()
    async with connect(vault) as client:
        recent = await call(client, "recent", {"days": "3650", "limit": 3})
        assert recent["days"] == 3650 and 0 < len(recent["entities"]) <= 3
        assert all(e["last_activity"]["date"] for e in recent["entities"])
        context = await call(client, "context", {"q": "客户去重 v2 上线", "max_bytes": 1024})
        assert context == expected_context
        assert context["bytes"] <= 1024 and context["items"]
        assert all(item.get("path") for item in context["items"])
        snapshot = await call(client, "snapshot")
        assert snapshot == expected_snapshot and snapshot["bytes"] <= 2048
        small = await call(client, "snapshot", {"budget": 512})
        assert small["bytes"] <= 512
        assert "`task` is required" in await call_error(client, "context", {})
        assert "budget" in await call_error(client, "context", {"task": "x", "budget": 10})


async def test_remember_is_offered_only_with_allow_write(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault, allow_write=True) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "- remember:" in (client.instructions or "")
    hints = tools["remember"].annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        False,
        False,
        True,
    )
    assert tools["remember"].input_schema["required"] == ["text"]


async def test_remember_writes_indexes_and_is_found_at_once(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault, allow_write=True) as client:
        memory = await call(
            client,
            "remember",
            {"content": "KANGAROO-77 迁移定在 12 月底，zs 负责", "entity": "zs", "from": "chat"},
        )
        assert memory["created"] is True and memory["indexed"] is True
        assert memory["status"] == "claimed" and memory["trust"] == "inferred"
        assert memory["entities"] == ["张三"] and memory["source"] == "chat"
        assert memory["pointer"] == f"{memory['path']}#{memory['anchor']}"
        written = (vault / memory["path"]).read_text(encoding="utf-8")
        assert "KANGAROO-77" in written and f"{{#{memory['anchor']}}}" in written

        found = await call(client, "search", {"query": "KANGAROO-77"})
        assert [h["path"] for h in found["hits"]] == [memory["path"]]
        read = await call(client, "read_note", {"path": memory["pointer"]})
        assert read["start_line"] == memory["line"] and read["anchor"] == memory["pointer"]
        assert read["text"].split("\n")[2] == "KANGAROO-77 迁移定在 12 月底，zs 负责"
        assert "notices" not in read

        again = await call(
            client,
            "remember",
            {
                "text": "KANGAROO-77 迁移定在 12 月底，zs 负责",
                "entities": ["张三"],
                "source": "chat",
            },
        )
        assert again["created"] is False and again["anchor"] == memory["anchor"]
        assert (vault / memory["path"]).read_text(encoding="utf-8") == written

        message = await call_error(client, "remember", {"text": "x", "status": "verified"})
        assert message.startswith("remember:") and "source" in message
        assert "--" not in message.split("(")[0]  # CLI flag names are spelled as arguments
        assert "`text` is required" in await call_error(client, "remember", {"text": "  "})
        bad = await call_error(client, "remember", {"text": "x", "trust": "absolute"})
        assert "`trust` must be one of confirmed, inferred, imported" in bad


async def test_two_clients_search_while_a_third_remembers(sample: Sample, tmp_path: Path) -> None:
    """Three agents, each with its own server and its own connection to the same vault and
    index file: two keep searching while the third writes; no call fails, no entry is lost,
    and every entry is found by search once its remember call has returned."""
    vault = sample.copy(tmp_path)
    written: list[str] = []
    failures: list[str] = []
    checks: list[str] = []
    verified: list[str] = []  # markers a searcher found while the writer went on
    done = anyio.Event()

    async def writer() -> None:
        async with connect(vault, allow_write=True) as client:
            for i in range(12):
                marker = f"WOMBAT-{i:03d}"
                result = await client.call_tool("remember", {"text": f"{marker} 已确认"})
                if result.is_error:
                    failures.append(result.content[0].text)  # type: ignore[union-attr]
                    continue
                data = json.loads(result.content[0].text)  # type: ignore[union-attr]
                assert data["created"] is True
                written.append(marker)
        done.set()

    async def searcher(name: str) -> None:
        async with connect(vault) as client:
            while not done.is_set():
                latest = written[-1] if written else None  # its remember call has returned
                query = latest or "WOMBAT"
                result = await client.call_tool("search", {"query": query, "limit": 5})
                if result.is_error:
                    failures.append(f"{name}: {result.content[0].text}")  # type: ignore[union-attr]
                    continue
                data = json.loads(result.content[0].text)  # type: ignore[union-attr]
                checks.append(name)
                busy = any("not synced" in n for n in data.get("notices", []))
                if latest and not busy:
                    paths = [h["path"] for h in data["hits"]]
                    assert paths and paths[0].startswith("memory/"), (name, latest, paths)
                    verified.append(latest)
                await anyio.sleep(0)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(searcher, "a")
            tg.start_soon(searcher, "b")
            tg.start_soon(writer)
    assert failures == []
    assert len(written) == 12
    daily = "\n".join(p.read_text(encoding="utf-8") for p in (vault / "memory").glob("*.md"))
    headings = [line for line in daily.split("\n") if line.startswith("## ")]
    for marker in written:  # one entry each: no entry lost, none written twice
        assert sum(marker in line for line in headings) == 1, marker
    assert checks.count("a") > 1 and checks.count("b") > 1  # they did search meanwhile
    assert len(set(verified)) > 1
    async with connect(vault) as client:
        for marker in written:
            final = await call(client, "search", {"query": marker, "limit": 1})
            assert final["hits"][0]["path"].startswith("memory/"), marker
            assert marker.split("-")[1] in final["hits"][0]["snippet"], final["hits"][0]
