"""`lore doctor` on both backends: each check finds the damage it is for, names the exact
repair, and the repair it names makes the index healthy again. Doctor itself never
changes anything. (Damage to the SQLite file itself: test_doctor_file.py.)"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import embed_server as es
import pytest
import reliability_harness as h
from backend_index import doctor, index_rows, index_url, make_vault, run_repair, sql
from click.testing import CliRunner
from conftest import PgServer

import lore
from lore.cli import main
from lore.store.pg_names import redacted
from lore.store.schema import SCHEMA_VERSION

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


@pytest.fixture
def pg(backend: str, request: pytest.FixtureRequest) -> PgServer | None:
    """The test server (its psql runs the resets doctor prints), on PostgreSQL."""
    return None if backend == "sqlite" else request.getfixturevalue("pg_server")


def test_a_healthy_index_passes_every_check(vault: Path, backend: str) -> None:
    report = doctor(vault)
    assert report.ok and report.problems == [] and report.commands == []
    assert report.repair is None
    # (semantic is checked only where the sync derives it: keywords on, or a provider set)
    assert set(report.checks) >= {"files", "vault", "schema", "fts", "derived", backend}
    assert set(report.checks.values()) == {"ok"}
    assert report.schema["version"] == report.schema["expected"]
    if backend == "sqlite":
        assert report.schema["version"] == SCHEMA_VERSION
    url = index_url()  # shown as lore shows a URL: without its password, even an empty one
    db = redacted(url) if url else str((vault / ".lore" / "index.sqlite").resolve())
    assert report.vault == {
        "root": str(vault.resolve()),
        "recorded": str(vault.resolve()),
        "db": db,
        "in_vault": backend == "sqlite",
    }


def test_doctor_changes_nothing(vault: Path, backend: str) -> None:
    sql(vault, LOSE_FTS_ROW[backend])
    (vault / "notes" / "000" / "n00001.md").unlink()
    before = index_rows(vault)
    for _ in range(2):
        assert not doctor(vault).ok
    assert index_rows(vault) == before


LOSE_FTS_ROW = {
    "sqlite": "DELETE FROM fts WHERE rowid = (SELECT min(id) FROM notes)",
    "postgresql": "DELETE FROM lex_docs WHERE note_id = (SELECT min(id) FROM notes)",
}
Damage = str | dict[str, str]  # a statement, or one per backend
CASES: list[tuple[str, Damage, str, Damage]] = [
    ("fts row lost", LOSE_FTS_ROW, "fts", "lore rebuild"),
    (
        "document frequencies drifted",
        "UPDATE term_df SET df = df + 3 WHERE term IN"
        " (SELECT term FROM term_df ORDER BY term LIMIT 2)",
        "fts",
        "lore rebuild",
    ),
    (
        "tag row of a deleted note",
        "INSERT INTO tags VALUES (99999, 'ghost', 'ghost', 'frontmatter', 0)",
        "derived",
        "lore rebuild",
    ),
    (
        "tokens from another tokenizer",
        "UPDATE meta SET value = '0' WHERE key = 'tokenizer_version'",
        "schema",
        "lore rebuild",
    ),
    (
        "semantic layer behind",
        "DELETE FROM semantic_state WHERE note_id IN (SELECT id FROM notes LIMIT 3)",
        "semantic",
        "lore index",
    ),
    # Beyond repair: the reset is the backend's own (the file, or the vault's schema).
    ("a table dropped", "DROP TABLE links", "schema", {"sqlite": "rm -f", "postgresql": "psql"}),
]


def by_backend(value: Damage, backend: str) -> str:
    return value if isinstance(value, str) else value[backend]


@pytest.mark.parametrize(
    ("damage", "check", "repair"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_check_finds_its_damage_and_its_repair_works(
    vault: Path,
    backend: str,
    pg: PgServer | None,
    damage: Damage,
    check: str,
    repair: Damage,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if check == "semantic":  # a layer the sync derives only with keywords on (or a provider)
        monkeypatch.setenv("LORE_HEURISTIC_TAGS", "on")
        with lore.open(vault) as opened:
            opened.sync()
        assert doctor(vault).ok
    sql(vault, by_backend(damage, backend))
    report = doctor(vault)
    assert not report.ok
    assert check in {p.check for p in report.problems}, report.to_dict()
    assert report.checks[check] != "ok"
    assert report.repair is not None, report.to_dict()
    assert report.repair.startswith(by_backend(repair, backend)), report.repair
    assert all(c.startswith(("lore ", "rm -f ", "psql ")) for c in report.commands)
    assert f"--vault {shlex.quote(str(vault.resolve()))}" in report.commands[-1]
    run_repair(report, server=pg)
    after = doctor(vault)
    assert after.ok, after.to_dict()


def test_cli_prints_the_exact_commands_and_exits_1(vault: Path, backend: str) -> None:
    sql(vault, LOSE_FTS_ROW[backend])
    result = CliRunner().invoke(main, ["doctor", "--vault", str(vault)])
    assert result.exit_code == 1
    assert (
        result.stdout.rstrip()
        .splitlines()[-1]
        .startswith(f"run: lore rebuild --vault {shlex.quote(str(vault.resolve()))}")
    )
    data = json.loads(CliRunner().invoke(main, ["doctor", "--vault", str(vault), "--json"]).stdout)
    assert data["ok"] is False and data["repair"] == "lore rebuild"
    assert data["problems"][0]["check"] == "fts" and data["commands"]
    assert {"schema", "vault", "vectors", "checks", "truncated"} <= set(data)


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
    run_repair(report, env=server.env("model-a"))
    assert doctor(vault).ok

    # Another model configured: the stored vectors are not its vectors.
    monkeypatch.setenv("LORE_EMBED_MODEL", "model-b")
    report = doctor(vault)
    assert [p.repair for p in report.problems] == ["lore embed --rebuild"], report.to_dict()
    assert "openai:model-a" in report.problems[0].message
    run_repair(report, env=server.env("model-b"))
    assert doctor(vault).ok

    # No provider configured: the vectors are kept, not a problem; the keyword tags the
    # provider needed are no longer derived, which one `lore index` brings in line.
    monkeypatch.setenv("LORE_EMBED_PROVIDER", "none")
    report = doctor(vault)
    assert "kept" in report.checks["vectors"]
    assert {p.repair for p in report.problems} <= {"lore index"}, report.to_dict()
    run_repair(report, env={"LORE_EMBED_PROVIDER": "none"})
    report = doctor(vault)
    assert report.ok and "kept" in report.checks["vectors"]


def test_a_vector_key_without_its_vector_is_found(
    vault: Path, backend: str, server: es.EmbedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    with lore.open(vault) as opened:
        opened.embed()
    if backend == "sqlite":
        with lore.open(vault) as opened:  # vec_items is sqlite-vec's: its module first
            from lore.index.embed import load_vec

            load_vec(opened.store)
            opened.store.db.execute(
                "DELETE FROM vec_items WHERE rowid = (SELECT min(id) FROM vec_texts)"
            )
    else:
        sql(vault, "DELETE FROM vec_items WHERE id = (SELECT min(id) FROM vec_texts)")
    report = doctor(vault)
    assert [p.repair for p in report.problems] == ["lore embed --rebuild"], report.to_dict()
    run_repair(report, env=server.env())
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
