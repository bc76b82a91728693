"""Helpers for the MCP tests: a copy of the sample vault (indexed once per session and
backend, then copied with its index, so each test gets its own files and its own index:
SQLite file or PostgreSQL database) and an in-process MCP client session over the SDK's
in-memory transport pair."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import PgServer, copy_indexed_vault, isolated_module, new_database
from mcp import Client

import lore
from lore.mcp.server import LoreServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "vault"


@dataclass(frozen=True)
class Sample:
    """examples/vault indexed once on one backend: `copy(dest)` is a private, already
    indexed copy of it at dest/sample (its index: a file in .lore, or on PostgreSQL the
    database LORE_DB names, cloned from `db`)."""

    source: Path
    db: str | None
    server: PgServer | None
    notes: int  # how many notes the library indexes in it

    def copy(self, dest: Path) -> Path:
        return copy_indexed_vault(self.source, dest / "sample", self.db, self.server)


@pytest.fixture(scope="session")
def indexed_samples() -> dict[str, Sample]:
    """The sample indexed on each backend, once for the session (this worker's): every
    MCP module reads the same one, copying it per test."""
    return {}


@pytest.fixture(scope="module", name="indexed_sample")
def indexed_sample_fixture(
    backend: str,
    indexed_samples: dict[str, Sample],
    tmp_path_factory: pytest.TempPathFactory,
    user_cache: Path,
    request: pytest.FixtureRequest,
) -> Sample:
    """The sample on this module's backend: on PostgreSQL a database of its own, kept
    for the session (the session's server is deleted with everything in it)."""
    if backend not in indexed_samples:
        base = tmp_path_factory.mktemp("mcp-sample")
        vault = base / "sample"
        shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".lore"))
        server = request.getfixturevalue("pg_server") if backend != "sqlite" else None
        db = new_database(server) if server is not None else None
        with isolated_module(base, user_cache), lore.open(vault, db=db) as opened:
            opened.sync()
            indexed_samples[backend] = Sample(vault, db, server, opened.status().notes)
    return indexed_samples[backend]


@pytest.fixture(name="sample")
def sample_fixture(indexed_sample: Sample, on_backend: str) -> Sample:
    """The indexed sample vault on the backend this test runs on (on_backend)."""
    return indexed_sample


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
