"""Dictionary words of three and four characters as terms on PostgreSQL (issue 15):
searches of an index holding them against one that does not, on the same vault, query by
query.

    .venv/bin/python -m bench.pg_words --size 100000 --build
    .venv/bin/python -m bench.pg_words --size 100000

`--build` indexes bench.scale's vault (`python -m bench.scale --sizes <size>
--generate-only` makes it) twice into the kept server (bench/.work/pgdata, as
bench.scale_search keeps it): `lore_words_<size>_with`, as lore makes an index, and
`lore_words_<size>_without`, with the mark of its dictionary words taken away before the
first sync, as an index made before them is. Each is built in a process of its own: its
time, peak memory, size and postings are reported (then it is vacuumed, untimed, so that
autovacuum does not go through it while the next is built).

Then each round runs in a fresh process: bench.scale's sampled queries (`search(q,
limit=10)`, mode 4) on both indexes, alternating query by query (which goes first
alternates too), each timed, with the time spent counting long phrases in the token
streams (pg_phrases._count_phrases). Both answer the same (checked: the same notes and
scores); the report gives each round's p50, p95 and mean, those of the Chinese queries,
and the median of the per-query ratio. Writes bench/results/pg_words.{md,json}
unless --no-write.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import pg_server
from bench.metrics import percentile
from bench.report import fmt, info_lines, md_table, run_info, write_outputs
from bench.scale import PG_VAULT, WORK_DIR, peak_rss_mb
from bench.scale_search import KEPT_SERVER, in_child

KINDS = ("without", "with")


def build(vault: Path, db: str, kind: str) -> dict[str, Any]:
    """Index the vault from nothing in this process (`without`: as an index made before
    dictionary words were terms)."""
    import lore
    from lore.store.pg_schema import WORDS_META

    t = time.perf_counter()
    with lore.open(vault, db=db) as v:
        if kind == "without":
            v.store.delete_meta(WORDS_META)
        added = len(v.sync().added)
        took = time.perf_counter() - t
        # Vacuumed here, untimed: autovacuum would otherwise go through this index while
        # the next one is built, and count against it.
        v.store.query("VACUUM")  # type: ignore[attr-defined]
        postings, terms = [
            v.store.query(sql)[0][0]  # type: ignore[attr-defined]
            for sql in (
                "SELECT (SELECT coalesce(sum(n), 0) FROM lex_packs)"
                " + (SELECT count(*) FROM lex_postings)"
                " + (SELECT coalesce(sum(n), 0) FROM part_packs)"
                " + (SELECT count(*) FROM part_postings)",
                "SELECT (SELECT count(*) FROM lex_terms) + (SELECT count(*) FROM part_terms)",
            )
        ]
    return {
        "build_s": took,
        "added": added,
        "peak_rss_mb": peak_rss_mb(),
        "postings": int(postings),
        "terms": int(terms),
    }


def paired(vault: Path, dbs: dict[str, str], queries: list[str]) -> dict[str, Any]:
    """Every query on both indexes, alternating; the answers compared."""
    import lore
    from lore.store import pg_phrases

    opened = {kind: lore.open(vault, db=dbs[kind]) for kind in KINDS}
    counting = dict.fromkeys(KINDS, 0.0)
    current = [KINDS[0]]
    real = pg_phrases._count_phrases

    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            counting[current[0]] += time.perf_counter() - t

    pg_phrases._count_phrases = timed  # type: ignore[assignment]
    latencies: dict[str, list[float]] = {kind: [] for kind in KINDS}
    differ = 0
    try:
        for i, query in enumerate(queries):
            answers = {}
            for kind in KINDS if i % 2 == 0 else KINDS[::-1]:
                current[0] = kind
                t = time.perf_counter()
                hits = opened[kind].search(query, limit=10)
                latencies[kind].append((time.perf_counter() - t) * 1000)
                answers[kind] = [(h.path, round(h.score, 6)) for h in hits]
            differ += answers["with"] != answers["without"]
    finally:
        pg_phrases._count_phrases = real  # type: ignore[assignment]
        for v in opened.values():
            v.close()
    return {
        "latencies_ms": latencies,
        "counting_ms_per_query": {k: s * 1000 / len(queries) for k, s in counting.items()},
        "answers_differ": differ,
    }


def _summary(latencies: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "mean_ms": statistics.fmean(latencies),
    }


def render(info: dict[str, Any], run: dict[str, Any]) -> str:
    lines = [
        "# Dictionary words of three and four characters as terms on PostgreSQL",
        "",
        *info_lines(info),
        "",
    ]
    if run.get("builds"):
        lines += md_table(
            ["index", "notes", "build s", "peak RSS MB", "index MB", "postings", "terms"],
            [
                [
                    kind,
                    str(b["added"]),
                    fmt(b["build_s"], 1),
                    fmt(b["peak_rss_mb"], 0),
                    fmt(b["index_mb"], 0),
                    str(b["postings"]),
                    str(b["terms"]),
                ]
                for kind, b in run["builds"].items()
            ],
        )
        lines.append("")
    chinese = run["chinese"]
    rows = []
    for n, result in enumerate(run["rounds"], 1):
        lat = result["latencies_ms"]
        ratios = [w / o for w, o in zip(lat["with"], lat["without"], strict=True)]
        for kind in KINDS:
            s, zh = _summary(lat[kind]), _summary([lat[kind][i] for i in chinese])
            rows.append(
                [
                    str(n),
                    kind,
                    fmt(s["p50_ms"], 1),
                    fmt(s["p95_ms"], 1),
                    fmt(s["mean_ms"], 1),
                    fmt(zh["p50_ms"], 1),
                    fmt(zh["p95_ms"], 1),
                    fmt(result["counting_ms_per_query"][kind], 1),
                    fmt(statistics.median(ratios), 3) if kind == "with" else "",
                    str(result["answers_differ"]) if kind == "with" else "",
                ]
            )
    lines += md_table(
        [
            "round",
            "index",
            "p50 ms",
            "p95 ms",
            "mean ms",
            f"Chinese ({len(chinese)}) p50 ms",
            "Chinese p95 ms",
            "counting phrases ms/query",
            "median ratio with/without",
            "answers differing",
        ],
        rows,
    )
    lines += [
        "",
        f"{run['size']} notes of bench.scale's vault, {run['queries']} of its sampled queries"
        " (`search(q, limit=10)`, mode 4), each round in a fresh process, both indexes"
        " alternating query by query. Counting phrases: time in pg_phrases._count_phrases"
        " (long phrases counted in the notes' token streams on the server). Answers"
        " differing: queries whose hits (paths and scores) differ between the indexes.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--build-child"]:  # internal: --build-child VAULT DB KIND OUT
        Path(argv[4]).write_text(json.dumps(build(Path(argv[1]), argv[2], argv[3])))
        return 0
    if argv[:1] == ["--paired-child"]:  # internal: --paired-child VAULT DBS QUERIES OUT
        queries = json.loads(Path(argv[3]).read_text(encoding="utf-8"))
        result = paired(Path(argv[1]), json.loads(argv[2]), queries)
        Path(argv[4]).write_text(json.dumps(result))
        return 0
    p = argparse.ArgumentParser(prog="python -m bench.pg_words", description=__doc__)
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--queries", type=int, default=100, help="of bench.scale's sample")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--build", action="store_true", help="index both first")
    p.add_argument("--server-dir", type=Path, default=KEPT_SERVER)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    vault = WORK_DIR / f"vault-{args.size}-seed{args.seed}"
    queries_file = WORK_DIR / f"queries-seed{args.seed}.json"
    if not vault.is_dir() or not queries_file.is_file():
        p.error(f"no vault {vault.name} or queries: run `python -m bench.scale --sizes "
                f"{args.size} --generate-only` first")  # fmt: skip
    queries = json.loads(queries_file.read_text(encoding="utf-8"))[: args.queries]
    sample = WORK_DIR / f"pg-words-queries-{args.queries}.json"
    sample.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
    server = pg_server.kept(args.server_dir)
    info = run_info("bench.pg_words") | {"postgresql": server.version}
    names = {kind: f"lore_words_{args.size}_{kind}" for kind in KINDS}
    dbs = {kind: server.database_url(name) + f"&vault={PG_VAULT}" for kind, name in names.items()}
    run: dict[str, Any] = {"size": args.size, "queries": len(queries), "builds": {}}
    for kind in KINDS if args.build else ():
        server.new_database(names[kind])
        built = in_child("bench.pg_words", ["--build-child", str(vault), dbs[kind], kind])
        built["index_mb"] = server.schema_bytes(names[kind], PG_VAULT) / 2**20
        run["builds"][kind] = built
    missing = [name for name in names.values() if not server.has_database(name)]
    if missing:
        p.error(f"no database {', '.join(missing)}: run with --build first")
    run["chinese"] = [i for i, q in enumerate(queries) if any("\u4e00" <= c <= "\u9fff" for c in q)]
    run["rounds"] = [
        in_child("bench.pg_words", ["--paired-child", str(vault), json.dumps(dbs), str(sample)])
        for _round in range(args.rounds)
    ]
    text = render(info, run)
    print(text)
    if not args.no_write:
        write_outputs("pg_words", text, {**info, "run": run})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
