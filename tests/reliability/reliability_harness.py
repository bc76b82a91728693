"""Crash and concurrency harness shared by tests/reliability (a few seeds) and
bench/reliability.py (many). Plain Python, no pytest: real vaults on disk, real `lore`
subprocesses killed with SIGKILL, and a full dump of what an index holds to compare states.

A crash scenario: a vault in state A is indexed and the index saved ("old"); the files are
then changed to state B, and a copy of the old index is synced to B in-process ("new").
Every trial puts the old index back, runs a real sync in a subprocess, kills it, and checks:
the index opens, holds exactly the old or the new state (the semantic layer, refreshed
after the sync transaction, may lag behind a new core: doctor says so), `lore doctor`
reports exactly that, and the next sync ends in the new state with nothing lost.

Also runnable: `python reliability_harness.py pause-sync VAULT STEP [rebuild]` syncs VAULT
and stops (prints "paused", sleeps) when the sync's progress callback reaches STEP, for the
parent to kill it there; `... search-loop VAULT SECONDS QUERY N` is a reader process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
from vault_state import (
    core_of,
    diff_summary,
    full_dump,
    generate_vault,
    mutate_vault,
    semantic_of,
)

HERE = Path(__file__).resolve()

# -- subprocesses ------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    """The environment of a lore subprocess: no LORE_* from the caller but LORE_DB (the
    index a test on PostgreSQL is given), this lore first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LORE_") or k == "LORE_DB"}
    src = str(HERE.parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return env


def lore_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "lore", *args]


def kill(proc: subprocess.Popen[Any]) -> bool:
    """SIGKILL `proc`; True if it was still running (the kill landed)."""
    running = proc.poll() is None
    if running:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return running


# -- a crash scenario --------------------------------------------------------------------


@dataclass
class Scenario:
    root: Path
    db: Path
    old_index: bytes  # the index file of state A (no WAL: closed cleanly)
    old: dict[str, Any]
    new: dict[str, Any]
    old_doctor: tuple[list[str], list[str], list[str]]  # missing, stale, orphaned
    notes: int
    changes: dict[str, int] = field(default_factory=dict)
    keywords: bool = True  # derive keyword tags: the semantic layer runs after each sync

    @property
    def settings(self) -> dict[str, str]:
        return {"heuristic_tags": "on"} if self.keywords else {}

    def env(self) -> dict[str, str]:
        """A lore subprocess's environment, with this scenario's settings."""
        return {**child_env(), **({"LORE_HEURISTIC_TAGS": "on"} if self.keywords else {})}

    def restore(self) -> None:
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{self.db}{suffix}").unlink(missing_ok=True)
        if self.old_index:
            self.db.write_bytes(self.old_index)
        else:
            self.db.unlink(missing_ok=True)


def prepare(
    root: Path, n: int, seed: int, fraction: float, *, fresh: bool = False, keywords: bool = True
) -> Scenario:
    """Build the vault, the old index and the reference new state. With `fresh` the old
    state is "no index at all" (a first sync is killed) and B = A. With `keywords` (the
    default) keyword tags are derived, so the semantic layer runs after every sync and a
    kill can land between its transaction and the sync's."""
    import lore

    settings = {"heuristic_tags": "on"} if keywords else {}

    generate_vault(root, n, seed)
    db = root / ".lore" / "index.sqlite"
    changes: dict[str, int] = {}
    if fresh:
        old_index = b""
    else:
        with lore.open(root, **settings) as vault:
            vault.sync()
        old_index = db.read_bytes()
        changes = mutate_vault(root, seed, fraction)
    work = root.parent / f".{root.name}-reference"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    old_db, new_db = work / "old.sqlite", work / "new.sqlite"
    if old_index:
        old_db.write_bytes(old_index)
    with lore.open(root, db=old_db, **settings) as vault:  # when fresh: an empty index
        d = vault.doctor()
        old_doctor = (d.missing, d.stale, d.orphaned)
    old = full_dump(old_db)
    shutil.copyfile(old_db, new_db)
    with lore.open(root, db=new_db, **settings) as vault:
        vault.sync()
    new = full_dump(new_db)
    shutil.rmtree(work)
    scenario = Scenario(root, db, old_index, old, new, old_doctor, n, changes, keywords)
    scenario.restore()
    return scenario


