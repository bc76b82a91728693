"""Retrieval on real vaults: lore vs. bm25s and FTS5 baselines on hand-written queries, and the
cold start of a `lore search` process.

    .venv/bin/python -m bench.realvault [--vaults mynote,obsidian-hub] [--systems lore,bm25s]
                                        [--quick] [--cli-runs 7] [--no-cli] [--no-write]
                                        [--cli-only] [--cli-baseline PATH/TO/lore]

Each vault is unpacked from ../shared/data/vaults/ into bench/.work/realvault/ (git-ignored);
lore gets a fresh index there (`lore.open(vault, db=...)` + `sync()`, explicit, never inside the
vault). The baselines index every note's file stem + whole text. Writes
bench/results/realvault.md and realvault.json (unless --no-write). `--cli-only` measures the
cold start alone and replaces only that part of the results already written; with
`--cli-baseline` another `lore` script (e.g. a checkout of main with its own venv) is
measured alternately with this one, and both are reported side by side.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import realvault_cli as cli
from bench import realvault_data as data
from bench.baselines import BASELINES, System
from bench.datasets import Doc, has_cjk
from bench.lore_system import LoreVault, import_lore
from bench.metrics import evaluate, percentile, reciprocal_rank_at_k
from bench.realvault_report import render
from bench.report import RESULTS_DIR, run_info, write_outputs

K = 10
MRR_MARGIN = 0.05  # lore must beat the best baseline by this much on each vault
KNOWN_ITEM_R1 = 0.9
QUICK_PER_KIND = 10


# --- systems ------------------------------------------------------------------------------


def vault_lang(docs: Sequence[Doc]) -> str:
    cjk = sum(1 for d in docs if has_cjk(d.text))
    return "zh" if cjk * 2 > len(docs) else "en"


def pick_systems(requested: list[str] | None, lang: str, lore_ok: bool) -> list[str]:
    default = [
        *(["lore"] if lore_ok else []),
        *(n for n, f in BASELINES.items() if lang in f().langs),
    ]
    names = requested or default
    unknown = [n for n in names if n != "lore" and n not in BASELINES]
    if unknown:
        raise SystemExit(f"unknown system(s) {unknown}; known: lore, {', '.join(BASELINES)}")
    return names


# --- one vault ----------------------------------------------------------------------------


def run_queries(
    search: Callable[[str, int], list[str]], queries: Sequence[data.RvQuery]
) -> tuple[dict[str, list[str]], list[float]]:
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    for q in queries:
        start = time.perf_counter()
        run[q.id] = search(q.query, K)[:K]
        latencies.append((time.perf_counter() - start) * 1000)
    return run, latencies


def score_run(
    run: dict[str, list[str]], queries: Sequence[data.RvQuery], qrels: dict[str, set[str]]
) -> dict[str, Any]:
    by_kind: dict[str, Any] = {}
    for kind in data.KINDS:
        sub = {q.id: run[q.id] for q in queries if q.kind == kind}
        if sub:
            by_kind[kind] = {**evaluate(sub, qrels, K), "queries": len(sub)}
    return {"overall": evaluate(run, qrels, K), "by_kind": by_kind}


def first_rank(ranked: list[str], relevant: set[str]) -> int | None:
    rr = reciprocal_rank_at_k(ranked, relevant, K)
    return round(1 / rr) if rr else None


def run_vault(
    name: str,
    systems: list[str] | None,
    lore_mod: ModuleType | None,
    quick: bool,
    lore_out: dict[str, LoreVault],
) -> dict[str, Any]:
    vault = data.unpack(name)
    docs = data.scan_notes(vault)
    queries = data.load_queries(data.query_file(name))
    missing = data.missing_relevant(queries, {d.id for d in docs})
    if missing:
        raise SystemExit(f"{name}: relevant paths that are not notes: {missing[:5]}")
    if quick:
        queries = [
            q for k in data.KINDS for q in [q for q in queries if q.kind == k][:QUICK_PER_KIND]
        ]
    qrels = {q.id: set(q.relevant) for q in queries}
    lang = vault_lang(docs)
    entry: dict[str, Any] = {
        "vault": name,
        "lang": lang,
        "notes": len(docs),
        "queries": len(queries),
        "kinds": {
            k: sum(q.kind == k for q in queries)
            for k in data.KINDS
            if any(q.kind == k for q in queries)
        },
        "results": [],
    }
    print(f"== {name}: {lang}, {len(docs)} notes, {len(queries)} queries", file=sys.stderr)
    runs: dict[str, dict[str, list[str]]] = {}
    for sys_name in pick_systems(systems, lang, lore_mod is not None):
        result: dict[str, Any] = {"system": sys_name}
        try:
            if sys_name == "lore":
                if lore_mod is None:
                    raise RuntimeError("lore is not importable")
                lore = LoreVault(lore_mod, vault, data.WORK_DIR / f"{name}.index.sqlite")
                lore_out[name] = lore
                lore.index()
                result |= lore.build
                wanted = {p for rel in qrels.values() for p in rel}
                not_indexed = sorted(wanted - set(lore.indexed))
                result["relevant_not_indexed"] = not_indexed
                search: Callable[[str, int], list[str]] = lore.search
            else:
                system: System = BASELINES[sys_name]()
                system.prepare(docs)
                start = time.perf_counter()
                system.index(docs)
                result["index_s"] = time.perf_counter() - start
                search = system.search
            run, latencies = run_queries(search, queries)
        except Exception:  # one broken system must not hide the others' numbers
            result["error"] = traceback.format_exc(limit=6)
            print(f"   {sys_name}: FAILED\n{result['error']}", file=sys.stderr)
            entry["results"].append(result)
            continue
        runs[sys_name] = run
        result |= score_run(run, queries, qrels)
        result |= {
            "p50_ms": percentile(latencies, 50),
            "p95_ms": percentile(latencies, 95),
            "no_hits": sum(1 for r in run.values() if not r),
        }
        entry["results"].append(result)
        print(
            f"   {sys_name:14s} MRR@10 {result['overall']['MRR@10']:.3f}  "
            f"index {result['index_s']:.1f}s  p50 {result['p50_ms']:.1f}ms",
            file=sys.stderr,
        )
    entry["per_query"] = per_query(queries, qrels, runs)
    entry["targets"] = targets(entry)
    lore = lore_out.get(name)
    if lore is not None and lore.is_open:
        entry["failures"] = failures(entry["per_query"], lore)
    return entry


def per_query(
    queries: Sequence[data.RvQuery],
    qrels: dict[str, set[str]],
    runs: dict[str, dict[str, list[str]]],
) -> list[dict[str, Any]]:
    rows = []
    for q in queries:
        row: dict[str, Any] = {
            "id": q.id,
            "kind": q.kind,
            "query": q.query,
            "relevant": list(q.relevant),
            "ranks": {s: first_rank(run[q.id], qrels[q.id]) for s, run in runs.items()},
            "hits": {s: len(run[q.id]) for s, run in runs.items()},
        }
        if "lore" in runs:
            row["lore_top"] = runs["lore"][q.id]
        rows.append(row)
    return rows


def _best_baseline(ranks: dict[str, int | None]) -> tuple[str | None, int | None]:
    found = [(r, s) for s, r in ranks.items() if s != "lore" and r is not None]
    return (min(found)[1], min(found)[0]) if found else (None, None)


def is_short(row: dict[str, Any]) -> bool:
    """lore returned fewer than K notes where bm25s (which ranks every note sharing a word)
    returned K: recall lost before ranking."""
    hits = row["hits"]
    return "lore" in hits and "bm25s" in hits and hits["lore"] < K <= hits["bm25s"]


def failures(rows: list[dict[str, Any]], lore: LoreVault) -> list[dict[str, Any]]:
    """Queries where lore misses, ranks the first relevant note below the best baseline, or
    returns a short list; each with lore's plan and top hits (what `--explain` shows)."""
    out = []
    for row in rows:
        ranks = row["ranks"]
        lore_rank = ranks.get("lore")
        base_sys, base_rank = _best_baseline(ranks)
        worse = base_rank is not None and (lore_rank is None or lore_rank > base_rank)
        if not (lore_rank is None or worse or is_short(row)):
            continue
        out.append(
            {
                "id": row["id"],
                "kind": row["kind"],
                "query": row["query"],
                "lore_rank": lore_rank,
                "best_baseline": base_sys,
                "best_baseline_rank": base_rank,
                "lore_hits": row["hits"]["lore"],
                "short": is_short(row),
                "explain": lore.explain(row["query"], K),
            }
        )
    return out


