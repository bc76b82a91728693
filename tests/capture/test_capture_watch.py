"""`lore watch`: the debounce rule, the watcher in-process, and a real `lore watch` process
syncing edits, creations, renames and deletions while another process keeps searching."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import write_files

import lore
from lore.watch import Debouncer, WatchBatch, Watcher

MakeVault = Callable[..., Path]
LORE = Path(sys.executable).parent / "lore"


def test_debounce_waits_for_quiet() -> None:
    d = Debouncer(debounce=0.5, max_wait=10.0)
    assert not d.due(0.0) and d.wait_time(0.0, idle=1.0) == 1.0
    d.change(1.0)
    d.change(1.3)
    assert not d.due(1.7)
    assert d.wait_time(1.7, idle=1.0) == pytest.approx(0.1)
    assert d.due(1.8)
    d.reset()
    assert not d.pending and not d.due(5.0)


def test_debounce_gives_up_waiting_after_max_wait() -> None:
    d = Debouncer(debounce=0.5, max_wait=2.0)
    for tick in range(25):
        now = tick * 0.1  # a change every 0.1 s: never quiet
        d.change(now)
        if d.due(now):
            break
    assert now == pytest.approx(2.0)


def _notes(n: int) -> dict[str, str]:
    return {
        f"notes/n{i:03}.md": f"# Note {i}\n\nfiller text number {i} about topic{i % 7}\n"
        for i in range(n)
    }


def test_watcher_in_process_reports_renames_and_new_problems_once(
    make_vault: MakeVault,
) -> None:
    vault_path = make_vault(_notes(5), name="w")
    batches: list[WatchBatch] = []
    with lore.open(vault_path) as vault:
        watcher = Watcher(vault, debounce=0.05, interval=0.05, backend="poll")
        seen = threading.Event()

        def collect(batch: WatchBatch) -> None:
            batches.append(batch)
            seen.set()

        thread = threading.Thread(target=lambda: watcher.run(collect, timeout=20))
        thread.start()
        try:

            def step(action: Callable[[], None]) -> WatchBatch:
                seen.clear()
                action()
                assert seen.wait(10), "no sync after the change"
                return batches[-1]

            assert seen.wait(10) and batches[0].initial and len(batches[0].added) == 5
            renamed = step(lambda: os.rename(vault_path / "notes/n001.md", vault_path / "r.md"))
            assert renamed.renamed == [("notes/n001.md", "r.md")]
            assert renamed.added == [] and renamed.deleted == []
            bad = step(lambda: write_files(vault_path, {"bad.md": b"caf\xe9"}))
            assert [s.path for s in bad.skipped] == ["bad.md"]
            # The broken file is not reported again with every later sync.
            later = step(lambda: write_files(vault_path, {"notes/n002.md": "# Two\n\nedited\n"}))
            assert later.changed == ["notes/n002.md"] and later.skipped == []
        finally:
            watcher.stop()
            thread.join(10)
    assert not thread.is_alive()
    assert watcher.source_name == "polling"


class WatchProcess:
    """A real `lore watch` subprocess whose stdout lines are collected by a thread."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [str(LORE), "watch", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        threading.Thread(target=lambda: [self.lines.put(x) for x in stdout], daemon=True).start()

    def expect(self, *fragments: str, timeout: float = 15.0) -> str:
        """Wait for an output line containing every fragment; return it."""
        deadline = time.monotonic() + timeout
        for line in self.seen:
            if all(f in line for f in fragments):
                return line
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(line)
            if all(f in line for f in fragments):
                return line
        raise AssertionError(f"no line with {fragments} in {self.seen}")


