"""Issue 13, class 3: one file cannot stop the whole vault. Every per-file step is bounded
and isolated: out-of-range stat values, special files (FIFOs) named like notes or swapped
in during a sync, a note or folder replaced by a symlink between the scan and the read,
and pathological `.loreignore` lines (see tests/unit/test_ignore.py for the matcher)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import indexed_paths, one_line_naming

import lore
from lore.cli import main

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

SECRET = "OUTSIDE-SECRET-5d1c"
YEAR_2300_NS = 10_413_792_000 * 10**9  # 2300-01-01, past the 64-bit ns limit (2262)


@contextmanager
def unblocking(fifo: Path) -> Iterator[None]:
    """If the code under test wrongly waits on `fifo`, open its other end after a while so
    the test fails on its assertions instead of hanging. Never fires when lore is right."""

    def release() -> None:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass

    timer = threading.Timer(20.0, release)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def reason(report: lore.SyncReport, path: str) -> str:
    found = [s.reason for s in report.skipped if s.path == path]
    assert len(found) == 1, report.skipped
    one_line_naming(found[0])
    return found[0]


def test_a_note_dated_after_2262_is_indexed_and_stops_nothing(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    root = make_vault({"future.md": "# Future\nquasarword\n", "plain.md": "plain words\n"})
    os.utime(root / "future.md", ns=(YEAR_2300_NS, YEAR_2300_NS))
    os.utime(root / "plain.md", ns=(-(2**62), -(2**62)))  # 1823, and before
    vault = open_vault(root)
    report = vault.sync()
    assert sorted(report.added) == ["future.md", "plain.md"] and report.skipped == []
    assert [h.path for h in vault.search("quasarword")] == ["future.md"]
    assert vault.sync().wrote is False  # the clamped stat matches itself next time
    (root / "plain.md").write_text("plain words changed\n")
    assert vault.sync().changed == ["plain.md"]


def test_a_fifo_named_like_a_note_is_skipped_with_a_reason(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    root = make_vault({"good.md": "good words\n"})
    os.mkfifo(root / "pipe.md")
    with unblocking(root / "pipe.md"):
        report = open_vault(root).sync()
    assert "FIFO" in reason(report, "pipe.md")
    assert report.added == ["good.md"]


def test_ingest_of_a_folder_or_file_never_waits_on_a_fifo(
    make_vault: Callable[..., Path], tmp_path: Path
) -> None:
    root = make_vault({}, index=True)
    source = tmp_path / "source"
    source.mkdir()
    (source / "real.md").write_text("# Real\nreal words\n")
    os.mkfifo(source / "pipe.md")
    os.mkfifo(source / "pipe.txt")
    with unblocking(source / "pipe.md"), unblocking(source / "pipe.txt"):
        folder = CliRunner().invoke(main, ["ingest", str(source), "--vault", str(root), "--json"])
        single = CliRunner().invoke(
            main, ["ingest", str(source / "pipe.txt"), "--vault", str(root)]
        )
    assert folder.exit_code == 0, folder.output
    report = json.loads(folder.stdout)
    assert [a["title"] for a in report["added"]] == ["Real"]
    reasons = sorted(s["reason"] for s in report["skipped"])
    assert reasons == ["is a FIFO (named pipe), not a regular file; skipped"] * 2
    assert single.exit_code == 1
    one_line_naming(single.stderr.strip(), "pipe.txt", "FIFO")


def _swap_during_sync(vault: lore.Vault, path: str, swap: Callable[[], None]) -> lore.SyncReport:
    """Sync, doing `swap` right before the sync reads `path` (after the scan saw it)."""

    def progress(_done: int, _total: int, current: str) -> None:
        if current == path:
            swap()

    return vault.sync(progress=progress)


def test_a_fifo_swapped_in_during_a_sync_does_not_block_it(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    root = make_vault({"a.md": "alpha words\n", "b.md": "beta words\n"})
    vault = open_vault(root)
    vault.sync()
    (root / "b.md").write_text("beta words, edited\n")

    def to_fifo() -> None:
        (root / "b.md").unlink()
        os.mkfifo(root / "b.md")

    with unblocking(root / "b.md"):
        report = _swap_during_sync(vault, "b.md", to_fifo)
    assert "FIFO" in reason(report, "b.md") and "indexed version is kept" in reason(report, "b.md")
    assert [h.path for h in vault.search("beta")] == ["b.md"]  # the old version stays


def test_a_note_replaced_by_a_symlink_after_the_scan_is_not_followed(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}\n")
    root = make_vault({"note.md": "ordinary words\n", "notes/deep.md": "deep words\n"})
    vault = open_vault(root)

    def note_to_link() -> None:
        (root / "note.md").unlink()
        (root / "note.md").symlink_to(outside / "secret.md")

    report = _swap_during_sync(vault, "note.md", note_to_link)
    assert "symbolic link" in reason(report, "note.md")

    (root / "notes" / "deep.md").write_text("deep words, edited\n")
    (outside / "deep.md").write_text(f"{SECRET} in a folder\n")

    def folder_to_link() -> None:
        (root / "notes").rename(tmp_path / "moved")
        (root / "notes").symlink_to(outside, target_is_directory=True)

    report = _swap_during_sync(vault, "notes/deep.md", folder_to_link)
    assert "symbolic link" in reason(report, "notes/deep.md")
    assert list(vault.search(SECRET)) == []
    assert indexed_paths(vault) == ["notes/deep.md"]  # its old version, kept
    assert all(SECRET not in body for (body,) in vault.store.query("SELECT body FROM notes"))


def test_a_symlink_to_a_note_inside_the_vault_is_still_read(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    root = make_vault({"real/target.md": "# Target\nlinkedword\n"})
    (root / "alias.md").symlink_to(root / "real" / "target.md")
    vault = open_vault(root)
    report = vault.sync()
    assert sorted(report.added) == ["alias.md", "real/target.md"] and report.skipped == []
    assert sorted(h.path for h in vault.search("linkedword")) == ["alias.md", "real/target.md"]


def test_pathological_ignore_lines_are_bounded_and_reported(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    stars = "*a" * 60 + "*b.md"  # exponential for a backtracking matcher
    root = make_vault(
        {
            ".loreignore": f"{stars}\nbroken\\\n[z-a]\n{'x' * 5000}\n",
            "a" * 200 + ".md": "not ignored\n",
            "a" * 70 + "b.md": "ignored by the star line\n",
            "kept.md": "kept words\n",
        }
    )
    report = open_vault(root).sync()
    assert sorted(report.added) == ["a" * 200 + ".md", "kept.md"]
    problems = [s.reason for s in report.skipped if s.path == ".loreignore"]
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 3", "line 4"]
    for problem in problems:
        one_line_naming(problem, "not used")


@pytest.mark.parametrize("kind", ["fifo", "huge"])
def test_an_ignore_file_that_is_a_fifo_or_huge_is_bounded(
    kind: str, make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    root = make_vault({"a.md": "alpha\n", "skip.md": "skipped\n"})
    ignore = root / ".loreignore"
    if kind == "fifo":
        os.mkfifo(ignore)
    else:
        ignore.write_text("skip.md\n" + "#" * (2 * 1024 * 1024) + "\n")
    with unblocking(ignore):
        report = open_vault(root).sync()
    problem = [s.reason for s in report.skipped if s.path == ".loreignore"]
    assert len(problem) == 1
    if kind == "fifo":
        assert "FIFO" in problem[0] and sorted(report.added) == ["a.md", "skip.md"]
    else:
        assert "only its head is used" in problem[0] and report.added == ["a.md"]
