"""A test vault's index on the backend the test runs on (on_backend: LORE_DB names a
PostgreSQL database, else the index is the vault's own file), reached behind lore's back:
read whole, damaged, named as lore names it; and doctor's repairs, run as a user would
paste them. Shared by the doctor, upgrade and concurrency tests."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import apsw
import reliability_harness as h
from click.testing import CliRunner
from conftest import PgServer, lore_namespace
from pg_support import schema_rows

import lore
from lore.cli import main
from lore.store.pg_names import redacted


def index_url() -> str | None:
    """The database this test's vaults are indexed in (on_backend), None on SQLite."""
    url = os.environ.get("LORE_DB", "")
    return url if url.startswith("postgresql") else None


def index_rows(root: Path) -> object:
    """Every row the index of the vault `root` holds, read without lore."""
    url = index_url()
    if url is not None:
        return schema_rows(url, lore_namespace(root))
    return h.full_dump(root / ".lore" / "index.sqlite")


def shown_index(root: Path) -> str:
    """How lore names the index in a message: the file, or the URL without its password."""
    url = index_url()
    return redacted(url) if url else str(root / ".lore" / "index.sqlite")


def make_vault(root: Path) -> Path:
    h.generate_vault(root, 12, seed=4)
    with lore.open(root) as opened:
        opened.sync()
    return root


def sql(root: Path, statement: str, params: tuple[Any, ...] = ()) -> None:
    """Damage the index behind lore's back: its file, or its schema in the database."""
    url = index_url()
    if url is not None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{lore_namespace(root)}", public')
            conn.execute(statement.replace("?", "%s"), params)
        return
    con = apsw.Connection(str(root / ".lore" / "index.sqlite"))
    try:
        con.execute(statement, params)
    finally:
        con.close()


def doctor(root: Path, **settings: Any) -> lore.DoctorReport:
    with lore.open(root, **settings) as opened:
        return opened.doctor()


def run_repair(
    report: lore.DoctorReport, env: dict[str, str] | None = None, server: PgServer | None = None
) -> None:
    """Run the commands doctor printed, as a user would paste them: `rm` of the index
    file, `psql` (the test server's own) for a vault's schema, and `lore` commands."""
    for command in report.commands:
        argv = shlex.split(command)
        if argv[0] == "rm":
            for name in argv[2:]:
                Path(name).unlink(missing_ok=True)
            continue
        if argv[0] == "psql":
            assert server is not None and server.bin_path is not None, command
            done = subprocess.run(
                [str(server.bin_path / "psql"), *argv[1:]],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 0, (command, done.stderr)
            continue
        assert argv[0] == "lore", command
        result = CliRunner().invoke(main, argv[1:], env=env)
        assert result.exit_code == 0, (command, result.output)