class Searching:
    """`lore search --json` run in a loop in another process until stopped."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.runs: list[int] = []
        self.threads: list[threading.Thread] = []

    def start(self, vault: Path) -> None:
        def loop() -> None:
            while not self.stop.is_set():
                proc = subprocess.run(
                    [str(LORE), "search", "--json", "filler text", "--vault", str(vault)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                self.runs.append(proc.returncode)
                if proc.returncode != 0:
                    self.errors.append(proc.stderr)
                else:
                    json.loads(proc.stdout)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        self.threads.append(thread)

    def wait_for_runs(self, count: int) -> None:
        """Until `count` searches have ended: on a loaded machine a search process takes
        seconds, so the watcher may have synced everything before the third one ends.
        Waiting on the count (not on a clock) holds however slow the machine is."""
        deadline = time.monotonic() + 300  # only against a hang; never reached when well
        while len(self.runs) < count and time.monotonic() < deadline:
            time.sleep(0.05)


@pytest.fixture
def searcher() -> Iterator[Searching]:
    searching = Searching()
    yield searching
    searching.stop.set()
    for thread in searching.threads:
        thread.join(60)
    assert searching.errors == []
    assert len(searching.runs) >= 3, "the searching process barely ran"


@pytest.mark.parametrize("backend", ["events", "poll"])
def test_watch_process_syncs_changes_while_another_process_searches(
    make_vault: MakeVault, searcher: Searching, backend: str
) -> None:
    vault = make_vault(_notes(200), name="live", index=True)
    args = [str(vault), "--debounce", "0.2", "--interval", "0.1", "--timeout", "60"]
    watch = WatchProcess(args + (["--poll"] if backend == "poll" else []))
    try:
        watch.expect("index up to date", "200 notes")
        searcher.start(vault)
        (vault / "notes/n001.md").write_text("# Note 1\n\nrewritten filler\n", encoding="utf-8")
        watch.expect("changed notes/n001.md")
        write_files(vault, {"notes/new.md": "# New\n\nfreshly written zebra filler\n"})
        watch.expect("added notes/new.md")
        os.rename(vault / "notes/n002.md", vault / "notes/moved.md")
        watch.expect("renamed notes/n002.md -> notes/moved.md")
        os.remove(vault / "notes/n003.md")
        watch.expect("deleted notes/n003.md")
        # A burst of changes to many files is synced as they settle.
        for i in range(10, 40):
            (vault / f"notes/n{i:03}.md").write_text(f"# Burst {i}\n\nfiller\n", encoding="utf-8")
        watch.expect("changed notes/n039.md")
        # The index the searching process reads has every change.
        found = subprocess.run(
            [str(LORE), "search", "--json", "zebra", "--vault", str(vault)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert [h["path"] for h in json.loads(found.stdout)["hits"]] == ["notes/new.md"]
        searcher.wait_for_runs(3)  # three searches ended while the watcher ran
    finally:
        watch.proc.send_signal(signal.SIGINT)
        _out, err = watch.proc.communicate(timeout=20)
    assert watch.proc.returncode == 0, err
    assert "stopped watching" in err
    assert ("file-system events" if backend == "events" else "polling") in err


def test_watch_once_and_sigterm(make_vault: MakeVault) -> None:
    vault = make_vault({}, name="once", index=True)  # `lore index` made it; notes come after
    write_files(vault, _notes(3))
    watch = WatchProcess([str(vault), "--once", "--json", "--debounce", "0.1", "--timeout", "60"])
    first = json.loads(watch.expect('"initial":true'))
    assert first["added"] == sorted(_notes(3))
    write_files(vault, {"x.md": "# X\n\nnew\n"})
    batch = json.loads(watch.expect('"initial":false'))
    assert batch["added"] == ["x.md"] and batch["error"] is None
    assert watch.proc.wait(20) == 0  # --once: exits by itself after that batch

    again = WatchProcess([str(vault), "--debounce", "0.1"])
    again.expect("index up to date")
    again.proc.send_signal(signal.SIGTERM)
    _out, err = again.proc.communicate(timeout=20)
    assert again.proc.returncode == 0 and "stopped watching" in err


def test_a_vanished_vault_is_not_synced_as_all_deleted(
    make_vault: MakeVault, tmp_path: Path
) -> None:
    import shutil

    vault_path = make_vault(_notes(3), name="gone", index=True)
    batches: list[WatchBatch] = []
    with lore.open(vault_path, db=tmp_path / "outside.sqlite") as vault:
        watcher = Watcher(vault, debounce=0.05, interval=0.05, backend="poll")
        assert watcher._sync(initial=True).added  # noqa: SLF001 - one step of the loop
        shutil.rmtree(vault_path)
        batches = [watcher._sync(initial=False) for _ in range(3)]  # noqa: SLF001
        assert vault.status().notes == 3  # nothing was deleted from the index
    assert batches[0].error is not None and "is not there" in batches[0].error
    assert [b.error for b in batches[1:]] == [None, None]  # told once, not at every retry
    assert not any(b.deleted for b in batches)
