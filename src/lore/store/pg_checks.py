"""What `lore doctor` asks of a PostgreSQL index (lore.index.doctor_checks), answered from
the vault's schema: its tables and the tables expected, row counts, the full-text
statistics against the postings they summarise, the document frequencies against the
full-text index, rows that point at no note, and the server's own index checks (amcheck,
when the database has it)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .pg_base import PgBase
from .pg_phrases import recorded_words
from .pg_schema import ANY_BLOCK, MIGRATIONS, NOTES, PARTS, RECORDS_META, VECTOR_TABLE

_CREATED = re.compile(r"CREATE TABLE (\w+)")
_VEC_DIM = re.compile(r"vector\((\d+)\)")
# The full-text index's own tables: "fts" in a check means them, as on SQLite.
_FTS_TABLE = "lex_docs"


def expected_tables() -> set[str]:
    """The tables a fresh schema has after every migration."""
    made: list[str] = []
    for _name, migrate in MIGRATIONS:
        migrate(made.append)
    return {name for sql in made for name in _CREATED.findall(sql)}


class PgChecks(PgBase):
    def engine(self) -> dict[str, str]:
        vector = self._scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        return {
            "backend": "postgresql",
            "server": str(self._scalar("SHOW server_version")),
            "pgvector": str(vector) if vector else "not installed in this database",
            "dictionary words": self._dictionary_words(),
            "postings blocks": self._block_records(),
        }

    def _block_records(self) -> str:
        """Whether every block of postings holds block records (lore.store.pg_records), or
        some an older lore packed may hold row records: read as they are, only slower,
        until `lore rebuild`."""
        if self.get_meta(RECORDS_META) or not self._scalar(f"SELECT {ANY_BLOCK}"):
            return "12 bytes a note's posting"
        return (
            "some may be in 28 bytes a note's posting (packed by an older lore: `lore rebuild`"
            " packs them in 12, which searches read faster)"
        )

    def _dictionary_words(self) -> str:
        """Whether the full-text index holds jieba's dictionary words of three and four
        characters as terms (lore.store.pg_phrases), or counts them in the notes, as an
        index made before them or with another dictionary does: only slower, until
        `lore rebuild`."""
        with self._connected():
            recorded, words = recorded_words(self.lexical())
        if words.digest:
            return f"terms ({len(words):,} words of three and four characters)"
        made = "with another jieba dictionary" if recorded else "before they were terms"
        return f"counted in the notes (an index made {made}: `lore rebuild` makes them terms)"

    def reset_command(self) -> list[str]:
        """The command that deletes this vault's index (its schema; the database and the
        other vaults in it stay), for doctor to name when the index is beyond repair."""
        schema = '"' + self.namespace.replace('"', '""') + '"'
        return ["psql", _for_psql(self.url), "-c", f"DROP SCHEMA {schema} CASCADE"]

    def migrations(self) -> list[str]:
        return [name for name, _ in MIGRATIONS]

    def expected_tables(self) -> set[str]:
        return expected_tables()

    def table_definitions(self) -> dict[str, str]:
        """table name → its columns, as a CREATE statement (PostgreSQL keeps no text of
        it)."""
        columns: dict[str, list[str]] = {}
        for table, column, kind in self.query(
            "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)"
            " FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace"
            " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped"
            " WHERE s.nspname = ? AND c.relkind = 'r' ORDER BY c.relname, a.attnum",
            (self.namespace,),
        ):
            columns.setdefault(str(table), []).append(f"{column} {kind}")
        return {t: f"CREATE TABLE {t} ({', '.join(cols)})" for t, cols in columns.items()}

    def vector_dimension(self) -> str | None:
        """The dimension the vector table declares (None: no vector table)."""
        sql = self.table_definitions().get(VECTOR_TABLE)
        if sql is None:
            return None
        declared = _VEC_DIM.search(sql)
        return declared.group(1) if declared else ""

    def row_count(self, table: str) -> int:
        """Rows of one of lore's tables (a name from table_definitions, or "fts")."""
        name = _FTS_TABLE if table == "fts" else table
        if name not in self.table_definitions():
            raise self.Error(f"no table {table!r} in the vault's schema {self.namespace}")
        return int(self._scalar(f'SELECT count(*) FROM "{name}"'))

    def fts_check(self) -> str | None:
        """The full-text statistics against what they summarise; None when they agree."""
        problems = []
        self.lexical()
        for lx, what in ((NOTES, "note"), (PARTS, "part")):
            docs, tokens = self.query(f"SELECT docs, tokens FROM {lx.stats}")[0]
            held, total = self.query(f"SELECT count(*), coalesce(sum(len), 0) FROM {lx.docs}")[0]
            if (int(docs), int(tokens)) != (int(held), int(total)):
                problems.append(
                    f"{docs} {what}s and {tokens} tokens recorded, {held} and {total} held"
                )
            wrong = self._scalar(
                f"SELECT count(*) FROM {lx.terms} t LEFT JOIN (SELECT term_id, sum(k) AS k FROM"
                f" (SELECT term_id, count(*) AS k FROM {lx.postings} GROUP BY term_id UNION ALL"
                f" SELECT term_id, sum(n) FROM {lx.packs} GROUP BY term_id) u GROUP BY term_id)"
                " p ON p.term_id = t.id WHERE t.df <> coalesce(p.k, 0)"
            )
            if wrong:
                problems.append(f"{wrong} term(s) whose {what} count differs from their postings")
        return "; ".join(problems) or None

    def df_drift(self) -> int:
        """Terms whose recorded document frequency differs from what the full-text index
        holds (single tokens: the bigrams are the index's own)."""
        self.lexical()
        return int(
            self._scalar(
                "SELECT count(*) FROM (SELECT term, df FROM lex_terms"
                " WHERE strpos(term, ' ') = 0 AND df > 0) f"
                " FULL JOIN term_df d USING (term) WHERE f.df IS DISTINCT FROM d.df"
            )
        )

    def orphan_rows(self, table: str) -> int:
        """Rows of a per-note table (or of the full-text index: "fts") whose note is gone."""
        name = _FTS_TABLE if table == "fts" else table
        return int(
            self._scalar(
                f'SELECT count(*) FROM "{name}" WHERE note_id NOT IN (SELECT id FROM notes)'
            )
        )

    def unkeyed_vectors(self) -> int:
        """Vector keys without a vector."""
        if VECTOR_TABLE not in self.table_definitions():
            return int(self._scalar("SELECT count(*) FROM vec_texts"))
        return int(
            self._scalar(
                "SELECT count(*) FROM vec_texts WHERE id NOT IN (SELECT id FROM vec_items)"
            )
        )

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """amcheck's verdict on every B-tree index of the vault's schema (["ok"]: sound, or
        no amcheck extension in the database). The full-text statistics are not the
        server's storage but lore's derived rows: doctor's fts check (fts_check) finds
        them wrong, and `lore rebuild` makes them again, as on SQLite; here they would ask
        for a reset, which drops the vectors, the model answers and the access tokens."""
        problems: list[str] = []
        if self.query("SELECT 1 FROM pg_extension WHERE extname = 'amcheck'"):
            for (index,) in self.query(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace"
                " JOIN pg_am m ON m.oid = c.relam WHERE s.nspname = ? AND c.relkind = 'i'"
                " AND m.amname = 'btree' ORDER BY c.relname",
                (self.namespace,),
            ):
                try:
                    with self.conn.transaction():
                        self.query("SELECT bt_index_check(?::regclass)", (str(index),))
                except self.Error as exc:
                    problems.append(f"index {index}: {str(exc).splitlines()[0]}")
                if len(problems) >= limit:
                    break
        return problems[:limit] or ["ok"]


def _for_psql(shown_url: str) -> str:
    """The URL as psql takes it: without lore's own `vault=` and the (already redacted)
    password, which libpq then takes from PGPASSWORD or ~/.pgpass, or asks for."""
    parts = urlsplit(shown_url)
    kept = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key not in ("vault", "password")
    ]
    return urlunsplit(parts._replace(query=urlencode(kept, safe="/")))
