"""Traditional ↔ Simplified: lore's retrieval when the query and the notes are in different
scripts (issue 17), with each step of lore.derive.fold on and off.

    .venv/bin/python -m bench.folding [--modes words,chars,off] [--limit-queries N]
                                      [--variants "same script,queries s2twp"]

On cmrc2018_trial (Simplified questions, Simplified passages, 2,000 DRCD distractors that
were Traditional and were converted to Simplified for the set):
- same script: the set as it is (the baseline every variant is held to);
- queries s2t / s2twp: the questions converted to Traditional with OpenCC, character by
  character (s2t) and with Taiwan words (s2twp: 软件 → 軟體, 信息 → 資訊);
- DRCD back to Traditional: the distractors converted back with s2twp, questions as they
  are (Simplified), so they compete again as the Traditional text they were;
- corpus s2t / s2twp: every passage in Traditional, questions in Simplified.
Folding modes: words (lore: characters, and Taiwan / Hong Kong words as alternatives),
chars (characters only), off (no folding). Target: MRR@10 of every cross-script variant
within 0.01 of same script, in mode words; same script not lower than without folding.
Also the index size and the indexing time of each corpus in each mode.

Writes bench/results/folding.md and folding.json (unless --no-write; --out names others).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import datasets
from bench.lore_system import LoreSystem, import_lore
from bench.metrics import evaluate
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

SET = "cmrc2018_trial"
K = 10
TARGET = 0.01
MODES = ("words", "chars", "off")


def converter(config: str) -> Callable[[str], str]:
    import opencc  # the bench extra: OpenCC's own converters make the cross-script sets

    return opencc.OpenCC(f"{config}.json").convert


def corpora(ds: datasets.DataSet) -> dict[str, list[datasets.Doc]]:
    """The corpora the variants index, by name."""
    s2t, s2twp = converter("s2t"), converter("s2twp")

    def convert(doc: datasets.Doc, how: Callable[[str], str]) -> datasets.Doc:
        return replace(doc, title=how(doc.title), text=how(doc.text))

    return {
        "simplified": ds.docs,
        "drcd-traditional": [convert(d, s2twp) if d.id.startswith("drcd_") else d for d in ds.docs],
        "s2t": [convert(d, s2t) for d in ds.docs],
        "s2twp": [convert(d, s2twp) for d in ds.docs],
    }


# (variant, corpus, how the queries are converted)
VARIANTS: list[tuple[str, str, str | None]] = [
    ("same script", "simplified", None),
    ("queries s2t", "simplified", "s2t"),
    ("queries s2twp", "simplified", "s2twp"),
    ("DRCD back to Traditional", "drcd-traditional", None),
    ("corpus s2t", "s2t", None),
    ("corpus s2twp", "s2twp", None),
]


def index_size(system: LoreSystem) -> int:
    db = Path(system._vault.db_path)
    system._vault.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def run(
    mode: str, lore: Any, ds: datasets.DataSet, limit: int | None, variants: set[str]
) -> list[dict[str, Any]]:
    from lore.derive import fold

    fold.use(mode)
    queries = ds.judged_queries()[:limit] if limit else ds.judged_queries()
    texts = {"": [q.text for q in queries]}
    for how in ("s2t", "s2twp"):
        convert = converter(how)
        texts[how] = [convert(q.text) for q in queries]
    out: list[dict[str, Any]] = []
    wanted = {corpus for variant, corpus, _how in VARIANTS if variant in variants}
    for corpus_name, docs in corpora(ds).items():
        if corpus_name not in wanted:
            continue
        system = LoreSystem(lore)
        try:
            system.prepare(docs)
            start = time.perf_counter()
            system.index(docs)
            index_s = time.perf_counter() - start
            size = index_size(system)
            for variant, corpus, how in VARIANTS:
                if corpus != corpus_name or variant not in variants:
                    continue
                latencies: list[float] = []
                ranked: dict[str, list[str]] = {}
                for q, text in zip(queries, texts[how or ""], strict=True):
                    t = time.perf_counter()
                    ranked[q.id] = system.search(text, K)
                    latencies.append((time.perf_counter() - t) * 1000)
                metrics = evaluate(ranked, ds.qrels, K)
                out.append(
                    {
                        "mode": mode,
                        "variant": variant,
                        "corpus": corpus,
                        "queries": how or "as they are",
                        "metrics": metrics,
                        "index_s": index_s,
                        "index_bytes": size,
                        "p50_ms": statistics.median(latencies),
                    }
                )
                print(
                    f"   {mode:6s} {variant:26s} MRR@10 {metrics['MRR@10']:.3f}"
                    f"  index {index_s:.1f}s {size / 1e6:.1f} MB",
                    file=sys.stderr,
                )
        finally:
            system.close()
    fold.use("words")
    return out


def render(info: dict[str, Any], rows: list[dict[str, Any]], n_queries: int) -> str:
    lines = ["# Traditional ↔ Simplified (issue 17)", "", *info_lines(info), ""]
    lines += [
        f"{SET}: {n_queries} Simplified questions, 256 passages + 2,000 DRCD distractors. "
        "Folding modes: words = lore (characters, and Taiwan / Hong Kong words as "
        "alternatives); chars = characters only; off = no folding.",
        "",
    ]
    base = {r["mode"]: r["metrics"]["MRR@10"] for r in rows if r["variant"] == "same script"}
    header = ["variant", "corpus", "queries", *(f"MRR@10 {m}" for m in base), "Δ words"]
    table = []
    for variant, corpus, how in VARIANTS:
        by_mode = {r["mode"]: r for r in rows if r["variant"] == variant}
        if not by_mode:
            continue
        cells = [fmt(by_mode[m]["metrics"]["MRR@10"]) if m in by_mode else "—" for m in base]
        delta = "—"
        if "words" in by_mode and "words" in base:
            d = by_mode["words"]["metrics"]["MRR@10"] - base["words"]
            delta = f"{d:+.3f}" + ("" if abs(d) <= TARGET or variant == "same script" else " !")
        table.append([variant, corpus, how or "as they are", *cells, delta])
    lines += md_table(header, table) + [""]
    lines += [
        f"Target: every variant within {TARGET} of same script in mode words (Δ words; "
        "`!` marks a miss).",
        "",
        "## Index size and indexing time",
        "",
    ]
    header = ["corpus", *(f"{m}: MB" for m in base), *(f"{m}: index s" for m in base)]
    table = []
    for corpus in dict.fromkeys(c for _v, c, _h in VARIANTS):
        by_mode = {r["mode"]: r for r in rows if r["corpus"] == corpus}
        if not by_mode:
            continue
        table.append(
            [
                corpus,
                *(fmt(by_mode[m]["index_bytes"] / 1e6, 2) if m in by_mode else "—" for m in base),
                *(fmt(by_mode[m]["index_s"], 2) if m in by_mode else "—" for m in base),
            ]
        )
    lines += md_table(header, table) + [""]
    lines += [
        "Index s: open + full sync of the written vault (one run each, on a shared 2-core "
        "machine: compare within a row). MB: the index file after a checkpoint.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.folding", description=__doc__)
    p.add_argument("--modes", default=",".join(MODES), help="comma-separated, from words,chars,off")
    p.add_argument("--limit-queries", type=int, metavar="N")
    p.add_argument(
        "--variants",
        default=",".join(v for v, _c, _h in VARIANTS),
        help="comma-separated variant names (default: all)",
    )
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--out", default="folding", help="results file stem under bench/results/")
    args = p.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    lore, note = import_lore()
    if lore is None:
        raise SystemExit(note)
    info = run_info("bench.folding")
    ds = datasets.load(SET)
    n = len(ds.judged_queries()[: args.limit_queries or None])
    rows: list[dict[str, Any]] = []
    for mode in modes:
        print(f"== folding {mode}", file=sys.stderr)
        rows += run(mode, lore, ds, args.limit_queries, set(args.variants.split(",")))
    markdown = render(info, rows, n)
    print(markdown)
    if not args.no_write:
        md, js = write_outputs(args.out, markdown, {**info, "set": SET, "k": K, "rows": rows})
        print(f"wrote {md} and {js}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
