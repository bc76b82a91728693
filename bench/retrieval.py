"""Retrieval quality of lore vs. baselines on every set under shared/data.

    .venv/bin/python -m bench.retrieval [--sets a,b] [--systems x,y] [--limit-queries N]

Writes bench/results/retrieval.md and retrieval.json (unless --no-write).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from bench import datasets
from bench.baselines import BASELINES, System
from bench.lore_system import LoreMode3System, LoreSystem, import_lore
from bench.metrics import evaluate, percentile
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

K = 10
METRIC_COLUMNS = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__)
    p.add_argument("--sets", type=_csv, help="comma-separated set names (default: all found)")
    p.add_argument(
        "--systems",
        type=_csv,
        help=f"comma-separated, from: lore, {', '.join(BASELINES)} (default: lore and every "
        "baseline that applies to the set's language)",
    )
    p.add_argument("--limit-queries", type=int, metavar="N", help="only the first N queries")
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    return p.parse_args(argv)


def run_system(system: System, ds: datasets.DataSet, limit: int | None) -> dict[str, Any]:
    queries = ds.judged_queries()[:limit] if limit else ds.judged_queries()
    system.prepare(ds.docs)
    t0 = time.perf_counter()
    system.index(ds.docs)
    index_s = time.perf_counter() - t0

    run: dict[str, list[str]] = {}
    latencies_ms: list[float] = []
    for q in queries:
        t = time.perf_counter()
        ranked = system.search(q.text, K)
        latencies_ms.append((time.perf_counter() - t) * 1000)
        run[q.id] = ranked
    result: dict[str, Any] = {
        "system": system.name,
        "queries": len(queries),
        "metrics": evaluate(run, ds.qrels, K),
        "index_s": index_s,
        "p50_ms": percentile(latencies_ms, 50),
        "p95_ms": percentile(latencies_ms, 95),
        "no_results": sum(1 for r in run.values() if not r),
    }
    warnings = getattr(system, "warnings", None)
    if warnings:
        result["warnings"] = warnings
    return result


def pick_systems(
    requested: list[str] | None, lang: str, lore_ok: bool
) -> list[tuple[str, Callable[[], System] | None]]:
    """(name, factory) pairs; factory None means 'requested but unavailable' (lore missing)."""
    names = requested or [
        *(["lore"] if lore_ok else []),
        *(n for n, f in BASELINES.items() if lang in f().langs),
    ]
    out: list[tuple[str, Callable[[], System] | None]] = []
    for name in names:
        if name in ("lore", "lore-mode3"):
            out.append((name, None))  # built by the caller, it needs the imported module
        elif name in BASELINES:
            out.append((name, BASELINES[name]))
        else:
            raise SystemExit(
                f"unknown system {name!r}; known: lore, lore-mode3, {', '.join(BASELINES)}"
            )
    return out


def render(info: dict[str, Any], sets: list[dict[str, Any]], notes: list[str]) -> str:
    lines = ["# Retrieval benchmark", "", *info_lines(info), ""]
    lines += [f"> {n}" for n in notes] + ([""] if notes else [])
    header = ["system", *METRIC_COLUMNS, "index s", "p50 ms", "p95 ms", "no hits"]
    for s in sets:
        lines += [
            f"## {s['set']} ({s['lang']}, {s['docs']} docs, {s['queries']} queries)",
            "",
        ]
        ok = [r for r in s["results"] if "error" not in r]
        baseline_mrr = [r["metrics"]["MRR@10"] for r in ok if not r["system"].startswith("lore")]
        best = max(baseline_mrr, default=None)
        rows = []
        for r in s["results"]:
            if "error" in r:
                first = r["error"].strip().splitlines()[-1] if r["error"].strip() else "error"
                rows.append([r["system"], f"error: {first}", *[""] * (len(header) - 2)])
                continue
            m = r["metrics"]
            cells = [fmt(m[c]) for c in METRIC_COLUMNS]
            if best is not None and not r["system"].startswith("lore") and m["MRR@10"] == best:
                cells[3] = f"**{cells[3]}**"  # best baseline MRR@10: the bar lore must meet
            rows.append(
                [
                    r["system"],
                    *cells,
                    fmt(r["index_s"], 2),
                    fmt(r["p50_ms"], 2),
                    fmt(r["p95_ms"], 2),
                    str(r["no_results"]),
                ]
            )
        lines += md_table(header, rows) + [""]
        lore = next((r for r in ok if r["system"] == "lore"), None)
        if lore and best is not None:
            verdict = "meets" if lore["metrics"]["MRR@10"] >= best else "BELOW"
            lines += [
                f"lore MRR@10 {lore['metrics']['MRR@10']:.3f} vs best baseline {best:.3f}: "
                f"{verdict} target",
                "",
            ]
    lines += [
        "Columns: R@k = share of relevant docs in the top k; MRR@10 = mean 1/rank of the first "
        "relevant doc (0 past rank 10); nDCG@10 with binary relevance; index s = wall time "
        "to build the index (lore: open + full sync of the written vault); p50/p95 ms = "
        "per-query wall time; no hits = queries that returned nothing. Bold = best baseline "
        "MRR@10 (lore's target).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = run_info("bench.retrieval")
    available = datasets.discover()
    names = args.sets or available
    missing = [n for n in names if n not in available]
    if missing or not names:
        raise SystemExit(
            f"no such set(s) {missing} under {datasets.data_root()}; found: {available}"
        )

    notes: list[str] = []
    lore_mod, lore_note = import_lore()
    if lore_mod is None:
        notes.append(f"lore not run: {lore_note.strip().splitlines()[0]}")
        print(f"note: lore is skipped, baselines only. {lore_note}", file=sys.stderr)
    elif lore_note:
        notes.append(f"lore{lore_note}")
    if args.limit_queries:
        notes.append(f"partial run: first {args.limit_queries} queries per set")

    all_sets: list[dict[str, Any]] = []
    for name in names:
        ds = datasets.load(name)
        lang = ds.lang
        n_queries = len(ds.judged_queries()[: args.limit_queries or None])
        print(f"== {name}: {lang}, {len(ds.docs)} docs, {n_queries} queries", file=sys.stderr)
        entry: dict[str, Any] = {
            "set": name,
            "lang": lang,
            "docs": len(ds.docs),
            "queries": n_queries,
            "results": [],
        }
        for sys_name, factory in pick_systems(args.systems, lang, lore_mod is not None):
            system: System | None = None
            try:
                if factory is None:
                    if lore_mod is None:
                        raise RuntimeError(lore_note.strip())
                    system = (
                        LoreMode3System(lore_mod)
                        if sys_name == "lore-mode3"
                        else LoreSystem(lore_mod)
                    )
                else:
                    system = factory()
                result = run_system(system, ds, args.limit_queries)
            except Exception:  # one broken system must not hide the others' numbers
                result = {"system": sys_name, "error": traceback.format_exc(limit=6)}
                print(f"   {sys_name}: FAILED\n{result['error']}", file=sys.stderr)
            else:
                print(
                    f"   {sys_name:14s} MRR@10 {result['metrics']['MRR@10']:.3f}  "
                    f"index {result['index_s']:.2f}s  p50 {result['p50_ms']:.2f}ms",
                    file=sys.stderr,
                )
            finally:
                if system is not None:
                    system.close()
            entry["results"].append(result)
        all_sets.append(entry)

    markdown = render(info, all_sets, notes)
    print(markdown)
    if not args.no_write:
        md_path, json_path = write_outputs(
            "retrieval", markdown, {**info, "notes": notes, "k": K, "sets": all_sets}
        )
        print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
