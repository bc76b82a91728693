"""The agent-memory tables' PostgreSQL side (lore.store.memory has the rest): a batch of
rows replaces the rows with the same key, and the postings find a phrase."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import pg_lexical
from .memory import MemorySql
from .pg_base import PgBase

# The primary key's columns (by position) of each table: a later row of one batch with the
# same key replaces an earlier one, as SQLite's INSERT OR REPLACE does.
_KEYS = {
    "entity_defs": (0, 1),
    "entity_aliases": (0, 1, 3),
    "entity_edges": (0, 1),
    "entity_mentions": (0, 1),
    "memory_entries": (0, 1),
}


class PgMemory(MemorySql, PgBase):
    def insert_rows(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            key = _KEYS[table]
            last = {tuple(row[i] for i in key): row for row in rows}
            self.append_rows(table, None, list(last.values()))

    def notes_matching(self, phrases: Iterable[str]) -> dict[str, set[int]]:
        conn, query = self.lexical(), pg_lexical.LexicalQuery
        return {
            phrase: set(pg_lexical.matching(conn, query((tuple(phrase.split()),))))
            for phrase in phrases
        }
