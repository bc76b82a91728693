"""Pinyin: every Chinese title and entity-card name of a vault, typed as pinyin, finds its
note in the top 3 (issue 17).

    .venv/bin/python -m bench.pinyin [VAULT ...] [--no-write]

For each name with Chinese characters (a note's title; an entity card's name), three
queries as a user with a pinyin keyboard would type them: the Chinese runs as full pinyin
joined up ("zhangsan"), as syllables with spaces ("zhang san"), and as initials ("zs"),
Latin words of the name kept as they are. The reading typed is pypinyin's reading in
context (the one lore indexes first), so this measures the matching and ranking, not
reading errors. A query counts as found when a note of that name is in the top 3 (R@3).
Also the index size of the pinyin tables against the whole index, and the size and time of
a full index with folding and pinyin on, with pinyin off, and with both off (--rounds
runs of each, interleaved; medians of wall and CPU time; --speed-only: that alone).
Default vault: the sample vault (examples/vault). Writes bench/results/pinyin.md and
pinyin.json (--out names others).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.lore_system import import_lore
from bench.report import fmt, info_lines, md_table, run_info, write_outputs

K = 3
FORMS = ("full", "spaced", "initials")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_PIECE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[A-Za-z0-9]+")
SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "vault"


def typed(name: str) -> dict[str, str]:
    """The name as pinyin in each form."""
    import pypinyin

    parts: dict[str, list[str]] = {form: [] for form in FORMS}
    for piece in _PIECE.findall(name):
        if not _HAN.fullmatch(piece):
            for form in FORMS:
                parts[form].append(piece.lower())
            continue
        syllables = pypinyin.lazy_pinyin(piece, style=pypinyin.Style.NORMAL)
        syllables = [s.replace("ü", "v") for s in syllables]
        parts["full"].append("".join(syllables))
        parts["spaced"].append(" ".join(syllables))
        parts["initials"].append("".join(s[0] for s in syllables if s))
    return {form: " ".join(words) for form, words in parts.items()}


def names(vault: Any) -> dict[tuple[str, str], set[str]]:
    """(kind, name) → the paths of the notes it names, for names with Chinese characters."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for path, title in vault.store.query("SELECT path, title FROM notes"):
        if title and _HAN.search(title):
            out[("title", title)].add(path)
    for path, name in vault.store.query(
        "SELECT n.path, e.name FROM entity_defs e JOIN notes n ON n.id = e.note_id"
    ):
        if _HAN.search(name):
            out[("entity card", name)].add(path)
    return out


