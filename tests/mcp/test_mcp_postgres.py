"""`lore mcp --db postgresql://…` (issue 15): the URL names a database, never a path. The
stdio server answers from the vault's index in a real PostgreSQL server, and --print-config
hands the URL to the client as given (a file would be made absolute)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp_support import SAMPLE, call

from lore.cli import main

LORE = Path(sys.executable).parent / "lore"


@pytest.mark.anyio
async def test_the_stdio_server_answers_from_a_postgresql_index(
    tmp_path: Path, pg_url: str
) -> None:
    vault = tmp_path / "sample"
    shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".lore"))
    subprocess.run(
        [str(LORE), "index", str(vault), "--db", pg_url], check=True, capture_output=True
    )
    params = StdioServerParameters(
        command=str(LORE), args=["mcp", "--vault", str(vault), "--db", pg_url]
    )
    async with Client(params) as client:
        data = await call(client, "search", {"q": "JIRA-1234", "limit": 2})
        assert data["hits"] and "JIRA-1234" in json.dumps(data, ensure_ascii=False)
        status = await call(client, "status", {})
        assert status["db"].startswith("postgresql://")


def test_print_config_keeps_a_database_url(tmp_path: Path, pg_url: str) -> None:
    vault = tmp_path / "notes"
    vault.mkdir()
    result = CliRunner().invoke(
        main, ["mcp", "--print-config", "--vault", str(vault), "--db", pg_url]
    )
    assert result.exit_code == 0, result.output
    args = json.loads(result.stdout)["mcpServers"]["lore"]["args"]
    assert args[-2:] == ["--db", pg_url]
    assert "no index yet" not in result.stderr  # a server's index is not a file to look for


def test_print_config_makes_an_index_file_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "notes"
    vault.mkdir()
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["mcp", "--print-config", "--vault", str(vault), "--db", "idx.sqlite"]
    )
    assert result.exit_code == 0, result.output
    args = json.loads(result.stdout)["mcpServers"]["lore"]["args"]
    assert args[-2:] == ["--db", str(tmp_path / "idx.sqlite")]
    assert "lore index" in result.stderr