class CrashCheckFailed(AssertionError):
    pass


def verify(sc: Scenario) -> str:
    """Check the index after a kill; returns "old", "new" or "new, semantic pending".
    Raises CrashCheckFailed saying what is wrong."""
    import lore

    with lore.open(sc.root, **sc.settings) as vault:  # recovers the WAL, migrates a fresh file
        dump = full_dump(sc.db)
        report = vault.doctor()
    state: str
    if core_of(dump) == core_of(sc.old):
        state = "old"
        if semantic_of(dump) != semantic_of(sc.old):
            raise CrashCheckFailed(
                f"old core, but semantic rows changed: {diff_summary(sc.old, dump)}"
            )
        # The files the killed sync did not take in are the doctor's only problems.
        others = [p for p in report.problems if p.check != "files"]
        if (report.missing, report.stale, report.orphaned) != sc.old_doctor or others:
            raise CrashCheckFailed(f"old state, but doctor says {report.to_dict()}")
    elif core_of(dump) == core_of(sc.new):
        state = "new"
        if semantic_of(dump) != semantic_of(sc.new):
            state = "new, semantic pending"
            if [p.check for p in report.problems] != ["semantic"] or report.repair != "lore index":
                raise CrashCheckFailed(f"semantic rows lag, doctor says {report.to_dict()}")
        elif not report.ok:
            raise CrashCheckFailed(f"new state, but doctor says {report.to_dict()}")
    else:
        raise CrashCheckFailed(
            f"neither old nor new: vs old {diff_summary(sc.old, dump)};"
            f" vs new {diff_summary(sc.new, dump)}"
        )
    with lore.open(sc.root, **sc.settings) as vault:
        vault.sync()
        after = full_dump(sc.db)
        if after != sc.new:
            raise CrashCheckFailed(f"after the next sync: {diff_summary(sc.new, after)}")
        final = vault.doctor()
        if not final.ok:
            raise CrashCheckFailed(f"after the next sync doctor says {final.to_dict()}")
    return state


def kill_at_step(sc: Scenario, step: int, *, rebuild: bool = False) -> bool:
    """Run a sync in a subprocess that stops inside its transaction when its progress
    reaches `step`, and kill it there. True if it was killed mid-sync."""
    args = [sys.executable, str(HERE), "pause-sync", str(sc.root), str(step)]
    if rebuild:
        args.append("rebuild")
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=sc.env()
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # "paused" or "done" (EOF if it crashed)
    killed = kill(proc)
    if line not in ("paused", "done"):
        raise CrashCheckFailed(f"sync child failed: {proc.stderr.read() if proc.stderr else ''}")
    return killed and line == "paused"


def kill_after(sc: Scenario, delay: float, *args: str) -> bool:
    """Run `lore ARGS` (the real CLI) and SIGKILL it after `delay` seconds."""
    proc = subprocess.Popen(
        lore_argv(*args),
        cwd=sc.root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=sc.env(),
    )
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        pass
    killed = kill(proc)
    if not killed and proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise CrashCheckFailed(f"`lore {' '.join(args)}` failed on its own: {err[-500:]}")
    return killed


def wait_for_rows(db: Path, table: str, proc: subprocess.Popen[Any], timeout: float = 30) -> int:
    """Poll `db` (read-only, as any reader would) until `table` has a row; the count."""
    stop = time.monotonic() + timeout
    while time.monotonic() < stop and proc.poll() is None:
        try:
            con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
            try:
                count = int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            finally:
                con.close()
        except apsw.Error:
            count = 0
        if count:
            return count
        time.sleep(0.02)
    return 0


