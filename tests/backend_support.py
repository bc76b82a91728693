"""Helpers for tests that run on both backends (tests/conftest.py's `backend` and
`on_backend`): the index dumped whole on either, a second index of a vault, the
environment of a `lore` child process, and another process's write lock on a vault's
index: SQLite's is the file's write transaction (BEGIN IMMEDIATE), PostgreSQL's the
advisory lock of the vault's namespace that every sync takes (lore.store.pg_names.lock_key).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest
from conftest import dump_index, lore_namespace
from pg_support import dump_pg_index

import lore
import lore.store.sqlite as sqlite_mod
from lore.store.pg_base import PgBase
from lore.store.pg_names import lock_key


def dump_vault(vault: lore.Vault) -> dict[str, Any]:
    """`dump_index` of the vault's index on either backend (pg_support.dump_pg_index)."""
    if vault.store.engine()["backend"] == "sqlite":
        return dump_index(Path(vault.db_path))
    return dump_pg_index(vault.store)


def another_index(tmp_path: Path) -> str:
    """`db=` for a second, empty index of a vault, on this test's backend: a file of its
    own, or another namespace (`vault=`) in the test's database (LORE_DB, from on_backend)."""
    url = os.environ.get("LORE_DB", "")
    if url.startswith("postgresql"):
        return f"{url}{'&' if '?' in url else '?'}vault=another"
    return str(tmp_path / "another" / "index.sqlite")


def child_env(**settings: str) -> dict[str, str]:
    """The environment of a `lore` child process: this test's, with no LORE_* setting but
    `settings` and LORE_DB, which names the index of the backend the test runs on
    (on_backend)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_") or k == "LORE_DB"}
    env.update(settings)
    return env


def short_busy_wait(monkeypatch: pytest.MonkeyPatch, ms: int) -> None:
    """Every index opened from here on waits at most `ms` for another writer, then says
    "index busy" (SQLite reads its timeout when it connects, PostgreSQL at each write)."""
    monkeypatch.setattr(sqlite_mod, "BUSY_TIMEOUT_MS", ms)
    monkeypatch.setattr(PgBase, "busy_timeout_ms", ms)


@dataclass
class HeldLock:
    conn: Any
    released: bool = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.conn.close()  # SQLite's transaction is rolled back, PostgreSQL's lock freed


@contextmanager
def write_lock_held(root: Path) -> Iterator[HeldLock]:
    """The write lock of the vault `root`'s index, held by a connection of its own until
    `release()` or the end of the block: in the database LORE_DB names (on_backend), else
    in the vault's index file."""
    url = os.environ.get("LORE_DB", "")
    if url.startswith("postgresql"):
        import psycopg

        conn: Any = psycopg.connect(url, autocommit=True)
        conn.execute("SELECT pg_advisory_lock(%s)", (lock_key(lore_namespace(root)),))
    else:
        conn = apsw.Connection(str(root / ".lore" / "index.sqlite"))
        conn.execute("BEGIN IMMEDIATE")
    held = HeldLock(conn)
    try:
        yield held
    finally:
        held.release()
