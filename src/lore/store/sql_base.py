"""What the SQL both backends share asks of a backend (lore.store.sqlite_base,
lore.store.pg_base implement it): the statements of notes, search rows, pinyin, vectors,
memory and interest are written once, in the mixins of lore.store.notes, .search, .pinyin,
.vectors, .memory and .interest, over this class.

Shared statements are written in the dialect both engines read:
- parameters are `?` (the PostgreSQL backend turns them into psycopg's `%s`, never inside a
  string literal, a quoted name or a comment), and a shared statement holds no literal `%`;
- a list of values is `in_list(column, values)` (`IN (?, …)` on SQLite, `= ANY(?)` on
  PostgreSQL), a list of ids `in_ids` (written into the statement as integers on SQLite,
  which has a limit on parameters);
- `WHERE {self.TRUE}` starts a clause the filters extend with ` AND …`;
- `self.DRIVING_JOIN` joins `notes` to a smaller table walked first: SQLite's planner
  takes the hint of CROSS JOIN, PostgreSQL's plain JOIN needs none;
- the notes' LLM fields (lore.store.note_llm) read JSON with the backend's own functions:
  `AUTHOR_CATEGORY` (a note's `category:` in its front matter, a text), `CLAIM_LINES`
  (its row's claims, each on a line of its own), `JSON_LENGTH` and `BYTE_LENGTH` (templates
  of one `{}`); `CONTAINS` (a substring test: instr or strpos) likewise;
- access rules and filters are compiled here (`allow_sql`, `filter_sql`) from the
  backend's `glob_match` (SQLite's GLOB; on PostgreSQL the same glob as an anchored regular
  expression), `sub_tag_match` and `category_match`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from .query import Filters

ID_PAGE = 10_000  # notes' ids read per statement by note_id_pages (about 2 MB of rows)

if TYPE_CHECKING:
    from .base import Store
    from .postgres import PostgresStore
    from .sqlite import SqliteStore

    SqlStore: TypeAlias = SqliteStore | PostgresStore


def path_glob(path: str) -> str:
    """A path filter as a GLOB: a folder or a plain prefix means everything under it."""
    while path.startswith("./"):
        path = path[2:]
    if not any(c in path for c in "*?["):
        return path.rstrip("/") + "*" if path.endswith("/") else path + "*"
    return path


def sql_store(store: Store) -> SqlStore:
    """The index as the SQL both backends share, for the statements written over it
    (lore.store.note_llm, .links): every backend's store is one."""
    if not isinstance(store, SqlBase):
        raise TypeError(f"{type(store).__name__} is not an SQL store")
    return cast("SqlStore", store)


