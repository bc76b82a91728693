"""What `lore doctor` asks of an SQLite index (lore.index.doctor_checks): the tables there
and the tables expected, row counts, FTS5's own integrity check and the document
frequencies against the FTS index, rows that point at no note, PRAGMA integrity_check."""

from __future__ import annotations

import re

import apsw

from .schema import MIGRATIONS
from .sqlite_base import SqliteBase

# Tables no migration makes: sqlite's own, FTS5's shadow tables, sqlite-vec's.
_NOT_MIGRATED = re.compile(r"^(sqlite_|fts_|vec_items)")
_VEC_DIM = re.compile(r"float\[(\d+)\]")


def expected_tables() -> set[str]:
    """The tables a fresh index has after every migration (built in memory)."""
    db = apsw.Connection(":memory:")
    try:
        for _name, migrate in MIGRATIONS:
            migrate(db)
        names = {str(n) for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        db.close()
    return {n for n in names if not _NOT_MIGRATED.match(n)} | {"fts"}


class CheckSql(SqliteBase):
    def engine(self) -> dict[str, str]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            vec = version("sqlite-vec")
        except PackageNotFoundError:
            vec = "not installed"
        return {"backend": "sqlite", "sqlite": apsw.sqlite_lib_version(), "sqlite-vec": vec}

    def reset_command(self) -> list[str]:
        """The command that deletes this index (its file and SQLite's side files), for
        doctor to name when the index is beyond repair."""
        return ["rm", "-f", *(f"{self.db_path}{end}" for end in ("", "-wal", "-shm"))]

    def migrations(self) -> list[str]:
        return [name for name, _ in MIGRATIONS]

    def expected_tables(self) -> set[str]:
        return expected_tables()

    def table_definitions(self) -> dict[str, str]:
        """table name → its CREATE statement."""
        return {
            str(name): str(sql or "")
            for name, sql in self.db.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
            )
        }

    def vector_dimension(self) -> str | None:
        """The dimension the vector table declares (None: no vector table)."""
        sql = self.table_definitions().get("vec_items")
        if sql is None:
            return None
        declared = _VEC_DIM.search(sql)
        return declared.group(1) if declared else ""

    def row_count(self, table: str) -> int:
        """Rows of one of lore's tables (a name from table_definitions)."""
        row = self.db.execute(f'SELECT count(*) FROM "{table}"').fetchone()
        return int(row[0]) if row else 0

    def fts_check(self) -> str | None:
        """Run FTS5's integrity check; None when healthy, else the error text."""
        try:
            self.db.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 0)")
        except apsw.Error as exc:
            return str(exc)
        return None

    def df_drift(self) -> int:
        """Terms whose recorded document frequency differs from what the FTS index holds."""
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.doctor_vocab USING fts5vocab(main, fts, row)"
        )
        try:
            count = 0
            for sql in (
                "SELECT count(*) FROM (SELECT term, doc FROM temp.doctor_vocab"
                " EXCEPT SELECT term, df FROM term_df)",
                "SELECT count(*) FROM (SELECT term, df FROM term_df"
                " EXCEPT SELECT term, doc FROM temp.doctor_vocab)",
            ):
                row = self.db.execute(sql).fetchone()
                count += int(row[0]) if row else 0
            return count
        finally:
            self.db.execute("DROP TABLE IF EXISTS temp.doctor_vocab")

    def orphan_rows(self, table: str) -> int:
        """Rows of a per-note table (or of the FTS index: "fts") whose note is gone."""
        column = "rowid" if table == "fts" else "note_id"
        row = self.db.execute(
            f'SELECT count(*) FROM "{table}" WHERE {column} NOT IN (SELECT id FROM notes)'
        ).fetchone()
        return int(row[0]) if row else 0

    def unkeyed_vectors(self) -> int:
        """Vector keys without a vector."""
        row = self.db.execute(
            "SELECT count(*) FROM vec_texts WHERE id NOT IN (SELECT rowid FROM vec_items)"
        ).fetchone()
        return int(row[0]) if row else 0

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """PRAGMA integrity_check: ["ok"] when the file is sound."""
        return [str(r[0]) for r in self.db.execute(f"PRAGMA integrity_check({int(limit)})")]
