"""Concurrency, on both backends: one writer syncing while reader processes search; a
second writer waits or is told "index busy"; nobody corrupts anything.

Each sync rewrites a group of K notes to a new generation in one transaction, so a reader
that ever saw fewer than K hits, or hits of two generations, saw a half-written index.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import reliability_harness as h
from backend_index import index_rows, index_url, shown_index
from backend_support import short_busy_wait, write_lock_held
from click.testing import CliRunner
from conftest import lore_namespace

import lore
from lore.cli import main
from lore.store.pg_names import lock_key

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

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
    assert waits_for_the_lock(second, vault), second.communicate()
    assert second.poll() is None, second.communicate()
    assert h.kill(first)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    report = json.loads(out)
    assert report["deleted"] == ["notes/000/n00003.md"] and len(report["changed"]) == K
    with lore.open(vault) as opened:
        assert opened.doctor().ok
        assert {hit.frontmatter["gen"] for hit in opened.search(h.MARKER, limit=50)} == {5}


def waits_for_the_lock(proc: subprocess.Popen[Any], vault: Path) -> bool:
    """True once `proc` waits for the vault's write lock. PostgreSQL says so itself (a
    session waiting on the vault's advisory lock); an SQLite writer is waiting once it has
    opened the index file: its few reads before the write take milliseconds, so a tenth of
    a second later it waits on the lock, whatever the machine's load."""
    url = index_url()
    if url is None:
        opened = h.wait_until_open(proc, vault / ".lore" / "index.sqlite")
        time.sleep(0.1)
        return opened
    import psycopg

    stop = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < stop and proc.poll() is None:
            waiting = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                " AND objid = %s",
                (lock_key(lore_namespace(vault)),),
            ).fetchone()
            if waiting and waiting[0]:
                return True
            time.sleep(0.02)
    return False


def test_cli_writer_told_index_busy_in_one_line_and_index_untouched(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = index_rows(vault)
    h.write_group(vault, K, 9)
    short_busy_wait(monkeypatch, 300)
    with write_lock_held(vault):
        result = CliRunner().invoke(main, ["index", str(vault)])
        assert result.exit_code == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("lore: error: index busy"), lines
        assert shown_index(vault) in lines[0] and "try again" in lines[0]
        # A reader is not blocked by the writer's lock.
        searched = CliRunner().invoke(main, ["search", h.MARKER, "--vault", str(vault)])
        assert searched.exit_code == 0 and "group" in searched.stdout
    assert index_rows(vault) == before
    with lore.open(vault) as opened:
        assert opened.sync().changed
        assert {hit.frontmatter["gen"] for hit in opened.search(h.MARKER, limit=50)} == {9}
