"""Upgrades: an index written by an older lore is migrated on open with its rows intact;
one written by a newer lore is refused with a clear message and left as it is.

tests/fixtures/index-v1.sqlite was written by lore 0.1.0 (schema 1, only m001_core) for the
vault in tests/fixtures/make_v1_index.py, which says how to build it again.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest
import reliability_harness as h
from backend_index import index_url, shown_index, sql
from click.testing import CliRunner
from conftest import lore_namespace, one_line_naming
from pg_support import schema_rows

import lore
import lore.store.sqlite as sqlite_mod
from lore.cli import main
from lore.store.pg_schema import SCHEMA_VERSION as PG_SCHEMA_VERSION
from lore.store.schema import MIGRATIONS, SCHEMA_VERSION
from lore.store.sqlite import TOKENIZER_VERSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
Dump = Callable[[Path], dict[str, Any]]


def _fixture_module() -> Any:
    spec = importlib.util.spec_from_file_location("make_v1_index", FIXTURES / "make_v1_index.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- an index of lore 0.1.0: the fixture is an SQLite file, so these run on SQLite (the
# same steps on PostgreSQL, from a schema of fewer migrations: test_pg_upgrade.py) --------


@pytest.fixture
def v1_vault(tmp_path: Path) -> Path:
    """The fixture's vault, same bytes and mtimes, with the schema-1 index in .lore/."""
    root = tmp_path / "vault"
    _fixture_module().write_vault(root)
    (root / ".lore").mkdir()
    shutil.copyfile(FIXTURES / "index-v1.sqlite", root / ".lore" / "index.sqlite")
    return root


def _meta(db: Path) -> dict[str, str]:
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {str(k): str(v) for k, v in con.execute("SELECT key, value FROM meta")}
    finally:
        con.close()


def test_the_fixture_is_a_schema_1_index() -> None:
    meta = _meta(FIXTURES / "index-v1.sqlite")
    assert meta["schema_version"] == "1" and SCHEMA_VERSION > 1
    assert MIGRATIONS[0][0] == "m001_core"


def test_an_older_index_is_migrated_on_open_with_its_rows_intact(
    v1_vault: Path, index_dump: Dump
) -> None:
    db = v1_vault / ".lore" / "index.sqlite"
    before = index_dump(db)
    assert len(before["notes"]) == 6 and before["fts"]
    with lore.open(v1_vault) as vault:
        assert vault.status().schema_version == SCHEMA_VERSION
        after = index_dump(db)
        assert after["meta"].pop("schema_version") == str(SCHEMA_VERSION)
        assert before["meta"].pop("schema_version") == "1"
        # The memory tables of notes indexed before are derived in full by the next sync.
        assert after["meta"].pop("memory_stale") == "1"
        # Tables of later migrations are there, empty (a v1 index has none of them).
        new_tables = after.pop("memory", {})
        assert not before.pop("memory", {}) and all(rows == [] for rows in new_tables.values())
        assert after == before  # every row of the old index, as it was
        # The old rows serve at once; the next sync re-derives every note, because this
        # lore derives notes differently (tokenizer_version), never mixing old and new rows.
        old_rows = vault.search("去重")
        assert [h.path for h in old_rows][:1] == ["rules/客户去重规则 v2.md"]
        assert any("older lore" in n and "lore index" in n for n in old_rows.notices)
        assert after["meta"]["tokenizer_version"] == "1"
        report = vault.sync()
        assert len(report.added) == 6 and not report.changed and not report.deleted
        assert any(
            f"(version {TOKENIZER_VERSION}, the index had 1)" in n and "derived again" in n
            for n in report.notices
        ), report.notices  # "added 6" with nothing new in the vault, said why
        assert vault.sync().notices == []
        assert _meta(db)["tokenizer_version"] == TOKENIZER_VERSION
        assert vault.sync().wrote is False
        assert vault.search("去重").notices == []
        assert "memory_stale" not in _meta(db)
        memory = index_dump(db)["memory"]
        assert memory["entity_defs"] and memory["entity_mentions"]
        doctor = vault.doctor()
        assert doctor.ok, doctor.to_dict()
        assert doctor.schema["version"] == SCHEMA_VERSION
    assert _meta(db)["schema_version"] == str(SCHEMA_VERSION)