def table_bytes(vault: Any) -> tuple[int, int]:
    """(bytes of the pinyin tables, bytes of the whole index), from SQLite's dbstat."""
    rows = vault.store.query("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
    sizes = {str(n): int(s) for n, s in rows}
    pinyin = sum(s for n, s in sizes.items() if "pinyin" in n)
    return pinyin, sum(sizes.values())


# (name, folding mode, pinyin derived)
SETUPS = (
    ("folding + pinyin", "words", True),
    ("no pinyin", "words", False),
    ("neither", "off", False),
)


def speed(lore: Any, root: Path, rounds: int) -> dict[str, dict[str, float]]:
    """Median seconds (wall and CPU of this process) and index bytes of a full index of
    `root` in each setup; the setups run forward in one round and backward in the next,
    so a load that changes during the run weighs on each alike."""
    import lore.index.sync as sync
    from lore.derive import fold

    derive = sync.derive_pinyin
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    size: dict[str, int] = {}
    try:
        for round_ in range(rounds):
            for name, mode, pinyin in SETUPS if round_ % 2 == 0 else SETUPS[::-1]:
                fold.use(mode)
                sync.derive_pinyin = derive if pinyin else (lambda *_a, **_k: None)
                with tempfile.TemporaryDirectory() as tmp:
                    db = Path(tmp) / "i.sqlite"
                    with lore.open(root, db=db) as v:
                        start, start_cpu = time.perf_counter(), time.process_time()
                        v.sync()
                        cpu[name].append(time.process_time() - start_cpu)
                        wall[name].append(time.perf_counter() - start)
                        v.store.query("PRAGMA wal_checkpoint(TRUNCATE)")
                    size[name] = sum(p.stat().st_size for p in db.parent.glob("i.sqlite*"))
    finally:
        fold.use("words")
        sync.derive_pinyin = derive
    return {
        name: {
            "median_s": statistics.median(wall[name]),
            "median_cpu_s": statistics.median(cpu[name]),
            "bytes": size[name],
        }
        for name, _m, _p in SETUPS
    }


def measure(lore: Any, root: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, lore.open(root, db=Path(tmp) / "i.sqlite") as v:
        v.sync()
        wanted = names(v)
        found: dict[tuple[str, str], list[int]] = defaultdict(list)
        misses: list[str] = []
        for (kind, name), paths in sorted(wanted.items()):
            for form, query in typed(name).items():
                hits = [h.path for h in v.search(query, limit=K)]
                ok = bool(paths.intersection(hits))
                found[(kind, form)].append(int(ok))
                if not ok and len(misses) < 15:
                    misses.append(f"{kind} {name!r} as {query!r}")
        pinyin_bytes, total_bytes = table_bytes(v)
    return {
        "vault": root.name,
        "names": {k: sum(1 for kk, _n in wanted if kk == k) for k in ("title", "entity card")},
        "r_at_3": {f"{k}/{f}": sum(v) / len(v) for (k, f), v in found.items() if v},
        "queries": {f"{k}/{f}": len(v) for (k, f), v in found.items()},
        "pinyin_bytes": pinyin_bytes,
        "index_bytes": total_bytes,
        "misses": misses,
    }


def render(info: dict[str, Any], results: list[dict[str, Any]]) -> str:
    lines = ["# Pinyin of titles and entity cards (issue 17)", "", *info_lines(info), ""]
    if all("names" in r for r in results):
        lines += _render_recall(results)
    lines += ["## Full index with folding and pinyin on and off (medians)", ""]
    base = SETUPS[-1][0]
    table = []
    for r in results:
        ref = r["speed"][base]
        for name, t in r["speed"].items():
            table.append(
                [
                    r["vault"],
                    name,
                    fmt(t["median_cpu_s"], 2),
                    f"{t['median_cpu_s'] / ref['median_cpu_s']:.2f}x",
                    fmt(t["median_s"], 2),
                    f"{t['median_s'] / ref['median_s']:.2f}x",
                    fmt(t["bytes"] / 1e6, 2),
                    f"{t['bytes'] / ref['bytes']:.2f}x",
                ]
            )
    header = ["vault", "setup", "CPU s", f"vs {base}", "wall s", f"vs {base}", "MB", f"vs {base}"]
    lines += md_table(header, table) + [""]
    lines += [
        "CPU s / wall s: open + full sync into a new index file (CPU: this process's own, the"
        " steadier figure on a shared machine), pypinyin already imported (a first sync in a"
        " new process also pays its import, ~1 s). MB: the file after a checkpoint.",
        "",
    ]
    for r in results:
        if r.get("misses"):
            lines += [f"Misses in {r['vault']} (first {len(r['misses'])}):", ""]
            lines += [f"- {m}" for m in r["misses"]] + [""]
    return "\n".join(lines)


def _render_recall(results: list[dict[str, Any]]) -> list[str]:
    header = [
        "vault",
        "names",
        *(f"{kind} R@3 {form}" for kind in ("title", "entity card") for form in FORMS),
    ]
    rows = []
    for r in results:
        counts = ", ".join(f"{n} {k}s" for k, n in r["names"].items())
        cells = [
            fmt(r["r_at_3"][key]) if (key := f"{kind}/{form}") in r["r_at_3"] else "—"
            for kind in ("title", "entity card")
            for form in FORMS
        ]
        rows.append([r["vault"], counts, *cells])
    size = [
        [
            r["vault"],
            fmt(r["pinyin_bytes"] / 1e6, 3),
            fmt(r["index_bytes"] / 1e6, 2),
            f"{r['pinyin_bytes'] / r['index_bytes']:.1%}",
        ]
        for r in results
    ]
    lines = md_table(header, rows) + [""]
    lines += ["## Index size of the pinyin tables", ""]
    lines += md_table(["vault", "pinyin MB", "index MB", "share"], size) + [""]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pinyin", description=__doc__)
    p.add_argument("vaults", nargs="*", type=Path, default=[SAMPLE])
    p.add_argument("--rounds", type=int, default=3, help="full indexes per setup (default 3)")
    p.add_argument("--speed-only", action="store_true", help="only the full-index table")
    p.add_argument("--out", default="pinyin", help="results file stem under bench/results/")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    lore, note = import_lore()
    if lore is None:
        raise SystemExit(note)
    info = run_info("bench.pinyin")
    results = []
    for root in args.vaults:
        print(f"== {root.name}", file=sys.stderr)
        recall = {"vault": root.name} if args.speed_only else measure(lore, root)
        results.append({**recall, "speed": speed(lore, root, args.rounds)})
    markdown = render(info, results)
    print(markdown)
    if not args.no_write:
        md, js = write_outputs(args.out, markdown, {**info, "k": K, "results": results})
        print(f"wrote {md} and {js}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
