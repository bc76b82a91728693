"""`lore mcp --db postgresql://…` (issue 15): the URL names a database, never a path:
--print-config hands the URL to the client as given (a file would be made absolute). The
servers themselves answer from PostgreSQL in every MCP test (test_mcp_transports.py's
stdio server with --db)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lore.cli import main

LORE = Path(sys.executable).parent / "lore"


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