class SqlBase:
    TRUE: str  # the literals true and false: "1" and "0", or "true" and "false"
    FALSE: str
    DRIVING_JOIN: str  # "CROSS JOIN" or "JOIN"
    CHUNK: int  # values per IN list (SQLite's parameter limit; round trips on PostgreSQL)
    AUTHOR_CATEGORY: str  # over `notes n`: its front matter's `category:` text, else NULL
    CLAIM_LINES: str  # over `note_llm l`: "\n" + each claim's text, joined in order ('' none)
    JSON_LENGTH: str  # the length of the JSON array `{}`
    BYTE_LENGTH: str  # the length of the text `{}` in UTF-8 bytes
    CONTAINS: str  # the text `{}` contains the parameter

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the rows it changed."""
        raise NotImplementedError

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def append_rows(
        self, table: str, columns: tuple[str, ...] | None, rows: list[tuple[Any, ...]]
    ) -> None:
        """Insert new rows (columns None: all of them, in the table's order); a backend may
        hold them back until its next statement (PostgreSQL sends them in batches)."""
        if rows:
            names = "(" + ", ".join(f'"{c}"' for c in columns) + ")" if columns else ""
            marks = ", ".join(["?"] * len(rows[0]))
            self.executemany(f"INSERT INTO {table}{names} VALUES ({marks})", rows)

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self.query(sql, params)
        return rows[0][0] if rows else None

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def get_meta(self, key: str) -> str | None:
        raise NotImplementedError

    def delete_meta(self, *keys: str) -> None:
        raise NotImplementedError

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """`column` is one of `values` (none: false), and its parameters."""
        raise NotImplementedError

    def in_ids(self, column: str, ids: Sequence[int]) -> tuple[str, list[Any]]:
        """`column` is one of these integer ids (none: false), and its parameters."""
        return self.in_list(column, [int(i) for i in ids])

    def note_pages(self, columns: str, key: str, size: int) -> Iterator[list[tuple[Any, ...]]]:
        """Every note's `columns` (`key` among them), `size` rows at a time in `key` order,
        each page after the last key seen: a million notes are never a million row objects
        at once. The key must be unique (path, id)."""
        at = [c.strip() for c in columns.split(",")].index(key)
        after: list[Any] = []
        while True:
            rows = self.query(
                f"SELECT {columns} FROM notes"
                + (f" WHERE {key} > ?" if after else "")
                + f" ORDER BY {key} LIMIT ?",
                [*after, size],
            )
            yield rows
            if len(rows) < size:
                return
            after = [rows[-1][at]]

    def note_id_pages(self, *, by_path: bool) -> Iterator[list[int]]:
        """Every note's id, ID_PAGE at a time, in path order (else in id order): a million
        notes' ids read in one statement came as a million row tuples (some 90 MB)."""
        columns = "id, path" if by_path else "id"
        for rows in self.note_pages(columns, "path" if by_path else "id", ID_PAGE):
            yield [int(row[0]) for row in rows]

    def chunks(self, values: Sequence[Any], size: int | None = None) -> Iterator[Sequence[Any]]:
        step = size or self.CHUNK
        for start in range(0, len(values), step):
            yield values[start : start + step]

    def empty_tables(self, *tables: str) -> None:
        """Delete every row of these tables (inside a transaction)."""
        for table in tables:
            self.execute(f"DELETE FROM {table}")

    def glob_match(self, column: str, pattern: str) -> tuple[str, Any]:
        """`column` matches the GLOB `pattern` (as SQLite reads it), and its parameter."""
        raise NotImplementedError

    def sub_tag_match(self, column: str, tag: str) -> tuple[str, Any]:
        """`column` (a tag key) is a sub-tag of `tag` (`tag/…`), and its parameter."""
        raise NotImplementedError

    def category_match(self) -> str:
        """A note's category (the author's, else the model's), case-folded, is `?`."""
        return (
            f"lower(coalesce({self.AUTHOR_CATEGORY}, (SELECT l.category_key FROM note_llm l"
            " WHERE l.note_id = n.id AND l.note_hash = n.hash))) = ?"
        )

    def allow_sql(
        self, allow: Sequence[str] | None, column: str = "n.path"
    ) -> tuple[str, list[Any]]:
        """' AND (…)' letting through the paths a principal's globs allow; '' for no rules
        (the owner). An empty rule list allows nothing."""
        if allow is None:
            return "", []
        if not allow:
            return f" AND {self.FALSE}", []
        matches = [self.glob_match(column, glob) for glob in allow]
        return " AND (" + " OR ".join(sql for sql, _p in matches) + ")", [p for _s, p in matches]

    def filter_sql(self, filters: Filters) -> tuple[str, list[Any]]:
        """' AND …' clauses over `notes n` for the filters, and their parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        for tag in filters.tags:
            sub, param = self.sub_tag_match("tag_key", tag)
            clauses.append(f"n.id IN (SELECT note_id FROM tags WHERE tag_key = ? OR {sub})")
            params.extend([tag, param])
        if filters.path:
            clause, param = self.glob_match("n.path", path_glob(filters.path))
            clauses.append(clause)
            params.append(param)
        dated = []
        if filters.since:
            dated.append("n.date >= ?")
            params.append(filters.since)
        if filters.until:
            dated.append("n.date <= ?")
            params.append(filters.until)
        if dated:
            window = " AND ".join(dated)
            clauses.append(f"({window} OR n.date IS NULL)" if filters.include_undated else window)
        if filters.allow is not None:
            allowed, globs = self.allow_sql(filters.allow)
            clauses.append(allowed.removeprefix(" AND "))
            params.extend(globs)
        if filters.category:
            clauses.append(self.category_match())
            params.append(filters.category)
        return "".join(f" AND {c}" for c in clauses), params