def targets(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets for one vault, each pass/FAIL (or "not run")."""
    ok = {r["system"]: r for r in entry["results"] if "error" not in r and "overall" in r}
    lore = ok.get("lore")
    baselines = {s: r for s, r in ok.items() if s != "lore"}
    rows: list[dict[str, Any]] = []

    def add(label: str, value: float | None, limit: float | None, op: str = ">=") -> None:
        if value is None or limit is None:
            rows.append({"target": label, "value": value, "limit": limit, "result": "not run"})
            return
        passed = value >= limit if op == ">=" else value <= limit
        rows.append(
            {
                "target": label,
                "value": value,
                "limit": limit,
                "result": "pass" if passed else "FAIL",
            }
        )

    def best(metric: Callable[[dict[str, Any]], float | None]) -> tuple[str, float | None]:
        scored = [(v, s) for s, r in baselines.items() if (v := metric(r)) is not None]
        return (max(scored)[1], max(scored)[0]) if scored else ("no baseline", None)

    name, value = best(lambda r: r["overall"]["MRR@10"])
    add(
        f"MRR@10 ≥ best baseline ({name}) + {MRR_MARGIN}",
        lore["overall"]["MRR@10"] if lore else None,
        value + MRR_MARGIN if value is not None else None,
    )
    known = lore["by_kind"].get("known_item") if lore else None
    add(f"known-item R@1 ≥ {KNOWN_ITEM_R1}", known["R@1"] if known else None, KNOWN_ITEM_R1)
    for kind in entry["kinds"]:
        name, value = best(lambda r, k=kind: (r["by_kind"].get(k) or {}).get("MRR@10"))
        mine = (lore["by_kind"].get(kind) or {}).get("MRR@10") if lore else None
        add(f"{kind}: MRR@10 ≥ best baseline ({name})", mine, value)
    shorts = sum(is_short(r) for r in entry["per_query"]) if lore and "bm25s" in ok else None
    add("short lists (lore < 10 notes where bm25s has 10) = 0", shorts, 0, "<=")
    return rows


# --- main ---------------------------------------------------------------------------------


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _runs(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of runs")
    return int(value)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.realvault", description=__doc__)
    p.add_argument("--vaults", type=_csv, default=list(data.VAULTS), help="comma-separated")
    p.add_argument(
        "--systems",
        type=_csv,
        help=f"comma-separated, from: lore, {', '.join(BASELINES)} "
        "(default: lore and every baseline that applies to the vault's language)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"first {QUICK_PER_KIND} queries per kind, 3 CLI runs, no generated 10k vault",
    )
    p.add_argument("--cli-runs", type=_runs, default=7, help="cold processes per measurement")
    p.add_argument("--no-cli", action="store_true", help="skip the cold-start measurements")
    p.add_argument(
        "--cli-only",
        action="store_true",
        help="only the cold-start measurements, merged into the results already written",
    )
    p.add_argument(
        "--cli-baseline",
        type=Path,
        help="another `lore` script to time alternately with this one (side by side)",
    )
    p.add_argument(
        "--cli-baseline-label",
        default="baseline",
        help="what the baseline is, for the report (e.g. 'main 379ba86')",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the generated 10k vault")
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    return p.parse_args(argv)


def _written_results() -> dict[str, Any]:
    path = RESULTS_DIR / "realvault.json"
    if not path.is_file():
        raise SystemExit(f"--cli-only: no {path} to merge into (run the whole bench once)")
    written: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    unknown = [v for v in args.vaults if v not in data.VAULTS]
    if unknown:
        raise SystemExit(f"unknown vault(s) {unknown}; known: {', '.join(data.VAULTS)}")
    info = run_info("bench.realvault")
    notes: list[str] = []
    lore_mod, why = import_lore()
    if lore_mod is None:
        notes.append(f"lore not run: {why.strip().splitlines()[0]}")
        print(f"note: lore is skipped, baselines only. {why}", file=sys.stderr)
    if args.quick:
        notes.append(
            f"quick run: first {QUICK_PER_KIND} queries per kind, 3 CLI runs, no generated vault"
        )
    if args.cli_only and lore_mod is None:
        raise SystemExit(f"--cli-only: lore cannot be imported: {why}")
    lore_by_vault: dict[str, LoreVault] = {}
    try:
        vaults = [] if args.cli_only else [
            run_vault(v, args.systems, lore_mod, args.quick, lore_by_vault) for v in args.vaults
        ]  # fmt: skip
        latency: dict[str, Any] = {"skipped": "--no-cli"}
        if not args.no_cli and lore_mod is not None:
            latency = cli.cold_start(
                args.vaults,
                lore_mod,
                lore_by_vault,
                3 if args.quick else args.cli_runs,
                not args.quick,
                args.seed,
                args.cli_baseline,
                args.cli_baseline_label,
            )
    finally:
        for lore in lore_by_vault.values():
            lore.close()
    payload = {**info, "notes": notes, "k": K, "vaults": vaults, "cli": latency}
    if args.cli_only:  # the retrieval part stays as last written, with its own run line
        payload = {**_written_results(), "cli": {**latency, "run": info}}
    markdown = render(payload)
    print(markdown)
    if not args.no_write:
        md_path, json_path = write_outputs("realvault", markdown, payload)
        print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
