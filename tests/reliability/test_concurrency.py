"""Concurrency: one writer syncing while reader processes search; a second writer waits or
is told "index busy"; nobody corrupts anything.

Each sync rewrites a group of K notes to a new generation in one transaction, so a reader
that ever saw fewer than K hits, or hits of two generations, saw a half-written index.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import reliability_harness as h
from click.testing import CliRunner

import lore
import lore.store.sqlite as sqlite_mod
from lore.cli import main

K = 12


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    h.generate_vault(root, 60, seed=3)
    h.write_group(root, K, 0)
    with lore.open(root) as opened:
        opened.sync()
    return root


def test_readers_never_see_an_error_or_a_half_written_index(vault: Path) -> None:
    readers = h.start_readers(vault, 2, seconds=2.5, k=K)
    written = h.write_loop(vault, seconds=2.0, k=K)
    results = h.reader_results(readers)
    assert written["syncs"] >= 3, written
    for result in results:
        assert result["errors"] == 0, result["first_error"]
        assert result["torn"] == 0, result
        assert result["searches"] > 0  # readers kept working (their rate is bench/'s)
    with lore.open(vault) as opened:
        report = opened.doctor()
        assert report.ok, report.to_dict()
        hits = opened.search(h.MARKER, limit=50)
        assert {hit.frontmatter["gen"] for hit in hits} == {written["last_gen"]}


def test_second_writer_waits_for_the_first_and_nothing_is_lost(vault: Path) -> None:
    """Writer A stops inside its transaction; `lore index` (B) starts and waits on the
    lock; A is killed; B then takes the lock and indexes everything."""
    h.write_group(vault, K, 5)
    (vault / "notes" / "000" / "n00003.md").unlink()
    first = subprocess.Popen(
        [sys.executable, str(h.HERE), "pause-sync", str(vault), "3"],
        stdout=subprocess.PIPE,
        text=True,
        env=h.child_env(),
    )
    assert first.stdout is not None and first.stdout.readline().strip() == "paused"
    second = subprocess.Popen(
        h.lore_argv("index", str(vault), "--json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=h.child_env(),
    )
    # B has opened the index A is writing: its few reads before the write take milliseconds,
    # so a tenth of a second later it waits on the lock A holds, whatever the machine's load.
    assert h.wait_until_open(second, vault / ".lore" / "index.sqlite"), second.communicate()
    time.sleep(0.1)
    assert second.poll() is None, second.communicate()
    assert h.kill(first)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    report = json.loads(out)
    assert report["deleted"] == ["notes/000/n00003.md"] and len(report["changed"]) == K
    with lore.open(vault) as opened:
        assert opened.doctor().ok
        assert {hit.frontmatter["gen"] for hit in opened.search(h.MARKER, limit=50)} == {5}


_HOLD = """
import sys, apsw
con = apsw.Connection(sys.argv[1])
con.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
"""


def test_cli_writer_told_index_busy_in_one_line_and_index_untouched(
    vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    index_dump: Callable[[Path], dict[str, object]],
) -> None:
    db = vault / ".lore" / "index.sqlite"
    before = index_dump(db)
    h.write_group(vault, K, 9)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=h.child_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        monkeypatch.setattr(sqlite_mod, "BUSY_TIMEOUT_MS", 300)
        result = CliRunner().invoke(main, ["index", str(vault)])
        assert result.exit_code == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("lore: error: index busy"), lines
        assert str(db) in lines[0] and "try again" in lines[0]
        # A reader is not blocked by the writer's lock.
        searched = CliRunner().invoke(main, ["search", h.MARKER, "--vault", str(vault)])
        assert searched.exit_code == 0 and "group" in searched.stdout
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    assert index_dump(db) == before
    with lore.open(vault) as opened:
        assert opened.sync().changed
        assert {hit.frontmatter["gen"] for hit in opened.search(h.MARKER, limit=50)} == {9}
