"""Agent-memory benchmark: lore's memory path against plain search on a generated
multi-session dialogue set (bench/memory_data.py).

    .venv/bin/python -m bench.memory [--seed N] [--sessions N] [--budget BYTES] [--no-write]

The vault is built the way an agent would build it: every session's raw transcript is kept
as a note (`sessions/`), digested into that day's daily note with `Vault.digest`, and the
people and projects have entity cards with aliases. Then each question is asked three ways:

- `search (plain)`:   `vault.search(q, expand_aliases=False)`, full text only
- `search (aliases)`: `vault.search(q)`, with alias expansion from the entity cards
- `lookup (memory)`:  `vault.lookup(q)`, L1 → L2 (entry-level, decay, trust) → L3 → L4
- `lookup (no decay)` / `lookup (strong decay)`: the same with `decay_floor = 1.0` / `0.3`
  (ablations of activity decay; the default is 0.9)

A hit counts for the session it comes from (its transcript or its section of the daily
note; entity cards count for none). Evidence coverage: the share of a question's proof
tokens (decision numbers, lessons) found in the `context` text, against the search snippets
of the same query cut to the same budget. The snapshot is scored on the follow-up numbers
of the last 7 days' sessions. Writes bench/results/memory.{md,json} unless --no-write.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.datasets import REPO_ROOT
from bench.lore_system import import_lore
from bench.memory_data import MemorySet, Question, entity_cards, generate
from bench.metrics import evaluate, percentile
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

K = 10
WORK = REPO_ROOT / "bench" / ".work"
SYSTEMS = (
    "search (plain)",
    "search (aliases)",
    "lookup (memory)",
    "lookup (no decay)",
    "lookup (strong decay)",
)
ABLATIONS = {
    "lookup (no decay)": "decay_floor = 1.0\n",
    "lookup (strong decay)": "decay_floor = 0.3\n",
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sessions", type=int, default=60)
    p.add_argument("--budget", type=int, default=4096, help="context budget in bytes")
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    return p.parse_args(argv)


def build_vault(lore: Any, data: MemorySet, root: Path) -> tuple[Any, dict[str, float]]:
    if root.exists():
        shutil.rmtree(root)
    (root / ".lore").mkdir(parents=True)
    (root / ".lore" / "config.toml").write_text(
        f'[memory]\ntoday = "{data.today}"\n', encoding="utf-8"
    )
    for rel, text in entity_cards(data).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "sessions").mkdir()
    for s in data.sessions:
        (root / "sessions" / f"{s.date}-{s.sid}.md").write_text(s.markdown(), encoding="utf-8")
    vault = lore.open(root)
    t0 = time.perf_counter()
    vault.sync()
    sync_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for s in data.sessions:
        vault.digest(s.jsonl(), name=f"{s.sid}.jsonl")
    digest_s = time.perf_counter() - t0
    return vault, {
        "sync_s": sync_s,
        "digest_s": digest_s,
        "digest_per_session_ms": 1000 * digest_s / len(data.sessions),
    }


def session_of(data: MemorySet) -> Callable[[str], str | None]:
    by_date = {s.date: s.sid for s in data.sessions}

    def find(path: str) -> str | None:
        name = path.rsplit("/", 1)[-1].removesuffix(".md")
        if path.startswith("sessions/"):
            return name.rsplit("-", 1)[-1]
        if path.startswith("memory/"):
            return by_date.get(name)
        return None

    return find


def ranked(hits: Sequence[Any], find: Callable[[str], str | None]) -> list[str]:
    out: list[str] = []
    for hit in hits:
        sid = find(hit.path)
        if sid is not None and sid not in out:
            out.append(sid)
    return out


def run_system(
    name: str, vault: Any, questions: list[Question], find: Callable[[str], str | None]
) -> dict[str, Any]:
    runs: dict[str, list[str]] = {}
    levels: dict[str, int] = {}
    latencies: list[float] = []
    config = vault.root / ".lore" / "config.toml"
    settings = config.read_text(encoding="utf-8")
    if name in ABLATIONS:
        config.write_text(settings + ABLATIONS[name], encoding="utf-8")
    for q in questions:
        t0 = time.perf_counter()
        if name.startswith("lookup"):
            result = vault.lookup(q.text, limit=K)
            hits = result.hits
            levels[result.level] = levels.get(result.level, 0) + 1
        else:
            hits = vault.search(q.text, limit=K, expand_aliases=name == "search (aliases)")
        latencies.append((time.perf_counter() - t0) * 1000)
        runs[q.qid] = ranked(hits, find)
    config.write_text(settings, encoding="utf-8")
    qrels = {q.qid: q.evidence for q in questions}
    by_kind: dict[str, dict[str, float]] = {}
    for kind in sorted({q.kind for q in questions}):
        subset = {q.qid: runs[q.qid] for q in questions if q.kind == kind}
        by_kind[kind] = evaluate(subset, qrels, K)
    return {
        "system": name,
        "metrics": evaluate(runs, qrels, K),
        "by_kind": by_kind,
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "levels": levels,
    }


def coverage(text: str, tokens: Sequence[str]) -> float:
    return sum(1 for t in tokens if t in text) / len(tokens) if tokens else 0.0


def snippets_within(hits: Sequence[Any], budget: int) -> str:
    out, used = [], 0
    for hit in hits:
        line = f"{hit.path} ({hit.date}): {hit.snippet}\n"
        size = len(line.encode("utf-8"))
        if used + size > budget:
            break
        out.append(line)
        used += size
    return "".join(out)


def views(vault: Any, data: MemorySet, questions: list[Question], budget: int) -> dict[str, Any]:
    sizes, ctx_cov, snip_cov, full = [], [], [], 0
    for q in questions:
        view = vault.context(q.text, budget=budget)
        sizes.append(view.bytes)
        ctx_cov.append(coverage(view.text, q.tokens))
        full += coverage(view.text, q.tokens) == 1.0
        snip_cov.append(coverage(snippets_within(vault.search(q.text, limit=K), budget), q.tokens))
    snap = vault.snapshot()
    last = data.sessions[-7:]
    carried = sum(1 for s in last if s.followup_code in snap.text)
    return {
        "context_bytes_mean": sum(sizes) / len(sizes),
        "context_bytes_max": max(sizes),
        "context_coverage": sum(ctx_cov) / len(ctx_cov),
        "context_full": full / len(questions),
        "snippets_coverage": sum(snip_cov) / len(snip_cov),
        "snapshot_bytes": snap.bytes,
        "snapshot_followups": f"{carried}/{len(last)}",
        "snapshot_followups_share": carried / len(last),
        "snapshot_text": snap.text,
    }


def render(info: dict[str, Any], data: MemorySet, out: dict[str, Any]) -> str:
    kinds = sorted({q.kind for q in data.questions})
    counts = {k: sum(1 for q in data.questions if q.kind == k) for k in kinds}
    lines = ["# Agent-memory benchmark", "", *info_lines(info), ""]
    lines += [
        f"Generated set (seed {out['seed']}): {len(data.sessions)} sessions, one a day, "
        f"{len(data.questions)} questions ({', '.join(f'{n} {k}' for k, n in counts.items())}); "
        "see bench/memory_data.py. Vault: raw transcripts + daily notes written by "
        f"`digest` + {len(entity_cards(data))} entity cards. "
        f"Build: sync {out['build']['sync_s']:.2f} s, digest "
        f"{out['build']['digest_per_session_ms']:.1f} ms/session.",
        "",
        "## Retrieval of the evidence sessions",
        "",
    ]
    header = ["system", "R@5", "MRR@10", "R@1", "nDCG@10", "p50 ms", "p95 ms"]
    rows = [
        [
            r["system"],
            fmt(r["metrics"]["R@5"]),
            fmt(r["metrics"]["MRR@10"]),
            fmt(r["metrics"]["R@1"]),
            fmt(r["metrics"]["nDCG@10"]),
            fmt(r["p50_ms"], 1),
            fmt(r["p95_ms"], 1),
        ]
        for r in out["systems"]
    ]
    lines += md_table(header, rows) + [""]
    header = ["system", *[f"{k} R@5 / MRR@10" for k in kinds]]
    rows = [
        [
            r["system"],
            *[f"{fmt(r['by_kind'][k]['R@5'])} / {fmt(r['by_kind'][k]['MRR@10'])}" for k in kinds],
        ]
        for r in out["systems"]
    ]
    lines += ["By question kind:", "", *md_table(header, rows), ""]
    memory = next(r for r in out["systems"] if r["system"] == "lookup (memory)")
    lines += [f"lookup levels: {memory['levels']}", ""]
    v = out["views"]
    lines += [
        "## Context and snapshot",
        "",
        *md_table(
            ["output", "bytes", "evidence carried"],
            [
                [
                    f"`context` (budget {out['budget']})",
                    f"mean {v['context_bytes_mean']:.0f}, max {v['context_bytes_max']}",
                    f"{v['context_coverage']:.3f} of proof tokens; all of them in "
                    f"{v['context_full']:.3f} of questions",
                ],
                [
                    f"search snippets cut to {out['budget']} B",
                    "≤ budget",
                    f"{v['snippets_coverage']:.3f} of proof tokens",
                ],
                [
                    "`snapshot`",
                    str(v["snapshot_bytes"]),
                    f"follow-ups of the last 7 sessions: {v['snapshot_followups']}",
                ],
            ],
        ),
        "",
        "R@k: share of a question's evidence sessions in the top k (hits mapped to sessions, "
        "entity cards dropped, duplicates counted once); MRR@10: 1/rank of the first "
        "evidence session. Proof tokens: the decision numbers (D017) or lesson texts of the "
        "evidence sessions.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    info = run_info("bench.memory")
    lore, note = import_lore()
    if lore is None:
        print(f"lore is not importable: {note}", file=sys.stderr)
        return 1
    data = generate(args.seed, args.sessions)
    root = WORK / f"memory-seed{args.seed}"
    vault, build = build_vault(lore, data, root)
    try:
        find = session_of(data)
        systems = [run_system(name, vault, data.questions, find) for name in SYSTEMS]
        for r in systems:
            m = r["metrics"]
            print(
                f"{r['system']:18s} R@5 {m['R@5']:.3f}  MRR@10 {m['MRR@10']:.3f}"
                f"  p50 {r['p50_ms']:.1f} ms",
                file=sys.stderr,
            )
        out = {
            "seed": args.seed,
            "budget": args.budget,
            "build": build,
            "systems": systems,
            "views": views(vault, data, data.questions, args.budget),
            "questions": len(data.questions),
            "sessions": len(data.sessions),
        }
    finally:
        vault.close()
    markdown = render(info, data, out)
    print(markdown)
    if not args.no_write:
        out["info"] = info
        write_outputs("memory", markdown, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