def wait_until_open(proc: subprocess.Popen[Any], path: Path, timeout: float = 30) -> bool:
    """Poll until `proc` holds `path` open (Linux /proc): it has started its work on it,
    however slowly the machine starts processes. False if it ended first or never did."""
    target = os.path.realpath(path)
    fds = Path(f"/proc/{proc.pid}/fd")
    stop = time.monotonic() + timeout
    while time.monotonic() < stop and proc.poll() is None:
        try:
            if any(os.path.realpath(fd) == target for fd in fds.iterdir()):
                return True
        except OSError:  # a descriptor closed while it was read
            pass
        time.sleep(0.02)
    return False


def timed_run(sc: Scenario, *args: str) -> float:
    """Seconds a complete `lore ARGS` takes from the old index (then the old is restored)."""
    sc.restore()
    started = time.perf_counter()
    subprocess.run(lore_argv(*args), cwd=sc.root, env=sc.env(), check=True, capture_output=True)
    elapsed = time.perf_counter() - started
    sc.restore()
    return elapsed


# -- concurrency -------------------------------------------------------------------------

MARKER = "zebracrossing"


def group_note(i: int, gen: int) -> str:
    return (
        f"---\ntitle: group {i}\ngen: {gen}\n---\n# group {i}\n\n"
        f"{MARKER} generation {gen} {'x' * (gen % 7)} 第{gen}代 笔记\n"
    )


def write_group(root: Path, k: int, gen: int) -> None:
    """Rewrite the k group notes as generation `gen`: one sync must show all or none."""
    for i in range(k):
        path = root / "group" / f"g{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(group_note(i, gen), encoding="utf-8")


def start_readers(root: Path, n: int, seconds: float, k: int) -> list[subprocess.Popen[str]]:
    """n reader processes searching for the group marker; returns once all are ready."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(HERE), "search-loop", str(root), str(seconds), MARKER, str(k)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for _ in range(n)
    ]
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(
                f"reader did not start: {line} {proc.stderr.read() if proc.stderr else ''}"
            )
    return procs


def reader_results(procs: list[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        lines = stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            out.append({"searches": 0, "errors": 1, "torn": 0, "first_error": stderr[-500:]})
        else:
            out.append(json.loads(lines[-1]))
    return out


def write_loop(root: Path, seconds: float, k: int, first_gen: int = 1) -> dict[str, Any]:
    """Rewrite the group and sync, again and again, for `seconds` (in this process)."""
    import lore

    stop = time.monotonic() + seconds
    gen = first_gen
    syncs = 0
    with lore.open(root) as vault:
        while time.monotonic() < stop:
            write_group(root, k, gen)
            vault.sync()
            syncs += 1
            gen += 1
    return {"syncs": syncs, "last_gen": gen - 1}


# -- child entry points ------------------------------------------------------------------


def _pause_sync(vault_path: str, step: str, mode: str = "index") -> None:
    import lore

    target = int(step)

    def progress(done: int, total: int, path: str) -> None:
        if done == target:
            print("paused", flush=True)
            time.sleep(3600)  # the parent kills us here, inside the write transaction

    with lore.open(vault_path) as vault:
        (vault.rebuild if mode == "rebuild" else vault.sync)(progress=progress)
    print("done", flush=True)


def _search_loop(vault_path: str, seconds: str, query: str, expect: str) -> None:
    """Search for `seconds`; each result must hold exactly `expect` hits, all of one
    generation (front matter `gen`). Prints a JSON line of counts."""
    import lore

    stop = time.monotonic() + float(seconds)
    counts = {"searches": 0, "errors": 0, "torn": 0, "first_error": ""}
    with lore.open(vault_path) as vault:
        print("ready", flush=True)
        while time.monotonic() < stop:
            try:
                hits = vault.search(query, limit=int(expect) + 10)
                gens = {h.frontmatter.get("gen") for h in hits}
                if len(hits) != int(expect) or len(gens) != 1:
                    counts["torn"] += 1
            except Exception as exc:  # counted: a reader must never see one
                counts["errors"] += 1
                counts["first_error"] = counts["first_error"] or f"{type(exc).__name__}: {exc}"
            counts["searches"] += 1
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    {"pause-sync": _pause_sync, "search-loop": _search_loop}[command](*rest)
