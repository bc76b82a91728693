"""Markdown for bench.realvault: per-vault tables, targets, cold start, failures seen."""

from __future__ import annotations

from typing import Any

from bench import realvault_cli as cli
from bench.realvault_data import KINDS
from bench.report import fmt, info_lines, md_table

METRICS = ("MRR@10", "R@1", "R@5", "R@10", "nDCG@10")
KIND_METRICS = ("MRR@10", "R@1", "R@5")
MAX_FAILURES_SHOWN = 40


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "error"


def _overall_table(entry: dict[str, Any]) -> list[str]:
    header = ["system", *METRICS, "index s", "p50 ms", "p95 ms", "no hits"]
    rows = []
    for r in entry["results"]:
        if "error" in r:
            rows.append([r["system"], f"error: {_first_line(r['error'])}"] + [""] * 8)
            continue
        m = r["overall"]
        rows.append(
            [r["system"], *(fmt(m[c]) for c in METRICS), fmt(r["index_s"], 1),
             fmt(r["p50_ms"], 1), fmt(r["p95_ms"], 1), str(r["no_hits"])]
        )  # fmt: skip
    return md_table(header, rows)


def _kind_table(entry: dict[str, Any]) -> list[str]:
    ok = [r for r in entry["results"] if "error" not in r]
    header = ["kind", "n", *(f"{r['system']} {m}" for r in ok for m in ("MRR@10", "R@1", "R@5"))]
    rows = []
    for kind, n in entry["kinds"].items():
        cells = [kind, str(n)]
        for r in ok:
            m = r["by_kind"].get(kind, {})
            cells += [fmt(m.get(c)) for c in KIND_METRICS]
        rows.append(cells)
    return md_table(header, rows)


def _num(value: float | None) -> str:
    return str(value) if isinstance(value, int) else fmt(value)


def _targets_table(entry: dict[str, Any]) -> list[str]:
    rows = [
        [t["target"], _num(t["value"]), _num(t["limit"]), t["result"]] for t in entry["targets"]
    ]
    return md_table(["target", "lore", "needs", "result"], rows)


def _vault_section(entry: dict[str, Any]) -> list[str]:
    kinds = ", ".join(f"{k} {n}" for k, n in entry["kinds"].items())
    lines = [
        f"## {entry['vault']} ({entry['lang']}, {entry['notes']} notes, "
        f"{entry['queries']} queries: {kinds})",
        "",
        *_overall_table(entry),
        "",
        "Per query kind:",
        "",
        *_kind_table(entry),
        "",
        "Targets:",
        "",
        *_targets_table(entry),
        "",
    ]
    lore = next((r for r in entry["results"] if r["system"] == "lore" and "error" not in r), None)
    if lore:
        extra = f"lore indexed {lore['indexed']} of the {entry['notes']} notes"
        if lore.get("warnings"):
            extra += f" ({lore['warnings']} with warnings)"
        if lore.get("relevant_not_indexed"):
            extra += f"; relevant notes it did not index: {lore['relevant_not_indexed']}"
        lines += [extra + ".", ""]
    return lines


def _cli_section(latency: dict[str, Any]) -> list[str]:
    lines = ["## Cold start of `lore search` (a new process per run)", ""]
    if "rows" not in latency:
        return lines + [f"Not measured: {latency.get('error') or latency.get('skipped')}.", ""]
    if "run" in latency:  # measured apart from the retrieval part above
        run = latency["run"]
        lines += [f"Measured on its own: {run['date']}, repo {run['git']}, "
                  f"`{run['command']}`.", ""]  # fmt: skip
    help_ = latency["help"]
    help_cell = _median_cell(help_)
    base = latency.get("baseline")
    header = ["vault", "notes", "query", "median s", "min s", "max s", "first s", "max RSS MB",
              "time", "RSS"]  # fmt: skip
    if base:
        header += [f"{base['label']} median s", "ratio", f"{base['label']} max RSS MB"]
    rows = []
    for r in latency["rows"]:
        label = f"{r['lang']}: {r['query']}"
        if "error" in r:
            rows.append([r["vault"], str(r.get("notes", "")), label, f"error: {r['error']}"]
                        + [""] * (len(header) - 4))  # fmt: skip
            continue
        row = [r["vault"], str(r.get("notes", "")), label, fmt(r["median_s"]), fmt(r["min_s"]),
               fmt(r["max_s"]), fmt(r["first_s"]), fmt(r["max_rss_mb"], 0),
               r["verdict"]["time"], r["verdict"]["rss"]]  # fmt: skip
        if base:
            row += _baseline_cells(r["median_s"], r.get("baseline", {}))
        rows.append(row)
    lines += md_table(header, rows) + [""]
    if base:
        lines += [
            f"Baseline: {base['label']}, timed alternately with this revision run by run (same "
            f"machine load); ratio = this median / the baseline's. Its `lore --help`: "
            f"{_median_cell(base['help'])} s (median).",
            "",
        ]
    lines += [
        f"Median of {latency['runs']} runs each. Targets (issue 12, at 10k notes): Chinese ≤ "
        f"{cli.MAX_ZH_S} s, English ≤ {cli.MAX_EN_S} s, ≤ {cli.MAX_RSS_MB:.0f} MB RSS; the real "
        f"vaults are held to the same limits for comparison. `lore --help` on the same machine "
        f"in the same run: {help_cell} s (median), the floor of any command. Wall time spans "
        "the whole process (interpreter start, imports, opening the index, the search, the "
        "output); RSS is the process's peak (`wait4`; it is forked by a bare-interpreter launcher "
        f"whose own {latency['launcher_mb']:.0f} MB is the floor of that column). Files are in "
        "the page cache, and bytecode is compiled beforehand for both builds alike (one "
        "unmeasured run of each command, into the bench's own PYTHONPYCACHEPREFIX).",
        "",
    ]
    return lines


