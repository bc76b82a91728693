"""Helpers for the MCP tests: a copy of the sample vault (indexed once per test run, then
copied with its index, so each test gets its own files and its own SQLite file) and an
in-process MCP client session over the SDK's in-memory transport pair."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client

import lore
from lore.mcp.server import LoreServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "vault"


@functools.cache
def _indexed_sample() -> tuple[Path, int]:
    base = Path(tempfile.mkdtemp(prefix="lore-mcp-sample-"))
    atexit.register(shutil.rmtree, base, True)
    vault = base / "vault"
    shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".lore"))
    with lore.open(vault) as opened:
        opened.sync()
        return vault, opened.status().notes


def sample_notes() -> int:
    """How many notes the library indexes in the sample vault."""
    return _indexed_sample()[1]


def sample_vault(dest: Path) -> Path:
    """A private, already indexed copy of examples/vault under `dest`."""
    target = dest / "sample"
    shutil.copytree(_indexed_sample()[0], target)
    return target


@asynccontextmanager
async def connect(
    vault_path: Path,
    *,
    allow_write: bool = False,
    mode: str = "legacy",
) -> AsyncIterator[Client]:
    """An initialized client session with a server over `vault_path` (legacy mode: the
    initialize handshake over the in-memory stream pair, as a stdio client does)."""
    vault = lore.open(vault_path)
    try:
        server = LoreServer(vault, allow_write=allow_write)
        async with Client(server.server, mode=mode) as client:
            yield client
    finally:
        vault.close()


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """Call a tool that must succeed; its JSON result (text and structured content agree)."""
    result = await client.call_tool(tool, arguments or {})
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    assert not result.is_error, text
    data = json.loads(text)
    assert data == result.structured_content
    return data


async def call_error(client: Client, tool: str, arguments: Any = None) -> str:
    """Call a tool that must fail; its one-line error message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result
    assert result.structured_content is None
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "\n" not in text and text.strip(), repr(text)
    return text
