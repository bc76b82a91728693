"""Every tool through an in-process MCP client session (the SDK's in-memory transport)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_support import short_busy_wait, write_lock_held
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    Sample,
    call,
    call_error,
    connect,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

pytestmark = pytest.mark.anyio

CORE = ["search", "read_note", "list_tags", "status"]


async def test_tools_are_listed_with_schemas_and_annotations(
    sample: Sample, tmp_path: Path
) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(tools)[:4] == CORE
    assert "remember" not in tools  # writing is off by default
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object"
        for name, prop in tool.input_schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
            assert prop.get("type") in {"string", "integer", "boolean", "array"}
        assert tool.annotations is not None
        assert tool.annotations.open_world_hint is False
    search = tools["search"]
    assert search.input_schema["required"] == ["query"]
    assert search.input_schema["properties"]["mode"]["enum"] == ["mode1", "mode2", "mode3", "mode4"]
    assert search.input_schema["properties"]["tags"]["type"] == "array"
    for name in CORE:
        hints = tools[name].annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
            True,
            False,
            True,
        )


async def test_instructions_describe_the_live_index(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault) as client:
        text = client.instructions or ""
    assert "'sample'" in text and f"{sample.notes} notes" in text and "mode4" in text
    for name in CORE:
        assert f"- {name}:" in text
    assert "read-only" in text


async def test_search_returns_evidence(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        data = await call(client, "search", {"query": "客户去重规则 v2", "limit": 3})
    assert data["mode"] == "mode4" and data["reason"] is None
    assert len(data["hits"]) == 3
    top = data["hits"][0]
    assert top["path"] == "rules/客户去重规则 v2.md"
    assert top["date"] == "2026-10-16"
    assert "«" in top["snippet"] and "»" in top["snippet"]
    assert top["anchor"] == f"{top['path']}#{top['heading']}"
    assert isinstance(top["line"], int) and top["line"] > 1
    assert top["frontmatter"]["title"] == top["title"] and top["explain"] is None


async def test_search_filters_explain_and_mode(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        tagged = await call(client, "search", {"query": "规则", "tags": ["去重"]})
        assert tagged["hits"] and all("去重" in h["tags"] for h in tagged["hits"])
        folder = await call(client, "search", {"query": "规则", "path": "rules/"})
        assert folder["hits"] and all(h["path"].startswith("rules/") for h in folder["hits"])
        dated = await call(
            client, "search", {"query": "规则", "since": "2026-10", "until": "2026-10-31"}
        )
        assert dated["hits"] and all("2026-10" <= h["date"] <= "2026-10-31" for h in dated["hits"])
        explained = await call(client, "search", {"query": "去重", "explain": True, "limit": 1})
        assert explained["hits"][0]["explain"]["matched_terms"]
        mode4 = await call(client, "search", {"query": "去重", "mode": "mode4"})
        assert mode4["mode"] == "mode4"
        none = await call(client, "search", {"query": "zzqqxxv"})
        assert none["hits"] == [] and none["reason"] == "nothing matched"
        filtered = await call(client, "search", {"query": "去重", "path": "nowhere/"})
        assert filtered["hits"] == [] and "filtered out" in filtered["reason"]


async def test_search_refuses_a_mode_the_vault_lacks(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "search", {"query": "去重", "mode": "mode1"})
    assert message.startswith("search:") and "mode1" in message


async def test_search_bad_date_is_a_tool_error(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "search", {"query": "去重", "since": "last tuesday"})
    assert message.startswith("search:") and "last tuesday" in message


async def test_read_note_by_path_id_anchor_and_window(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    path = "rules/客户去重规则 v2.md"
    lines = (vault / path).read_text(encoding="utf-8").split("\n")
    async with connect(vault) as client:
        whole = await call(client, "read_note", {"path": path})
        assert whole["path"] == path and whole["anchor"] == path
        assert whole["title"] == "客户去重规则 v2" and whole["date"] == "2026-10-16"
        assert whole["frontmatter"]["id"] == "RULE-CD-002"
        assert "去重" in whole["tags"] and whole["next_start_line"] is None
        first = whole["start_line"]
        assert whole["text"].split("\n") == lines[first - 1 : whole["end_line"]]
        assert lines[-1] == "" and whole["total_lines"] == len(lines) - 1 == whole["end_line"]

        by_id = await call(client, "read_note", {"id": "RULE-CD-002"})
        assert by_id["path"] == path and by_id["text"] == whole["text"]

        heading = next(h for h in whole["headings"] if h["text"] == "为什么改")
        anchored = await call(client, "read_note", {"path": f"{path}#为什么改", "end_line": 25})
        assert anchored["anchor"] == f"{path}#为什么改"
        assert anchored["start_line"] == heading["line"] and anchored["end_line"] == 25
        assert anchored["text"].split("\n") == lines[heading["line"] - 1 : 25]

        window = await call(client, "read_note", {"path": path, "start_line": 20, "end_line": 22})
        assert window["text"].split("\n") == lines[19:22]

        fm = await call(client, "read_note", {"path": path, "start_line": 1, "end_line": 16})
        assert fm["start_line"] == first and any("front matter" in n for n in fm["notices"])
        assert fm["text"].split("\n") == lines[first - 1 : 16]
        only_fm = await call_error(client, "read_note", {"path": path, "end_line": 3})
        assert "front matter" in only_fm and f"lines {first}-" in only_fm

        without_ext = await call(client, "read_note", {"path": path.removesuffix(".md")})
        assert without_ext["path"] == path

        missing = await call_error(client, "read_note", {"path": "rules/nope.md"})
        assert "not a note in the index" in missing and "search" in missing
        no_id = await call_error(client, "read_note", {"id": "NOPE-1"})
        assert "NOPE-1" in no_id
        neither = await call_error(client, "read_note", {})
        assert "path" in neither and "id" in neither
        past = await call_error(client, "read_note", {"path": path, "start_line": 10_000})
        assert "past the end" in past
        backwards = await call_error(
            client, "read_note", {"path": path, "start_line": 30, "end_line": 20}
        )
        assert "before start_line" in backwards


async def test_read_note_pages_a_long_note(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    body = "\n".join(f"line {i} " + "内容" * 200 for i in range(1, 301))
    (vault / "long.md").write_text(f"# Long\n\n{body}\n", encoding="utf-8")
    async with connect(vault) as client:
        pages = []
        start = None
        while True:
            args = {"path": "long.md"} | ({"start_line": start} if start else {})
            page = await call(client, "read_note", args)
            pages.append(page)
            assert len(page["text"]) <= 24_000
            start = page["next_start_line"]
            if start is None:
                break
            assert start == page["end_line"] + 1
            assert any("start_line=" in n for n in page["notices"])
    assert len(pages) > 3
    text = "\n".join(p["text"] for p in pages)
    assert text == f"# Long\n\n{body}"


async def test_list_tags_counts_notes(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        data = await call(client, "list_tags", {})
        counts = [t["notes"] for t in data["tags"]]
        assert counts == sorted(counts, reverse=True) and counts[0] > 1
        assert data["total"] == data["matched"] == len(data["tags"])
        status = await call(client, "status")
        assert status["tags"] == data["total"]
        some = await call(client, "list_tags", {"match": "#规则", "limit": 2})
        assert some["tags"] and all("规则" in t["tag"] for t in some["tags"])
        assert len(some["tags"]) <= 2


async def test_status(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault) as client:
        data = await call(client, "status")
    assert data["name"] == "sample" and data["vault"] == str(vault)
    assert data["notes"] == sample.notes and data["mode"] == "mode4"
    assert data["last_sync"]


async def test_every_query_tool_syncs_first(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault) as client:
        before = await call(client, "search", {"query": "QUOKKA-42"})
        assert before["hits"] == []
        note = vault / "inbox" / "quokka.md"
        note.write_text("---\ntags: [marsupial]\n---\n# Quokka\n\nQUOKKA-42 is done.\n", "utf-8")
        after = await call(client, "search", {"query": "QUOKKA-42"})
        assert [h["path"] for h in after["hits"]] == ["inbox/quokka.md"]
        read = await call(client, "read_note", {"path": "inbox/quokka.md"})
        assert "QUOKKA-42" in read["text"]
        tags = await call(client, "list_tags", {"match": "marsupial"})
        assert tags["tags"] == [{"tag": "marsupial", "notes": 1}]
        assert (await call(client, "status"))["notes"] == sample.notes + 1
        note.unlink()
        gone = await call(client, "search", {"query": "QUOKKA-42"})
        assert gone["hits"] == []
        assert "not a note" in await call_error(client, "read_note", {"path": "inbox/quokka.md"})


async def test_instructions_follow_the_index(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    async with connect(vault) as client:
        (vault / "new.md").write_text("# New\n\nfresh\n", encoding="utf-8")
        await call(client, "search", {"query": "fresh"})
        server_text = client.instructions or ""
    assert f"{sample.notes} notes" in server_text  # this session's copy was sent at connect time
    async with connect(vault) as again:
        assert f"{sample.notes + 1} notes" in (again.instructions or "")


async def test_unknown_tool_and_disabled_write(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        unknown = await call_error(client, "summon_demon", {})
        assert "summon_demon" in unknown and "search" in unknown
        disabled = await call_error(client, "remember", {"text": "x"})
        assert "--allow-write" in disabled


async def test_tool_name_slips(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        for name in ("Search", "lore_search", "lore.search", "find"):
            data = await call(client, name, {"query": "去重", "limit": 1})
            assert data["hits"], name
        tags = await call(client, "list-tags", {})
        assert tags["tags"]


async def test_modern_in_process_session(sample: Sample, tmp_path: Path) -> None:
    """The same tools over the SDK's direct (2026-era, no handshake) in-process path."""
    async with connect(sample.copy(tmp_path), mode="auto") as client:
        data = await call(client, "search", {"query": "GMV 口径", "limit": 2})
    assert data["hits"][0]["path"] == "metrics/GMV 口径.md"