def _median_cell(result: dict[str, Any]) -> str:
    return fmt(result["median_s"]) if "median_s" in result else str(result.get("error", ""))


def _baseline_cells(median_s: float, base: dict[str, Any]) -> list[str]:
    if "median_s" not in base:
        return [f"error: {base.get('error', 'not measured')}", "", ""]
    ratio = median_s / base["median_s"] if base["median_s"] else float("nan")
    return [fmt(base["median_s"]), f"{ratio:.2f}", fmt(base["max_rss_mb"], 0)]


def _failure_rows(entry: dict[str, Any]) -> list[list[str]]:
    rows = []
    for f in entry.get("failures", [])[:MAX_FAILURES_SHOWN]:
        ex = f["explain"]
        dropped = ", ".join(ex.get("dropped_terms") or []) or "—"
        top = ex["top"][0]["path"] if ex.get("top") else "(no hits)"
        base = f"{f['best_baseline']} {f['best_baseline_rank']}" if f["best_baseline"] else "—"
        rows.append(
            [f["id"], f["kind"], f["query"], str(f["lore_rank"] or "—"), base,
             str(f["lore_hits"]) + (" (short)" if f["short"] else ""), dropped, top]
        )  # fmt: skip
    return rows


def _failures_section(vaults: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Failures seen",
        "",
        "Queries where lore misses (no relevant note in its top 10), ranks the first relevant "
        "note below the best baseline, or returns fewer than 10 notes where bm25s returns 10. "
        "`dropped` = query terms lore left out (`--explain`); the JSON has each one's plan and "
        "top hits with their matched terms and field scores.",
        "",
    ]
    for entry in vaults:
        fails = entry.get("failures")
        if fails is None:
            continue
        lines += [f"### {entry['vault']}: {len(fails)} of {entry['queries']} queries", ""]
        if fails:
            header = ["id", "kind", "query", "lore rank", "best baseline rank", "lore notes",
                      "dropped", "lore's first hit"]  # fmt: skip
            lines += md_table(header, _failure_rows(entry)) + [""]
            if len(fails) > MAX_FAILURES_SHOWN:
                lines += [f"({len(fails) - MAX_FAILURES_SHOWN} more in the JSON.)", ""]
    return lines


def render(payload: dict[str, Any]) -> str:
    lines = ["# Real-vault benchmark", "", *info_lines(payload), ""]
    lines += [f"> {n}" for n in payload["notes"]] + ([""] if payload["notes"] else [])
    for entry in payload["vaults"]:
        lines += _vault_section(entry)
    lines += _cli_section(payload["cli"])
    kinds = "; ".join(f"`{k}`: {v}" for k, v in KINDS.items())
    lines += [
        "## Columns",
        "",
        "R@k = share of a query's relevant notes in the top k; MRR@10 = mean 1/rank of the "
        "first relevant note (0 past rank 10); nDCG@10 with binary relevance; index s = full "
        "index build (lore: `open` + `sync` into a fresh index outside the vault); p50/p95 ms "
        "= per-query wall time in-process; no hits = queries with an empty result. Baselines "
        "index each note's file stem + its whole text (front matter included). Query kinds: "
        f"{kinds}. Queries: `bench/realvault_queries/<vault>.jsonl`, written by hand.",
        "",
    ]
    lines += _failures_section(payload["vaults"])  # last: a diagnosis by hand may follow it
    return "\n".join(lines)
