"""How far a first index can come down towards the floor (issue 18): the time SQLite
itself spends writing lore's index, beside the floor bench.scale measures (the notes read
and inserted as they are into one bare FTS5 table, SQLite's unicode61 tokenizer).

The writer is one process (one transaction, as issue 18 asks); parsing and tokenizing run
in worker processes and can only get cheaper. What SQLite spends inside the writer's
statements is a bound no faster tokenizer moves: it is timed by SQLite itself
(`apsw.Connection.set_profile`, each statement's run time in nanoseconds) and grouped by
statement and table. Runs alternate floor and sync on fresh indexes; medians reported.

    python -m bench.index_floor --notes 10000 --runs 3

Needs bench.scale's generated vault (generated when missing). Writes
bench/results/index_floor.{md,json}.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import datasets, scale
from bench.report import info_lines, run_info, write_outputs

_TARGET = re.compile(
    r"\b(INSERT(?: OR \w+)? INTO|REPLACE INTO|DELETE FROM|UPDATE|FROM)"
    r"\s+(?:['\"]?\w+['\"]?\.)?['\"]?(\w+)",  # FTS5's own: REPLACE INTO 'main'.'fts_data'
    re.I,
)
TOP = 8  # statement groups shown


def statement_group(sql: str) -> str:
    """What a statement does to which table: `INSERT INTO notes`, `FROM fts_sections`."""
    found = _TARGET.search(sql)
    return f"{found.group(1).upper()} {found.group(2)}" if found else sql.split(None, 1)[0]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_sync(vault: Path) -> dict[str, Any]:
    """A first index of `vault` into a new SQLite file, its statements timed by SQLite."""
    import lore

    spent: Counter[str] = Counter()

    def profiled(sql: str, nanoseconds: int) -> None:
        spent[statement_group(sql)] += nanoseconds

    with tempfile.TemporaryDirectory(prefix="lore-index-floor-") as tmp:
        v = lore.open(vault, db=Path(tmp) / "index.sqlite")
        db = v.store.db  # type: ignore[attr-defined]
        db.set_profile(profiled)
        cpu, t = cpu_seconds(), time.perf_counter()
        report = v.sync()
        wall, writer_cpu = time.perf_counter() - t, cpu_seconds() - cpu
        db.set_profile(None)
        v.close()
    if len(report.added) == 0:
        raise RuntimeError(f"the sync of {vault} added no note")
    return {
        "sync_s": wall,
        "writer_cpu_s": writer_cpu,
        "sql_s": sum(spent.values()) / 1e9,
        "groups": {k: v / 1e9 for k, v in spent.most_common()},
    }


def render(info: dict[str, Any], result: dict[str, Any]) -> str:
    floor, sql = result["floor_s"], result["sql_s"]
    runs = ", ".join(f"{f:.2f}" for f in result["every_run"]["floor_s"])
    lines = [
        "# A first index against its floor (issue 18)",
        "",
        *info_lines(info),
        f"- vault: bench.scale's generated vault, {result['notes']} notes,"
        f" {result['bytes'] / 1e6:.1f} MB; jobs: {result['jobs']}; runs: {result['runs']}"
        " (medians)",
        "",
        "| measure | seconds | × floor |",
        "|---|---|---|",
        f"| floor: read + bare FTS5 insert (runs: {runs}) | {floor:.2f} | 1.00 |",
        f"| target: 2.5 × floor | {2.5 * floor:.2f} | 2.50 |",
        f"| lore sync, wall | {result['sync_s']:.2f} | {result['sync_s'] / floor:.2f} |",
        f"| lore writer process, CPU | {result['writer_cpu_s']:.2f}"
        f" | {result['writer_cpu_s'] / floor:.2f} |",
        f"| SQLite inside the writer's statements | {sql:.2f} | {sql / floor:.2f} |",
        "",
        "Where SQLite's time goes (median run):",
        "",
        "| statements | seconds | share |",
        "|---|---|---|",
    ]
    for group, seconds in list(result["groups"].items())[:TOP]:
        lines.append(f"| `{group}` | {seconds:.2f} | {seconds / sql:.0%} |")
    lines += [
        "",
        "floor: bench.scale's `floor_seconds` (every note read and inserted as it is into one"
        " FTS5 table with SQLite's own tokenizer, one transaction, one core). SQLite inside"
        " the writer's statements: the run time SQLite reports for each statement of the"
        " sync (`set_profile`), summed: the full-text tables' own tokenizing and merging,"
        " the notes' rows, the parts, tags, links, pinyin keys, entity cards. It is paid in"
        " the one writer whatever the number of workers, so a sync cannot take less.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.index_floor", description=__doc__)
    p.add_argument("--notes", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    args = p.parse_args(argv)
    info = run_info("bench.index_floor")
    root = datasets.data_root()
    made = scale.ensure_vault(args.notes, args.seed, scale.paragraph_pool(root), False)
    vault = Path(made["vault"])
    floors, syncs = [], []
    for i in range(args.runs):
        floors.append(scale.floor_seconds(vault))
        syncs.append(one_sync(vault))
        print(
            f"run {i + 1}: floor {floors[-1]:.2f} s, {syncs[-1]['sync_s']:.2f} s", file=sys.stderr
        )
    median = sorted(syncs, key=lambda r: r["sync_s"])[len(syncs) // 2]
    result = {
        "notes": args.notes,
        "bytes": made["bytes"],
        "jobs": os.environ.get("LORE_INDEX_JOBS", "auto"),
        "runs": args.runs,
        "floor_s": statistics.median(floors),
        "sync_s": statistics.median(r["sync_s"] for r in syncs),
        "writer_cpu_s": statistics.median(r["writer_cpu_s"] for r in syncs),
        "sql_s": statistics.median(r["sql_s"] for r in syncs),
        "groups": median["groups"],
        "every_run": {"floor_s": floors, "syncs": syncs},
    }
    markdown = render(info, result)
    print(markdown)
    if not args.no_write:
        md_path, json_path = write_outputs("index_floor", markdown, {**info, **result})
        print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
