"""A model's argument slips, end to end through a client session: the obvious reading is
served; anything else is an isError result naming the tool and the argument, and the
server goes on serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

pytestmark = pytest.mark.anyio


async def test_slips_give_the_same_answer(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        canonical = await call(
            client, "search", {"query": "去重", "tags": ["规则"], "limit": 3, "explain": True}
        )
        assert canonical["hits"]
        for slipped in (
            {"q": "去重", "tag": "规则", "limit": "3", "explain": "true"},
            {"text": "去重", "tags": "规则", "top_k": 3.0, "explain": 1},
            {"Query": "去重", "labels": ["规则"], "maxResults": 3, "explain": "yes"},
            {"query": "去重", "tags": "规则", "limit": 3, "explain": True, "mode": None},
        ):
            assert await call(client, "search", slipped) == canonical, slipped


async def test_read_note_slips(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        canonical = await call(client, "read_note", {"path": "rules/客户去重规则 v2.md"})
        for slipped in (
            {"file": "rules/客户去重规则 v2.md"},
            {"filePath": "rules/客户去重规则 v2"},
            {"note": "rules\\客户去重规则 v2.md"},
            {"note_id": "RULE-CD-002"},
        ):
            assert await call(client, "read_note", slipped) == canonical, slipped


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("search", {}, ["search:", "`query` is required"]),
        ("search", None, ["search:", "`query` is required"]),
        ("search", {"query": ""}, ["search:", "`query` is required"]),
        ("search", {"query": "x", "fuzzy": True}, ["unknown argument 'fuzzy'", "query (required)"]),
        ("search", {"query": "x", "limit": "many"}, ["search:", "`limit`", "'many'"]),
        ("search", {"query": "x", "limit": -1}, ["`limit` must be at least 1"]),
        ("search", {"query": {"a": 1}}, ["`query` must be a string"]),
        ("search", {"query": "x", "since": "2026-13"}, ["search:", "2026-13"]),
        ("search", {"q": "a", "query": "b"}, ["given twice"]),
        ("read_note", {"path": 42}, ["read_note:"]),
        ("read_note", {"path": "x.md", "start_line": "first"}, ["`start_line`"]),
        ("list_tags", {"limit": []}, ["list_tags:", "`limit`"]),
        ("status", {"verbose": True}, ["status: unknown argument 'verbose'"]),
    ],
)
async def test_wrong_arguments_are_useful_errors(
    sample: Sample, tmp_path: Path, tool: str, arguments: Any, named: list[str]
) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(client, tool, arguments)
        for text in named:
            assert text in message, (text, message)
        assert (await call(client, "status"))["notes"] == sample.notes  # still serving


async def test_a_limit_too_high_is_lowered_and_said(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        data = await call(client, "search", {"query": "的", "limit": 1000})
    assert len(data["hits"]) <= 50
    assert "limit 1000 lowered to its maximum 50" in data["notices"]
