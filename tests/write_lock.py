"""Another process's write lock on a vault's index, on either backend: SQLite's is the
file's write transaction (BEGIN IMMEDIATE), PostgreSQL's the advisory lock of the vault's
namespace that every sync takes (lore.store.pg_base.lock_key). What a test of "index
busy" needs: hold it, make lore's wait for it short, let it go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest
from conftest import lore_namespace

import lore.store.sqlite as sqlite_mod
from lore.store.pg_base import PgBase, lock_key


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
