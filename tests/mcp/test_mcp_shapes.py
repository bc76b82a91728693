"""One shape per result (issue 14): the MCP `search` tool returns what `lore search --json`
prints, hit for hit, and `read_note` returns the note's derived tags."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from backend_support import child_env
from conftest import build_vault
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    Sample,
    call,
    connect,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

import lore

pytestmark = pytest.mark.anyio


def cli_search(vault: Path, query: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "lore", "search", query, "--limit", "5", "--json"],
        cwd=vault,
        env=child_env(LORE_HOME=str(vault.parent / "home")),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


@pytest.mark.parametrize("query", ["客户去重规则 v2", "dedupe rule"])
async def test_mcp_search_hits_are_the_cli_json_hits(
    sample: Sample, tmp_path: Path, query: str
) -> None:
    vault = sample.copy(tmp_path)
    printed = cli_search(vault, query)
    async with connect(vault) as client:
        answered = await call(client, "search", {"query": query, "limit": 5})
    assert printed["hits"] and answered["hits"] == printed["hits"]
    for key in ("query", "mode", "matched", "reason", "degraded"):
        assert answered[key] == printed[key], key
    assert set(answered) == set(printed)
    top = answered["hits"][0]
    assert top["anchor"] == f"{top['path']}#{top['heading']}" and "frontmatter" in top


@pytest.mark.usefixtures("on_backend")
async def test_read_note_returns_the_derived_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LORE_HEURISTIC_TAGS", "on")
    body = "客户主数据去重规则：手机号、邮箱、证件号三者任一相同即视为同一客户。\n" * 3
    vault = build_vault(
        tmp_path / "v",
        {"rules/dedupe.md": f"---\ntitle: 去重规则\ntags: [规则]\n---\n# 去重规则\n\n{body}"},
        index=False,
    )
    with lore.open(vault) as opened:
        opened.sync()
        derived = [t["tag"] for t in opened.note("rules/dedupe.md")["derived_tags"]]
    assert derived  # the heuristic tagger named some
    async with connect(vault) as client:
        note = await call(client, "read_note", {"path": "rules/dedupe.md"})
    assert note["derived_tags"] == derived
    assert note["tags"] == ["规则"]
