"""MCP at /mcp of `lore serve` (streamable HTTP, the SDK's client): the same tools as
`lore mcp`, each call as the token's principal, the write tools behind --allow-write and a
write token, backlinks in read_note."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from serve_support import assert_no_private, make_vault, running

import lore
from lore.mcp.tools import available_tools

NOTE = "public/客户去重规则 v2.md"


@asynccontextmanager
async def mcp_client(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)
    async with http, Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    assert not result.is_error, text
    return json.loads(text)


async def error(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result
    return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.fixture
def vault_root(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault", clusters=False)


def _tokens(root: Path) -> dict[str, str]:
    with lore.open(root) as vault:
        return {
            "guest": vault.add_token("guest", principal="guest").secret,
            "guest-write": vault.add_token("gw", principal="guest", can_write=True).secret,
            "owner": vault.add_token("owner", principal=None).secret,
        }


@pytest.mark.anyio
async def test_tools_as_a_principal(vault_root: Path) -> None:
    tokens = _tokens(vault_root)
    with running(vault_root, require_token=True) as server:
        with lore.open(vault_root) as vault:
            expected = [t.name for t in available_tools(vault, allow_write=False)]
        async with mcp_client(server.url, tokens["guest"]) as client:
            assert [t.name for t in (await client.list_tools()).tools] == expected
            assert "notes" not in (client.instructions or "").split("(")[1].split(";")[0]
            hits = await call(client, "search", {"query": "SECRETWORD 客户"})
            assert all(h["path"].startswith("public/") for h in hits["hits"])
            assert_no_private(json.dumps(hits, ensure_ascii=False), "mcp search", "SECRETWORD 客户")
            note = await call(client, "read_note", {"path": NOTE})
            assert [b["path"] for b in note["backlinks"]] == ["public/架构说明.md"]
            message = await error(client, "read_note", {"path": "private/调整方案.md"})
            assert "not a note" in message
            for tool, args in (
                ("list_tags", {}),
                ("status", {}),
                ("lookup", {"query": "王老板"}),
                ("recent", {"days": 365}),
                ("context", {"task": "薪资 预算 王老板"}),
                ("snapshot", {}),
            ):
                data = await call(client, tool, args)
                echo = " ".join(str(v) for v in args.values())
                assert_no_private(json.dumps(data, ensure_ascii=False), f"mcp {tool}", echo)
            assert "writing is off" in await error(client, "remember", {"text": "x"})
        async with mcp_client(server.url, tokens["owner"]) as client:
            note = await call(client, "read_note", {"path": NOTE})
            assert {b["path"] for b in note["backlinks"]} == {
                "public/架构说明.md",
                "private/调整方案.md",
            }
    async with httpx.AsyncClient() as plain:  # no token: refused before MCP sees it
        with running(vault_root, require_token=True) as server:
            answer = await plain.post(
                server.url + "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthorized"


@pytest.mark.anyio
async def test_write_tools_need_allow_write_and_a_write_token(vault_root: Path) -> None:
    tokens = _tokens(vault_root)
    with running(vault_root, require_token=True, allow_write=True) as server:
        async with mcp_client(server.url, tokens["guest"]) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert {"remember", "write_note", "edit_note", "move_note"} <= set(names)
            message = await error(client, "write_note", {"path": "public/x.md", "text": "x"})
            assert "read-only" in message
            assert not (vault_root / "public/x.md").exists()
        async with mcp_client(server.url, tokens["guest-write"]) as client:
            made = await call(client, "write_note", {"path": "public/新.md", "text": "# 新\n"})
            assert made["action"] == "created"
            outside = await error(client, "write_note", {"path": "private/x.md", "text": "x"})
            assert "guest" in outside and not (vault_root / "private/x.md").exists()
            note = await call(client, "read_note", {"path": NOTE})
            stale = await error(
                client, "edit_note", {"path": NOTE, "base_hash": "0" * 64, "append": "x"}
            )
            assert "changed since" in stale
            with lore.open(vault_root) as vault:
                digest = vault.note(NOTE)["hash"]
            edited = await call(
                client,
                "edit_note",
                {"path": NOTE, "hash": digest, "append": "- 代理追加", "section": "计划"},
            )
            assert edited["previous_hash"] == digest
            moved = await call(client, "move_note", {"path": "public/新.md", "to": "public/b.md"})
            assert moved["moved_from"] == "public/新.md"
            found = await call(client, "search", {"query": "代理追加"})
            assert found["hits"][0]["path"] == NOTE
            assert note["path"] == NOTE