async def test_a_server_bug_is_an_error_result_not_a_crash(
    sample: Sample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lore.vault import Vault

    def broken(self: Vault, **_: object) -> list[tuple[str, int]]:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(Vault, "tag_counts", broken)
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, "list_tags", {})
        assert message.startswith("list_tags: internal error (ZeroDivisionError")
        assert (await call(client, "status"))[
            "notes"
        ] == sample.notes  # the server is still serving


async def test_a_busy_index_is_a_notice_not_an_error(
    sample: Sample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the index's write lock: the sync is skipped and said so, the
    search answers from the index as it was."""
    from mcp import Client

    import lore
    from lore.mcp.server import LoreServer

    vault_path = sample.copy(tmp_path)
    short_busy_wait(monkeypatch, 50)
    with lore.open(vault_path) as vault, write_lock_held(vault_path) as other:
        server = LoreServer(vault)
        (vault_path / "late.md").write_text("# Late\n\nPLATYPUS-9\n", encoding="utf-8")
        async with Client(server.server, mode="legacy") as client:
            data = await call(client, "search", {"query": "客户去重规则 v2", "limit": 1})
            assert data["hits"][0]["path"] == "rules/客户去重规则 v2.md"
            assert any(n.startswith("not synced: index busy") for n in data["notices"])
            late = await call(client, "search", {"query": "PLATYPUS-9"})
            assert late["hits"] == []
            other.release()
            late = await call(client, "search", {"query": "PLATYPUS-9"})
            assert [h["path"] for h in late["hits"]] == ["late.md"]
            assert not late["notices"]


async def test_an_unreadable_file_is_said_once(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    (vault / "broken.md").write_bytes(b"\xff\xfe not UTF-8")
    async with connect(vault) as client:
        first = await call(client, "search", {"query": "去重", "limit": 1})
        said = [n for n in first["notices"] if n.startswith("not indexed: broken.md")]
        assert len(said) == 1 and "UTF-8" in said[0]
        second = await call(client, "search", {"query": "去重", "limit": 1})
        assert not any("broken.md" in n for n in second["notices"])
        assert second["hits"] == first["hits"]


async def test_read_note_anchors_by_text_slug_or_id(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    (vault / "anchors.md").write_text(
        "# Anchors\n\n## 2026-11-20 周五\n\nfriday\n\n## 14:03 Redis {#m-1403-ab}\n\nredis\n",
        encoding="utf-8",
    )
    async with connect(vault) as client:
        for fragment, line in (
            ("2026-11-20 周五", 3),
            ("2026-11-20-周五", 3),
            ("m-1403-ab", 7),
            ("14:03 Redis", 7),
        ):
            data = await call(client, "read_note", {"path": f"anchors.md#{fragment}"})
            assert data["start_line"] == line, fragment
            assert data["anchor"] == f"anchors.md#{fragment}" and "notices" not in data
        missing = await call(client, "read_note", {"path": "anchors.md#nowhere"})
        assert missing["start_line"] == 1 and missing["anchor"] == "anchors.md"
        assert missing["notices"] == ["no heading 'nowhere' in anchors.md; reading from the top"]


async def test_read_note_cuts_a_giant_line(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    (vault / "minified.md").write_text("# M\n\n" + "x" * 30_000 + "\nafter\n", "utf-8")
    async with connect(vault) as client:
        first = await call(client, "read_note", {"path": "minified.md", "start_line": 3})
        assert len(first["text"]) == 24_000 and first["next_start_line"] == 4
        assert "line 3 is cut at 24000 characters" in first["notices"]
        rest = await call(client, "read_note", {"path": "minified.md", "start_line": 4})
        assert rest["text"] == "after" and rest["next_start_line"] is None
