"""What a cold `lore search` process loads and builds: real runs (the console script, or
the CLI in a fresh interpreter) asserting on the modules and caches of the process, never on
its time (bench.realvault measures that)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import clean_env, lore_process
from conftest import write_files


def test_a_chinese_search_process_loads_no_keyword_extraction(tmp_path: Path) -> None:
    """A one-shot `lore search` pays for every module it imports: a Chinese query needs a
    segmenter, never jieba's keyword (analyse) or part-of-speech (posseg) modules."""
    vault = tmp_path / "zh"
    write_files(
        vault, {"a.md": "# 编程\n\nAI 编程助手的使用笔记。\n", "b.md": "# 其他\n\n无关。\n"}
    )
    assert lore_process("index", vault, cwd=tmp_path).returncode == 0
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lore", "search", "AI 编程", "--json"],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=vault,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [h["path"] for h in json.loads(done.stdout)["hits"]][:1] == ["a.md"]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "lore.retrieve.query" in imported  # the measurement saw the search path
    assert "lore.derive.segment" in imported  # a segmenter, for the Chinese word
    assert not {m for m in imported if m.startswith(("jieba.analyse", "jieba.posseg"))}


# Runs `lore search` as the console script does, then writes the names of every module the
# process imported (sys.modules) to the file named by its first argument.
SEARCH_PROBE = """
import json, sys
from lore.cli import main
try:
    main(sys.argv[2:], prog_name="lore")
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(sorted(sys.modules), out)
sys.exit(code)
"""
# Made lazy for a one-shot search: other commands, the config parser (no config file here),
# LLM planning, the memory result types and ranking, temp-file and logging machinery, jieba's
# package and the whole rjieba dictionary (a warm cache of it is compiled in the user cache
# folder), and what only the interest map and date filters use (statistics, hashing, calendar);
# the row types a search never reads (the sync's and `lore show`'s, the interest map's, the
# tokens', `lore migrate`'s, the LLM fields' sync rows) and the [memory] and [interest]
# settings sections (issue 12: each frozen dataclass costs a cold process about a ms); the
# sync's result types and --explain's, `status`'s, the `Settings` of every section and the
# semantic layer's rows; the Markdown reader's line, block, tag and date patterns (a search
# uses the inline ones) and memory's card readers and mention scanner (no entity cards here);
# the store's and the providers' Protocols (annotations only) and shlex (messages only).
NOT_ON_THE_SEARCH_PATH = {
    "jieba",
    "rjieba",
    "tomllib",
    "secrets",
    "logging",
    "tempfile",
    "yaml",
    "lore.index.llm_cache",
    "lore.index.sync",
    "lore.memory.model",
    "lore.memory.recall",
    "statistics",
    "hashlib",
    "calendar",
    "lore.store.note_rows",
    "lore.store.interest_rows",
    "lore.store.token_rows",
    "lore.store.transfer_rows",
    "lore.store.note_llm_rows",
    "lore.memory.settings",
    "lore.interest.settings",
    "lore.model.sync",
    "lore.model.explain",
    "lore.vault.reports",
    "lore.settings",
    "lore.store.vector_rows",
    "lore.ingest.markdown",
    "lore.derive.summary",
    "lore.memory.markdown",
    "lore.memory.mentions",
    "lore.store.base",
    "lore.providers.base",
    "shlex",
}


def _probe(probe: str, vault: Path, query: str, out: Path, env: dict[str, Any]) -> tuple[str, Any]:
    """`lore search QUERY --json` in `vault` under `probe`: its output, and what the probe
    wrote to `out` (JSON)."""
    done = subprocess.run(
        [sys.executable, "-c", probe, str(out), "search", query, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=vault,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(out.read_text(encoding="utf-8"))


def _search_modules(
    vault: Path, query: str, out: Path, env: dict[str, Any]
) -> tuple[str, set[str]]:
    output, modules = _probe(SEARCH_PROBE, vault, query, out, env)
    return output, set(modules)


@pytest.mark.parametrize("query", ["AI 编程", "coding assistant"])
def test_a_search_process_imports_only_the_search_path(tmp_path: Path, query: str) -> None:
    vault = tmp_path / "v"
    write_files(
        vault,
        {
            "a.md": "# AI 编程\n\nAI 编程助手 (coding assistant) 的使用笔记。\n",
            "b.md": "# 其他\n\n无关的内容。\n",
        },
    )
    assert lore_process("index", vault, cwd=tmp_path).returncode == 0
    _search_modules(vault, query, tmp_path / "first.json", clean_env())  # may compile the cache
    output, modules = _search_modules(vault, query, tmp_path / "modules.json", clean_env())
    assert [h["path"] for h in json.loads(output)["hits"]][:1] == ["a.md"]
    assert "lore.retrieve.query" in modules  # the probe saw the search path
    assert not NOT_ON_THE_SEARCH_PATH & modules
    assert {m for m in modules if m.startswith("lore.cli.")} == {
        "lore.cli.search",
        "lore.cli.query_args",
    }
    if query == "AI 编程":
        assert "rjieba.rjieba" in modules  # the engine, without its default dictionary

    # The same output as with the whole dictionary (a cache folder that cannot be made).
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    env = {**clean_env(), "XDG_CACHE_HOME": str(blocker)}
    whole, whole_modules = _search_modules(vault, query, tmp_path / "whole.json", env)
    assert whole == output
    assert ("rjieba" in whole_modules) == (query == "AI 编程")


# Runs `lore search`, then writes what of the CJK machinery the process built (by the caches
# that hold it) to the file named by its first argument.
CJK_PROBE = """
import json, sys
from lore.cli import main
try:
    main(sys.argv[2:], prog_name="lore")
except SystemExit:
    pass
from lore.derive import fold, tokenize
built = {
    "cjk pattern": tokenize._run_or_word.cache_info().currsize,
    "fold tables": fold._tables.cache_info().currsize,
}
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(built, out)
"""


@pytest.mark.parametrize("query", ["coding assistant", "编程"])
def test_a_search_that_reads_no_cjk_builds_none_of_its_machinery(
    tmp_path: Path, query: str
) -> None:
    # The tokenizer's CJK pattern (its class costs ~1 ms per copy to compile) and the fold
    # tables are made for a text holding CJK only: an English vault's search needs neither.
    vault = tmp_path / "v"
    write_files(
        vault,
        {
            "a.md": "# Coding assistant\n\nNotes on the coding assistant (v2), café-style.\n",
            "b.md": "# Other\n\nNothing to see.\n",
        },
    )
    assert lore_process("index", vault, cwd=tmp_path).returncode == 0
    output, built = _probe(CJK_PROBE, vault, query, tmp_path / "built.json", clean_env())
    if query == "coding assistant":
        assert [h["path"] for h in json.loads(output)["hits"]][:1] == ["a.md"]
        assert built == {"cjk pattern": 0, "fold tables": 0}
    else:  # a Chinese query is cut by the CJK pattern
        assert built["cjk pattern"] == 1
