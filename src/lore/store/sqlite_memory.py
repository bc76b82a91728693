"""The agent-memory tables' SQLite side (lore.store.memory has the rest): a batch of rows
replaces the rows with the same key (INSERT OR REPLACE), and FTS5 finds a phrase."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .memory import MemorySql
from .sqlite_base import SqliteBase, marks


class SqliteMemory(MemorySql, SqliteBase):
    def insert_rows(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({marks(rows[0])})", rows)

    def notes_matching(self, phrases: Iterable[str]) -> dict[str, set[int]]:
        return {
            phrase: {
                int(r[0])
                for r in self.query("SELECT rowid FROM fts WHERE fts MATCH ?", [f'"{phrase}"'])
            }
            for phrase in phrases
        }
