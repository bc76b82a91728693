"""`lore doctor` on damage to the SQLite index file itself: its pages scribbled over,
bytes that are not UTF-8 in a TEXT column, an index file kept outside the vault. SQLite
only: these are a file's faults, and what lore does about them (one line naming the file,
the reset `rm -f FILE*`) is SQLite's; a PostgreSQL index is the server's storage (amcheck
is its check: tests/reliability/test_doctor.py runs the rest of doctor on both)."""

from __future__ import annotations

import json
import random
import shlex
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from backend_index import doctor, make_vault, run_repair, sql
from click.testing import CliRunner

import lore
from lore.cli import main


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


def test_an_index_outside_the_vault_gets_commands_with_its_db(vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "elsewhere" / "index.sqlite"
    with lore.open(vault, db=db) as opened:
        opened.sync()
    (vault / "notes" / "000" / "n00002.md").unlink()
    report = doctor(vault, db=db)
    assert report.vault["in_vault"] is False
    assert report.commands == [
        shlex.join(["lore", "index", "--vault", str(vault.resolve()), "--db", str(db)])
    ]
    run_repair(report)
    assert doctor(vault, db=db).ok


# Seeds 10 and 30 damage the schema so that SQLite quotes a control character or hundreds
# of the damaged bytes in its message (once two "lines" and a wall of garbage).
@pytest.mark.parametrize("seed", [4, 10, 30])
def test_a_damaged_file_is_reported_with_the_reset_to_run(vault: Path, seed: int) -> None:
    db = vault / ".lore" / "index.sqlite"
    with lore.open(vault) as opened:  # fold the WAL into the file, then damage the file
        opened.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db.stat().st_size
    damage = random.Random(seed)
    with db.open("r+b") as handle:
        for offset in range(size // 3, size, 4096 * 3):
            handle.seek(offset + 200)
            handle.write(damage.randbytes(512))
    result = CliRunner().invoke(main, ["doctor", "--vault", str(vault), "--json"])
    if result.exit_code == 1 and result.stderr:  # damaged past opening: a one-line error
        assert result.stderr.startswith("lore: error: index ") and "damaged" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert len(result.stderr) < 600 and result.stderr[:-1].isprintable(), result.stderr
        db.unlink()
    else:
        data = json.loads(result.stdout)
        assert data["ok"] is False
        assert data["commands"][0].startswith("rm -f ") and str(db) in data["commands"][0]
        assert data["commands"][1].startswith("lore index --vault ")
        report = doctor(vault)
        run_repair(report)
    with lore.open(vault) as opened:
        opened.sync()
        assert opened.doctor().ok


@pytest.mark.parametrize("command", [["doctor"], ["index"]])
def test_text_that_is_not_utf8_in_the_index_is_reported_as_damage(
    vault: Path, command: list[str]
) -> None:
    # SQLite does not check text encoding: a damaged page can hand back bytes that are not
    # UTF-8 in a TEXT column. lore wrote only UTF-8, so that is damage, said in one line.
    sql(
        vault,
        "UPDATE notes SET path = CAST(x'98e4' AS TEXT) WHERE id = (SELECT min(id) FROM notes)",
    )
    result = subprocess.run(
        [sys.executable, "-m", "lore", *command, "--vault", str(vault)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lore: error: index "), result.stderr
    assert "damaged" in lines[0] and "lore index" in lines[0]


def _scribble(db: Path, page: int) -> None:
    """Overwrite one page of the index file (1-based, after the WAL is folded in)."""
    con = apsw.Connection(str(db))
    page_size = int(con.execute("PRAGMA page_size").fetchone()[0])
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    with db.open("r+b") as handle:
        start = (page - 1) * page_size + (100 if page == 1 else 0)
        handle.seek(start)
        handle.write(b"\xff" * (page * page_size - start))


def _root_page(db: Path, table: str) -> int:
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(
            con.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        )
    finally:
        con.close()


COMMANDS = [["search", "walrus"], ["index"], ["doctor"], ["status"], ["show", "MEMORY.md"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_on_a_damaged_index_says_so_in_one_line(
    vault: Path, command: list[str]
) -> None:
    db = vault / ".lore" / "index.sqlite"
    _scribble(db, 1)  # the schema itself
    result = CliRunner().invoke(main, [*command, "--vault", str(vault)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lore: error: index {db}"), result.stderr
    assert "damaged" in lines[0] and "lore index" in lines[0]


@pytest.mark.parametrize(
    "command", [c for c in COMMANDS if c[0] != "status"], ids=lambda c: c[0]
)  # (status counts notes from an index, never reading their rows)
def test_damage_found_in_the_middle_of_a_command_is_one_line_too(
    vault: Path, command: list[str]
) -> None:
    db = vault / ".lore" / "index.sqlite"
    _scribble(db, _root_page(db, "notes"))  # opens fine; fails when notes are read
    result = CliRunner().invoke(main, [*command, "--vault", str(vault)])
    assert result.exit_code == 1, result.output
    if command[0] == "doctor":  # doctor reports it, with the reset to run
        assert "run: rm -f " in result.stdout and "lore index --vault" in result.stdout
        return
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lore: error: index {db}"), result.stderr
    assert "damaged" in lines[0]
