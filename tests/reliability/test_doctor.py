"""`lore doctor`: each check finds the damage it is for, names the exact repair, and the
repair it names makes the index healthy again. Doctor itself never changes anything."""

from __future__ import annotations

import json
import random
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import embed_server as es
import pytest
import reliability_harness as h
from click.testing import CliRunner

import lore
from lore.cli import main
from lore.store.schema import SCHEMA_VERSION


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    h.generate_vault(root, 12, seed=4)
    with lore.open(root) as opened:
        opened.sync()
    return root


def sql(root: Path, statement: str, params: tuple[Any, ...] = ()) -> None:
    """Damage the index behind lore's back."""
    con = apsw.Connection(str(root / ".lore" / "index.sqlite"))
    try:
        con.execute(statement, params)
    finally:
        con.close()


def doctor(root: Path, **settings: Any) -> lore.DoctorReport:
    with lore.open(root, **settings) as opened:
        return opened.doctor()


def run_repair(report: lore.DoctorReport, cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run the commands doctor printed, as a user would paste them."""
    for command in report.commands:
        argv = shlex.split(command)
        if argv[0] == "rm":
            for name in argv[2:]:
                Path(name).unlink(missing_ok=True)
            continue
        assert argv[0] == "lore"
        result = CliRunner().invoke(main, argv[1:], env=env)
        assert result.exit_code == 0, (command, result.output)


def test_a_healthy_index_passes_every_check(vault: Path) -> None:
    report = doctor(vault)
    assert report.ok and report.problems == [] and report.commands == []
    assert report.repair is None
    # (semantic is checked only where the sync derives it: keywords on, or a provider set)
    assert set(report.checks) >= {"files", "vault", "schema", "fts", "derived", "sqlite"}
    assert set(report.checks.values()) == {"ok"}
    assert report.schema["version"] == SCHEMA_VERSION == report.schema["expected"]
    assert report.vault == {
        "root": str(vault.resolve()),
        "recorded": str(vault.resolve()),
        "db": str((vault / ".lore" / "index.sqlite").resolve()),
        "in_vault": True,
    }


def test_doctor_changes_nothing(vault: Path) -> None:
    sql(vault, "DELETE FROM fts WHERE rowid = (SELECT min(id) FROM notes)")
    (vault / "notes" / "000" / "n00001.md").unlink()
    db = vault / ".lore" / "index.sqlite"
    before = h.full_dump(db)
    for _ in range(2):
        assert not doctor(vault).ok
    assert h.full_dump(db) == before


Damage = Callable[[Path], None]
CASES: list[tuple[str, Damage, str, str]] = [
    (
        "fts row lost",
        lambda r: sql(r, "DELETE FROM fts WHERE rowid = (SELECT min(id) FROM notes)"),
        "fts",
        "lore rebuild",
    ),
    (
        "document frequencies drifted",
        lambda r: sql(
            r, "UPDATE term_df SET df = df + 3 WHERE term IN (SELECT term FROM term_df LIMIT 2)"
        ),  # noqa: E501
        "fts",
        "lore rebuild",
    ),
    (
        "tag row of a deleted note",
        lambda r: sql(r, "INSERT INTO tags VALUES (99999, 'ghost', 'ghost', 'frontmatter', 0)"),
        "derived",
        "lore rebuild",
    ),
    (
        "tokens from another tokenizer",
        lambda r: sql(r, "UPDATE meta SET value = '0' WHERE key = 'tokenizer_version'"),
        "schema",
        "lore rebuild",
    ),
    (
        "semantic layer behind",
        lambda r: sql(
            r, "DELETE FROM semantic_state WHERE note_id IN (SELECT id FROM notes LIMIT 3)"
        ),  # noqa: E501
        "semantic",
        "lore index",
    ),
    (
        "a table dropped",
        lambda r: sql(r, "DROP TABLE links"),
        "schema",
        "rm -f",
    ),
]


@pytest.mark.parametrize(
    ("damage", "check", "repair"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_check_finds_its_damage_and_its_repair_works(
    vault: Path, damage: Damage, check: str, repair: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if check == "semantic":  # a layer the sync derives only with keywords on (or a provider)
        monkeypatch.setenv("LORE_HEURISTIC_TAGS", "on")
        with lore.open(vault) as opened:
            opened.sync()
        assert doctor(vault).ok
    damage(vault)
    report = doctor(vault)
    assert not report.ok
    assert check in {p.check for p in report.problems}, report.to_dict()
    assert report.checks[check] != "ok"
    assert report.repair is not None and report.repair.startswith(repair), report.repair
    assert all(c.startswith(("lore ", "rm -f ")) for c in report.commands)
    assert f"--vault {shlex.quote(str(vault.resolve()))}" in report.commands[-1]
    run_repair(report, vault)
    after = doctor(vault)
    assert after.ok, after.to_dict()


def test_cli_prints_the_exact_commands_and_exits_1(vault: Path) -> None:
    sql(vault, "DELETE FROM fts WHERE rowid = (SELECT min(id) FROM notes)")
    result = CliRunner().invoke(main, ["doctor", "--vault", str(vault)])
    assert result.exit_code == 1
    assert result.stdout.rstrip().splitlines()[-1] == (
        f"run: lore rebuild --vault {shlex.quote(str(vault.resolve()))}"
    )
    data = json.loads(CliRunner().invoke(main, ["doctor", "--vault", str(vault), "--json"]).stdout)
    assert data["ok"] is False and data["repair"] == "lore rebuild"
    assert data["problems"][0]["check"] == "fts" and data["commands"]
    assert {"schema", "vault", "vectors", "checks", "truncated"} <= set(data)


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
    run_repair(report, vault)
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
        run_repair(report, vault)
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


# -- vectors against the provider identity ----------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[es.EmbedServer]:
    endpoint = es.EmbedServer()
    yield endpoint
    endpoint.close()


def test_vectors_checked_against_the_configured_provider(
    vault: Path, server: es.EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in server.env("model-a").items():
        monkeypatch.setenv(key, value)
    with lore.open(vault) as opened:
        opened.embed()
        report = opened.doctor()
    assert report.ok, report.to_dict()
    assert report.vectors["identity"] == report.vectors["configured"] == "openai:model-a"
    assert report.vectors["pending_notes"] == 0 and report.vectors["count"] > 0

    # A new note indexed but not embedded: pending, `lore embed`.
    (vault / "late.md").write_text("a late note about walruses")
    # Keywords on, as the configured provider has them: indexed and derived, not embedded.
    with lore.open(vault, embed_provider="none", heuristic_tags="on") as opened:
        opened.sync()
    report = doctor(vault)
    assert [p.repair for p in report.problems] == ["lore embed"], report.to_dict()
    run_repair(report, vault, env=server.env("model-a"))
    assert doctor(vault).ok

    # Another model configured: the stored vectors are not its vectors.
    monkeypatch.setenv("LORE_EMBED_MODEL", "model-b")
    report = doctor(vault)
    assert [p.repair for p in report.problems] == ["lore embed --rebuild"], report.to_dict()
    assert "openai:model-a" in report.problems[0].message
    run_repair(report, vault, env=server.env("model-b"))
    assert doctor(vault).ok

    # No provider configured: the vectors are kept, not a problem; the keyword tags the
    # provider needed are no longer derived, which one `lore index` brings in line.
    monkeypatch.setenv("LORE_EMBED_PROVIDER", "none")
    report = doctor(vault)
    assert "kept" in report.checks["vectors"]
    assert {p.repair for p in report.problems} <= {"lore index"}, report.to_dict()
    run_repair(report, vault, env={"LORE_EMBED_PROVIDER": "none"})
    report = doctor(vault)
    assert report.ok and "kept" in report.checks["vectors"]


def test_a_vector_key_without_its_vector_is_found(
    vault: Path, server: es.EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    with lore.open(vault) as opened:
        opened.embed()
        from lore.index.embed import load_vec

        load_vec(opened.store)
        opened.store.db.execute(
            "DELETE FROM vec_items WHERE rowid = (SELECT min(id) FROM vec_texts)"
        )
        report = opened.doctor()
    assert [p.repair for p in report.problems] == ["lore embed --rebuild"], report.to_dict()
    run_repair(report, vault, env=server.env())
    assert doctor(vault).ok


def test_doctor_runs_as_a_real_command(vault: Path) -> None:
    proc = subprocess.run(
        h.lore_argv("doctor", "--vault", str(vault), "--json"),
        capture_output=True,
        text=True,
        env=h.child_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
