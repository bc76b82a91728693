"""`lore status` and `lore doctor` name the backend and its versions (issue 15): the
PostgreSQL server's and pgvector's as the server reports them, or SQLite's and
sqlite-vec's; a principal's status names none of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from conftest import build_vault
from pg_support import PgServer

import lore

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
    return {"backend": "postgresql", "server": server.version, "pgvector": server.vector_version}


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
