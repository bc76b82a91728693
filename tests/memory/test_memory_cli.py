"""The memory commands through click's CliRunner (in-process), their --json shapes and
error lines, plus one real run of the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backend_support import child_env
from click.testing import CliRunner, Result
from conftest import json_strict
from memory_support import write

from lore.cli import main

MakeVault = Callable[..., Path]
LORE = Path(sys.executable).parent / "lore"


def run(*args: str | Path, input: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def ok_json(*args: str | Path, input: str | None = None) -> Any:
    result = run(*args, "--json", input=input)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return json_strict(result.stdout)


def error_line(result: Result, *named: str) -> None:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lore: error: "), result.stderr
    for name in named:
        assert name in lines[0]


@pytest.fixture
def vault(make_vault: MakeVault, on_backend: str) -> Path:
    """The memory vault, indexed by `lore index` on SQLite or on PostgreSQL."""
    root = write(make_vault())
    assert run("index", root).exit_code == 0
    return root


def test_remember(vault: Path) -> None:
    data = ok_json(
        "remember", "部署窗口改到周日", "-e", "zs", "--source", "运维群", "--vault", vault
    )
    assert set(data) >= {"path", "anchor", "line", "date", "text", "pointer", "status", "trust"}
    assert data["entities"] == ["张三"] and data["created"] is True
    human = run("remember", "-", "--vault", vault, input="从标准输入来的结论\n")
    assert human.exit_code == 0
    assert human.stdout.startswith("remembered: memory/") and "claimed, unverified" in human.stdout
    error_line(run("remember", "x", "--status", "verified", "--vault", vault), "--source")
    bad = run("remember", "x", "--trust", "gossip", "--vault", vault)
    assert bad.exit_code == 2  # a usage error from click, named
    assert "--trust" in bad.stderr


def test_digest(vault: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "day.txt"
    transcript.write_text("A: 我们决定周五发版。\nB: 教训是要先写回滚脚本。\n", encoding="utf-8")
    data = ok_json("digest", transcript, "--date", "2026-11-19", "--vault", vault)
    assert data["created"] and data["path"] == "memory/2026-11-19.md"
    assert data["items"]["decisions"] == ["我们决定周五发版。"]
    again = run("digest", transcript, "--date", "2026-11-19", "--vault", vault)
    assert again.exit_code == 0 and again.stdout.startswith("nothing written:")
    from_stdin = ok_json("digest", "-", "--vault", vault, input="结论：stdin 也可以。\n")
    assert from_stdin["source"] == "stdin"
    error_line(run("digest", tmp_path / "missing.jsonl", "--vault", vault), "missing.jsonl")
    binary = tmp_path / "bad.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    error_line(run("digest", binary, "--vault", vault), "bad.jsonl", "UTF-8")


def test_lookup(vault: Path) -> None:
    data = ok_json("lookup", "Zhang", "San", "--vault", vault)
    assert data["level"] == "L1" and data["entity"]["name"] == "张三"
    assert set(data) >= {"level", "query", "found", "entity", "hits", "tried", "principal"}
    assert data["hits"][0]["kind"] == "entity"
    human = run("lookup", "zs", "--vault", vault)
    assert human.stdout.startswith("L1 (entity card): zs\n张三 (person) → entities/张三.md:1")
    assert "last activity: 2026-11-10 (mention: memory/2026-11-10.md:3)" in human.stdout
    missing = run("lookup", "不存在的东西 qwertyuiop", "--vault", vault)
    assert missing.exit_code == 0
    assert missing.stdout.startswith("L4 (not found)") and "L3 raw scan" in missing.stdout
    scoped = ok_json("lookup", "zebra-77", "--as", "agent", "--vault", vault)
    assert scoped["level"] == "L4" and scoped["principal"] == "agent"


def test_recent(vault: Path) -> None:
    data = ok_json("recent", "--days", "15", "--vault", vault)
    assert data["today"] == "2026-11-20" and data["since"] == "2026-11-06"
    assert {e["name"] for e in data["entities"]} == {"张三", "李四"}
    human = run("recent", "--days", "15", "--vault", vault).stdout
    assert "2026-11-10  张三  (mention: memory/2026-11-10.md)" in human
    error_line(run("recent", "--days", "0", "--vault", vault), "--days")


def test_context_and_snapshot(vault: Path) -> None:
    data = ok_json("context", "灰度", "回滚", "--budget", "1024", "--vault", vault)
    assert data["bytes"] <= 1024 and data["text"].startswith("# Context: 灰度 回滚")
    assert set(data) >= {"task", "text", "bytes", "budget", "items", "left_out"}
    human = run("context", "灰度", "--budget", "1024", "--vault", vault)
    assert human.stdout.startswith("# Context: 灰度\n")
    error_line(run("context", "x", "--budget", "5", "--vault", vault), "--budget")
    snap = ok_json("snapshot", "--vault", vault)
    assert snap["bytes"] <= 2048 and set(snap) >= {"open_items", "recent", "next_steps"}
    assert run("snapshot", "--vault", vault).stdout.startswith("# Snapshot (as of 2026-11-12)")


def test_check(vault: Path) -> None:
    result = run("check", "--vault", vault, "--json")
    assert result.exit_code == 1  # findings
    data = json_strict(result.stdout)
    assert data["ok"] is False and data["counts"]["conclusion-without-anchor"] == 1
    human = run("check", "--vault", vault)
    assert "MEMORY.md:7: conclusion-without-anchor:" in human.stdout
    assert human.stdout.rstrip().endswith("fixable with --fix")
    fixed = run("check", "--fix", "--vault", vault, "--json")
    assert json_strict(fixed.stdout)["fixed"][0]["path"] == "entities/李四.md"


def test_commands_have_help() -> None:
    for name in ("remember", "digest", "lookup", "recent", "context", "snapshot", "check"):
        result = run(name, "--help")
        assert result.exit_code == 0 and "--json" in result.stdout, name


@pytest.mark.skipif(not LORE.exists(), reason="console script not installed")
def test_real_process_remember_then_lookup(vault: Path) -> None:
    env = child_env()
    wrote = subprocess.run(
        [str(LORE), "remember", "子进程写入的结论 PX-42", "--vault", str(vault), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert wrote.returncode == 0, wrote.stderr
    anchor = json.loads(wrote.stdout)["pointer"]
    found = subprocess.run(
        [str(LORE), "lookup", "PX-42", "--vault", str(vault), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["level"] == "L2" and result["hits"][0]["anchor"] == anchor
