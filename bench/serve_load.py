"""Load on `lore serve`: 50 concurrent clients searching through the JSON API for 60 s on a
10k-note generated vault (bench/scale.py's generator), while one writer edits notes, half
through the API (hash-guarded edits, which the server indexes at once) and half by hand
on disk (which the server's watcher takes in). Each round is run with and without the
writer, side by side; the report gives every round and the medians.

    .venv/bin/python -m bench.serve_load [--notes 10000] [--clients 50] [--seconds 60]
                                         [--rounds 3]

The server is a separate process (`lore serve --rate 0`), so it does not share the
load generator's interpreter; both run on this machine (2 cores, shared): the load average
is recorded before and after each run. Writes bench/results/serve_load.md and .json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import datasets
from bench.metrics import percentile
from bench.report import fmt, info_lines, md_table, run_info, write_outputs
from bench.scale import ensure_vault, paragraph_pool, query_sample

LORE = Path(sys.executable).parent / "lore"


def index(vault: Path) -> float:
    import lore

    started = time.perf_counter()
    with lore.open(vault) as opened:
        opened.sync()
    return time.perf_counter() - started


def start_server(vault: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [str(LORE), "serve", "--vault", str(vault), "--port", "0", "--rate", "0",
         "--allow-write", "--watch", "auto"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline()
    if " at " not in line:
        proc.kill()
        raise SystemExit(f"lore serve did not start: {line}{proc.stderr.read()}")
    return proc, line.split(" at ")[1].split()[0].rstrip("/")


async def searcher(
    client: Any, queries: list[str], end: float, seed: int, out: dict[str, Any]
) -> None:
    rng = random.Random(seed)
    while time.monotonic() < end:
        query = rng.choice(queries)
        started = time.perf_counter()
        try:
            answer = await client.get("/api/v1/search", params={"q": query, "limit": 10})
            ok = answer.status_code == 200 and "hits" in answer.json()
        except Exception as exc:  # a refused or broken connection is an error, counted
            ok = False
            out["exceptions"].append(type(exc).__name__)
        out["latencies"].append(time.perf_counter() - started)
        if not ok:
            out["errors"] += 1


async def writer(
    client: Any, vault: Path, paths: list[str], end: float, out: dict[str, Any]
) -> None:
    rng = random.Random(7)
    n = 0
    while time.monotonic() < end:
        path = rng.choice(paths)
        n += 1
        try:
            if n % 2:
                note = (await client.get(f"/api/v1/notes/{path}")).json()
                answer = await client.post(
                    "/api/v1/notes/edit",
                    json={"path": path, "base_hash": note["hash"], "append": f"load edit {n}"},
                )
                if answer.status_code == 409:
                    out["conflicts"] += 1  # edited on disk meanwhile: refused, as it should be
                elif answer.status_code != 200:
                    out["write_errors"] += 1
            else:
                with open(vault / path, "a", encoding="utf-8") as handle:
                    handle.write(f"\n\nhand edit {n}\n")
            out["writes"] += 1
        except Exception as exc:
            out["write_errors"] += 1
            out["exceptions"].append(type(exc).__name__)
        await asyncio.sleep(0.25)


async def run_load(
    url: str, vault: Path, queries: list[str], clients: int, seconds: float, with_writer: bool
) -> dict[str, Any]:
    import httpx

    out: dict[str, Any] = {
        "latencies": [], "errors": 0, "exceptions": [], "writes": 0, "write_errors": 0,
        "conflicts": 0,
    }  # fmt: skip
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    paths = [f"notes/{i // 500:04d}/note-{i:06d}.md" for i in range(500)]
    load_before = os.getloadavg()[0]
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        end = time.monotonic() + seconds
        tasks = [searcher(client, queries, end, i, out) for i in range(clients)]
        if with_writer:
            tasks.append(writer(client, vault, paths, end, out))
        started = time.perf_counter()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
    lat = sorted(out.pop("latencies"))
    return {
        "writer": with_writer,
        "requests": len(lat),
        "seconds": round(elapsed, 2),
        "throughput_rps": round(len(lat) / elapsed, 1),
        "p50_ms": round(percentile(lat, 50) * 1000, 1),
        "p95_ms": round(percentile(lat, 95) * 1000, 1),
        "p99_ms": round(percentile(lat, 99) * 1000, 1),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        **out,
    }


def in_process_baseline(vault: Path, queries: list[str]) -> dict[str, Any]:
    """The same searches, one at a time, through the library: what HTTP and 50 clients add."""
    import lore

    with lore.open(vault) as opened:
        times = []
        for query in queries:
            started = time.perf_counter()
            opened.search(query, limit=10)
            times.append(time.perf_counter() - started)
    times.sort()
    return {"p50_ms": round(percentile(times, 50) * 1000, 2), "queries": len(times)}


def render(info: dict[str, Any], setup: dict[str, Any], rounds: list[dict[str, Any]]) -> str:
    rows = [
        [str(i // 2 + 1), "yes" if r["writer"] else "no", str(r["requests"]),
         fmt(r["throughput_rps"], 1), fmt(r["p50_ms"], 1), fmt(r["p95_ms"], 1),
         fmt(r["p99_ms"], 1), str(r["errors"]), str(r["writes"]), str(r["conflicts"]),
         str(r["write_errors"]), f"{r['load_before']:.2f} → {r['load_after']:.2f}"]
        for i, r in enumerate(rounds)
    ]  # fmt: skip
    medians = []
    for writer_on in (False, True):
        mine = [r for r in rounds if r["writer"] is writer_on]
        medians.append(
            [
                "with writer" if writer_on else "searches only",
                fmt(statistics.median(r["throughput_rps"] for r in mine), 1),
                fmt(statistics.median(r["p50_ms"] for r in mine), 1),
                fmt(statistics.median(r["p95_ms"] for r in mine), 1),
                str(sum(r["errors"] for r in mine)),
            ]
        )
    ratio = statistics.median(r["p50_ms"] for r in rounds if r["writer"]) / max(
        statistics.median(r["p50_ms"] for r in rounds if not r["writer"]), 1e-9
    )
    lines = [
        "# lore serve under load",
        "",
        *info_lines(info),
        f"- vault: {setup['notes']} generated notes ({setup['mb']:.1f} MB), indexed in"
        f" {setup['index_s']:.1f} s; {setup['clients']} clients × {setup['seconds']:.0f} s a"
        f" round after {setup['warmup']:.0f} s of unmeasured warm-up; server: `lore serve"
        " --rate 0 --allow-write --watch auto` (8 library threads), its own process",
        f"- in-process baseline (the same queries, one at a time, `Vault.search`): p50"
        f" {setup['baseline']['p50_ms']} ms over {setup['baseline']['queries']} queries",
        "",
        "## Medians",
        "",
        *md_table(["run", "req/s", "p50 ms", "p95 ms", "errors (all rounds)"], medians),
        "",
        f"p50 with the writer / without: {ratio:.2f}×.",
        "",
        "## Every round",
        "",
        *md_table(
            [
                "round",
                "writer",
                "requests",
                "req/s",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "errors",
                "writes",
                "409s",
                "write errors",
                "load avg",
            ],
            rows,
        ),  # fmt: skip
        "",
        "Latency is per request as the client sees it (50 requests in flight at once, so it"
        " includes the wait for a library thread). Errors: any answer but 200 with hits, or a"
        " broken connection. Writes: half are hash-guarded edits through the API, half are"
        " appends on disk that the watcher indexes; a 409 is an API edit refused because the"
        " note changed on disk in between (the guard working, not an error).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup", type=float, default=10.0, help="Seconds of unmeasured load first."
    )
    parser.add_argument("--no-write", action="store_true", help="Print, do not write results.")
    args = parser.parse_args(argv)
    info = run_info("bench.serve_load")
    root = datasets.data_root()
    pool = paragraph_pool(root)
    built = ensure_vault(args.notes, args.seed, pool, fresh=True)
    vault = Path(built["vault"])
    setup = {
        "notes": args.notes,
        "mb": built["bytes"] / (1024 * 1024),
        "clients": args.clients,
        "seconds": args.seconds,
        "warmup": args.warmup,
        "index_s": index(vault),
    }
    queries = query_sample(root, 300, args.seed)
    setup["baseline"] = in_process_baseline(vault, queries)
    proc, url = start_server(vault)
    rounds = []
    try:  # the pool's vaults are opened by the first requests: not measured
        asyncio.run(run_load(url, vault, queries, args.clients, args.warmup, False))
        for _ in range(args.rounds):
            for with_writer in (False, True):
                result = asyncio.run(
                    run_load(url, vault, queries, args.clients, args.seconds, with_writer)
                )
                print(result, file=sys.stderr)
                rounds.append(result)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    markdown = render(info, setup, rounds)
    print(markdown)
    if not args.no_write:
        write_outputs("serve_load", markdown, {"info": info, "setup": setup, "rounds": rounds})
    return 0 if all(r["errors"] == 0 and r["write_errors"] == 0 for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