def test_an_upgraded_index_after_a_sync_equals_a_fresh_one(v1_vault: Path, tmp_path: Path) -> None:
    with lore.open(v1_vault) as vault:
        vault.sync()
    fresh = tmp_path / "fresh.sqlite"
    with lore.open(v1_vault, db=fresh) as vault:
        vault.sync()
    upgraded = h.full_dump(v1_vault / ".lore" / "index.sqlite")
    assert h.diff_summary(h.full_dump(fresh), upgraded) == "equal"


def test_a_failing_migration_leaves_the_old_index_as_it_was(
    v1_vault: Path, index_dump: Dump, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = v1_vault / ".lore" / "index.sqlite"
    before = index_dump(db)

    def m999_broken(con: Any) -> None:
        con.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration m999 failed halfway")

    monkeypatch.setattr(sqlite_mod, "MIGRATIONS", [*MIGRATIONS, ("m999_broken", m999_broken)])
    monkeypatch.setattr(sqlite_mod, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(RuntimeError, match="m999"):
        lore.open(v1_vault)
    assert index_dump(db) == before  # still schema 1, no table of any migration kept
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    tables = {str(n) for (n,) in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    assert "half_done" not in tables and "semantic_state" not in tables
    monkeypatch.undo()
    with lore.open(v1_vault) as vault:
        assert vault.status().schema_version == SCHEMA_VERSION


# -- an index of a newer lore, or with no readable version: on both backends --------------


@pytest.fixture
def newer_index(tmp_path: Path, on_backend: str) -> Path:
    """An index of this vault (on the test's backend) whose schema_version says a newer
    lore wrote it, with a table this lore does not know."""
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("alpha")
    with lore.open(root) as vault:
        vault.sync()
        known = int(vault.store.get_meta("schema_version") or 0)
    sql(root, "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(known + 7),))
    sql(root, "CREATE TABLE from_the_future (x integer)")
    return root


def known_version(backend: str) -> int:
    """The schema version this lore writes on `backend` (each counts its own migrations)."""
    return SCHEMA_VERSION if backend == "sqlite" else PG_SCHEMA_VERSION


def index_state(root: Path) -> object:
    """The index as stored, read without lore: the .lore files' bytes, or every row of the
    vault's schema."""
    url = index_url()
    if url is not None:
        return schema_rows(url, lore_namespace(root))
    return {p.name: p.read_bytes() for p in sorted((root / ".lore").iterdir())}


def test_a_newer_index_is_refused_and_left_alone(newer_index: Path, backend: str) -> None:
    state = index_state(newer_index)
    with pytest.raises(lore.SchemaError) as caught:
        lore.open(newer_index)
    message = str(caught.value)
    known = known_version(backend)
    one_line_naming(message, shown_index(newer_index), f"schema {known + 7}", str(known))
    assert "newer lore" in message and "upgrade lore" in message
    assert index_state(newer_index) == state


@pytest.mark.parametrize(
    "args", [["index"], ["rebuild"], ["search", "alpha"], ["doctor"], ["status"], ["show", "a.md"]]
)
def test_a_newer_index_is_refused_by_every_command(newer_index: Path, args: list[str]) -> None:
    state = index_state(newer_index)
    result = CliRunner().invoke(main, [*args, "--vault", str(newer_index)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lore: error: "), result.stderr
    assert "newer lore" in lines[0] and shown_index(newer_index) in lines[0]
    assert index_state(newer_index) == state


def test_a_newer_index_is_refused_by_the_real_command(newer_index: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "lore", "search", "alpha", "--vault", str(newer_index)],
        capture_output=True,
        text=True,
        env=h.child_env(),
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("lore: error: ") and "newer lore" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE meta SET value = 'abc' WHERE key = 'schema_version'",
        "UPDATE meta SET value = '' WHERE key = 'schema_version'",
        "DELETE FROM meta WHERE key = 'schema_version'",
    ],
    ids=["not a number", "empty", "missing"],
)
def test_an_unreadable_schema_version_is_a_damaged_index(newer_index: Path, statement: str) -> None:
    sql(newer_index, statement)
    result = CliRunner().invoke(main, ["search", "alpha", "--vault", str(newer_index)])
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert line.startswith("lore: error: ") and "\n" not in line
    assert shown_index(newer_index) in line and "lore index" in line
