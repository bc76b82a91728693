"""The SQLite connection every part of the SQLite store shares: queries, transactions,
read snapshots, meta, the generation counter, and SQLite's side of the dialect the shared
statements are written in (lore.store.sql_base). The parts (notes, search, vectors, memory,
interest, checks) are mixins over this class; lore.store.sqlite puts them together."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from ..errors import IndexBusyError, IndexFullError, IndexReadOnlyError, SchemaError, quoted_safely
from .sql_base import SqlBase

BUSY_TIMEOUT_MS = 5_000
CHUNK = 500  # ids per IN (...) list: well under SQLite's variable limit
# Every write transaction counts itself in meta.commits: a second connection's reads are
# compared with the store's own snapshot by it (lore.store.sqlite_parts).
COMMITS = "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'commits'"
COUNT_COMMIT = (
    "INSERT INTO meta(key, value) VALUES ('commits', 1)"
    " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)


def busy(db_path: Path) -> IndexBusyError:
    return IndexBusyError(
        f"index busy: another lore process is writing {db_path}",
        hint="wait for it to finish and try again",
    )


def disk_full(db_path: Path) -> IndexFullError:
    return IndexFullError(
        f"disk full: cannot write the index {db_path}; the index is unchanged",
        hint="free some space, or put the index elsewhere with --db or LORE_DB",
    )


def damaged(db_path: Path, why: object) -> SchemaError:
    """The index file cannot be read as a lore index; it is derived, so it can be remade."""
    return SchemaError(
        f"index {db_path} is damaged: {quoted_safely(why)}",
        hint=f"delete {db_path} and run `lore index`: it is rebuilt from the files",
    )


def marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class SqliteBase(SqlBase):
    """An open apsw connection and what every SQL part needs from it."""

    TRUE, FALSE = "1", "0"
    DRIVING_JOIN = "CROSS JOIN"
    CHUNK = CHUNK
    AUTHOR_CATEGORY = (
        "CASE WHEN json_type(n.frontmatter, '$.category') = 'text'"
        " THEN trim(json_extract(n.frontmatter, '$.category')) END"
    )
    CLAIM_LINES = (
        "coalesce((SELECT group_concat(char(10) || json_extract(claim.value, '$.text'), ''"
        " ORDER BY claim.key) FROM json_each(l.claims) claim), '')"
    )
    JSON_LENGTH = "json_array_length({})"
    BYTE_LENGTH = "length(CAST({} AS BLOB))"
    CONTAINS = "instr({}, ?) > 0"

    # The backend's database error: a check that meets it reports a damaged index.
    Error: type[Exception] = apsw.Error
    db: apsw.Connection
    db_path: Path
    read_only: bool
    _texts_written = 0  # notes' full texts this write transaction wrote (lore.store.sqlite_notes)
    writing = False  # inside transaction(): other connections do not see what it wrote yet

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one SQL statement (SQLite backend only: for lore.store and tests)."""
        try:
            return list(self.db.execute(sql, params))
        except apsw.BusyError:
            raise busy(self.db_path) from None

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.db.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        before = self.db.total_changes()
        self.db.execute(sql, params)
        return int(self.db.total_changes() - before)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.db.executemany(sql, rows)

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return (f"{column} IN ({marks(values)})", list(values)) if values else ("0", [])

    def in_ids(self, column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} IN ({','.join(str(int(i)) for i in ids) or 'NULL'})", []

    def glob_match(self, column: str, pattern: str) -> tuple[str, Any]:
        return f"{column} GLOB ?", pattern

    def sub_tag_match(self, column: str, tag: str) -> tuple[str, Any]:
        return f"{column} GLOB ?", tag.replace("[", "[[]") + "/*"

    def read_only_error(self, what: str = "") -> IndexReadOnlyError:
        return IndexReadOnlyError(
            f"index {self.db_path} is read-only{' ' + what if what else ''}: it cannot be updated",
            hint="make it and its folder writable, or use --db or LORE_DB for another index",
        )

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT; any exception rolls everything back (once: SQLite may
        have rolled back already, e.g. when the disk filled up)."""
        if self.read_only:
            raise self.read_only_error()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            raise busy(self.db_path) from None
        except apsw.FullError:
            raise disk_full(self.db_path) from None
        self._texts_written = 0
        self.writing = True
        try:
            yield
            self._settle()
            self.db.execute(COUNT_COMMIT)
            self.db.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, apsw.BusyError):
                raise busy(self.db_path) from None
            if isinstance(exc, apsw.FullError):
                raise disk_full(self.db_path) from None
            raise
        finally:
            self.writing = False

    def _settle(self) -> None:
        """The last work of a write transaction, before it commits (the notes' part:
        lore.store.sqlite_notes)."""

    def _rollback(self) -> None:
        if self.db.getautocommit():
            return  # nothing left to roll back
        try:
            self.db.execute("ROLLBACK")
        except apsw.Error:
            pass  # the transaction was never committed: SQLite discards it on the next open

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    @property
    def in_transaction(self) -> bool:
        return not self.db.getautocommit()

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index does, by this connection or another: what caches of
        derived views (entity registry, link targets) are keyed by."""
        return int(self._scalar("PRAGMA data_version")), int(self.db.total_changes())

    # -- meta ------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, *keys: str) -> None:
        for key in keys:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))

    def all_meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.db.execute("SELECT key, value FROM meta")}
