"""The token-vector table of the static embedding tier (providers.static).

One row per (identity, token): the model's float32 vector of that token alone. It is
derived data, a pure function of the model and the token, kept in the index so that each
token is embedded once; dropping the table loses nothing but time. Created on first use
(it belongs to no migration: an index without it is complete).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import apsw

from .sqlite import SqliteStore

_CREATE = (
    "CREATE TABLE IF NOT EXISTS static_vocab("
    " identity TEXT NOT NULL, token TEXT NOT NULL, vector BLOB NOT NULL,"
    " PRIMARY KEY (identity, token)) WITHOUT ROWID"
)


class TokenVectors:
    """Read and add token vectors of one provider identity."""

    def __init__(self, store: SqliteStore, identity: str) -> None:
        self.store = store
        self.identity = identity
        self._ready = False

    def _exists(self) -> bool:
        if not self._ready:
            rows = self.store.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'static_vocab'"
            )
            self._ready = bool(rows)
        return self._ready

    def get(self, tokens: list[str]) -> dict[str, bytes]:
        """The stored vectors of these tokens (those present)."""
        if not tokens or not self._exists():
            return {}
        out: dict[str, bytes] = {}
        for start in range(0, len(tokens), 500):
            chunk = tokens[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for token, vector in self.store.query(
                f"SELECT token, vector FROM static_vocab WHERE identity = ? AND token IN ({marks})",
                [self.identity, *chunk],
            ):
                out[str(token)] = bytes(vector)
        return out

    def writable(self) -> bool:
        """False inside another transaction (a search's read snapshot): vectors computed
        there are used, not stored."""
        return not self.store.db.in_transaction

    def put(self, rows: Iterable[tuple[str, bytes]]) -> None:
        """Store token vectors in one transaction (an existing row is left as it is)."""
        items = [(self.identity, token, vector) for token, vector in rows]
        if not items:
            return
        try:
            with self.store.transaction():
                self.store.db.execute(_CREATE)
                self.store.db.executemany(
                    "INSERT OR IGNORE INTO static_vocab(identity, token, vector) VALUES (?,?,?)",
                    items,
                )
        except apsw.ReadOnlyError:
            return  # a read-only index still answers: the vectors are recomputed next time
        self._ready = True

    def copy_from(self, other: Path) -> None:
        """Add every word vector another index holds (the bench seeds a set's table from an
        earlier set's: the rows are a pure function of model and word)."""
        with self.store.transaction():
            self.store.db.execute(_CREATE)
        self.store.db.execute("ATTACH DATABASE ? AS other", (str(other),))
        try:
            with self.store.transaction():
                self.store.db.execute(
                    "INSERT OR IGNORE INTO static_vocab SELECT * FROM other.static_vocab"
                )
        finally:
            self.store.db.execute("DETACH DATABASE other")
        self._ready = True
