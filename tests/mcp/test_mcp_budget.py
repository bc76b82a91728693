"""The MCP search tool's `budget_ms` (issue 18), through a real client session: what the
budget skipped comes back as `degraded`, decided on the vault's injected cost estimates."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    Sample,
    call,
    call_error,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

import lore
from lore.mcp.server import LoreServer
from lore.retrieve.budget import QueryCosts

pytestmark = pytest.mark.anyio


async def test_search_budget_ms_says_what_was_skipped(sample: Sample, tmp_path: Path) -> None:
    now = [0.0]
    with lore.open(sample.copy(tmp_path)) as vault:
        # A frozen clock: only the estimates decide. The sample vault runs in mode4, so
        # the snippets are the one part a budget can drop.
        vault.query_costs = QueryCosts(clock=lambda: now[0], estimates_ms={"snippet": 50.0})
        server = LoreServer(vault)
        async with Client(server.server, mode="legacy") as client:
            # The tight one first: a part that runs is timed (0 ms on this clock) and its
            # estimate falls, while a dropped one keeps its estimate.
            tight = await call(client, "search", {"query": "客户去重规则 v2", "budget_ms": 49})
            full = await call(client, "search", {"query": "客户去重规则 v2", "budget_ms": 51})
            none = await call(client, "search", {"query": "客户去重规则 v2"})
            error = await call_error(client, "search", {"query": "x", "budget_ms": "soon"})
    assert full["degraded"] == [] and "«" in full["hits"][0]["snippet"]
    assert tight["degraded"] == ["snippet"] and "«" not in tight["hits"][0]["snippet"]
    assert [h["path"] for h in tight["hits"]] == [h["path"] for h in full["hits"]]
    assert none["degraded"] == []
    assert "budget_ms" in error
