"""What reading a search's postings from PostgreSQL costs in other stored formats (issue 15).

    .venv/bin/python -m bench.pg_read_format --size 1000000

Runs bench.scale's sampled queries (`search(q, limit=10)`, mode 4) on the index
bench.scale_search keeps, with lore's read cache off, and records the terms whose postings
each search reads (pg_packs.term_postings). Those terms' blocks are then copied into scratch
tables of the same database in other formats, and each search's reads are replayed in
each: one statement per lexicon and search (as pg_packs.term_postings reads the blocks),
fetched in binary and decoded with numpy into what lore scores. Formats
(lore.store.pg_records):

- `stored`: the index's own blocks: block records, 12 bytes a note's posting (four
  columns), 9 a part's, which PostgreSQL leaves uncompressed;
- `wide`: the row record (an 8-byte document, a 4-byte length and count per column: 28
  bytes a note's posting, 16 a part's), compressed as the server does by default (pglz):
  the blocks' format before m009_block_records;
- `wide plain`: the same, uncompressed (STORAGE PLAIN).

Each search's reads are replayed three times per format, the formats' order turning, and
the median kept. Nothing of the index is changed; the scratch schema is dropped at the
end. Writes bench/results/pg_read_format_<size>.{md,json} unless --no-write. (The results
of 6b91293, before m009, compared the wide blocks then stored with 12-byte records.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from bench import pg_server
from bench.report import fmt, info_lines, md_table, run_info, write_outputs
from bench.scale import PG_VAULT, WORK_DIR
from bench.scale_search import KEPT_SERVER

SCRATCH = "lore_read_format"  # the scratch schema
FORMATS = ("stored", "wide", "wide plain")
REPEATS = 3

Reads = list[dict[str, list[int]]]  # per search: the lexicon's packs table -> term ids


def record_reads(vault: str, db: str, queries: Sequence[str]) -> Reads:
    """The terms each search reads postings of, per lexicon (the read cache off)."""
    import lore
    from lore.store import pg_cache, pg_lexical, pg_packs, pg_phrases

    room, pg_cache.MAX_BYTES = pg_cache.MAX_BYTES, 0  # every search reads every term it needs
    reads: Reads = []
    real = pg_packs.term_postings

    def recorded(conn: Any, lx: Any, term_ids: Any, cache: Any) -> Any:
        reads[-1].setdefault(lx.packs, []).extend(int(t) for t in term_ids)
        return real(conn, lx, term_ids, cache)

    pg_lexical.term_postings = recorded  # type: ignore[assignment]
    pg_phrases.term_postings = recorded  # type: ignore[assignment]
    try:
        with lore.open(vault, db=db) as v:
            for q in queries:
                reads.append({})
                v.search(q, limit=10)
    finally:
        pg_lexical.term_postings = real
        pg_phrases.term_postings = real
        pg_cache.MAX_BYTES = room
    return [{t: sorted(set(ids)) for t, ids in r.items()} for r in reads]


def make_scratch(conn: Any, reads: Reads, widths: dict[str, int], schema: str = PG_VAULT) -> None:
    """The scratch tables, for every term read, from the vault's tables in `schema`."""
    import numpy as np

    from lore.store.pg_records import block_dtype, row_dtype

    conn.execute(f"DROP SCHEMA IF EXISTS {SCRATCH} CASCADE; CREATE SCHEMA {SCRATCH}")
    for packs, width in widths.items():
        terms = sorted({t for r in reads for t in r.get(packs, [])})
        for fmt_name in FORMATS[1:]:
            storage = " STORAGE PLAIN" if fmt_name.endswith("plain") else ""
            conn.execute(
                f"CREATE TABLE {_table(packs, fmt_name, schema)}"
                f" (term_id integer, first_doc bigint, data bytea{storage})"
            )
        rows = conn.execute(
            f"SELECT term_id, first_doc, data FROM {schema}.{packs} WHERE term_id = ANY(%s)",
            (terms,),
            binary=True,
        )
        out = []
        for term_id, first, data in rows:
            stored = np.frombuffer(bytes(data), dtype=block_dtype(width))
            wide = np.zeros(len(stored), dtype=row_dtype(width))
            for field in ("doc", "len", "tf"):
                wide[field] = stored[field]
            out.append((term_id, first, wide.tobytes()))
        for fmt_name in FORMATS[1:]:
            with conn.cursor() as cur:
                table = _table(packs, fmt_name, schema)
                with cur.copy(f"COPY {table} (term_id, first_doc, data) FROM STDIN") as copy:
                    for row in out:
                        copy.write_row(row)
            conn.execute(f"CREATE INDEX ON {_table(packs, fmt_name, schema)} (term_id)")
            conn.execute(f"ANALYZE {_table(packs, fmt_name, schema)}")


def _table(packs: str, fmt_name: str, schema: str = PG_VAULT) -> str:
    """The table of a lexicon's blocks in this format (the index's own: `stored`)."""
    if fmt_name == "stored":
        return f"{schema}.{packs}"
    return f"{SCRATCH}.{packs}_{fmt_name.replace(' ', '_')}"


def read_once(
    conn: Any, packs: str, fmt_name: str, terms: list[int], width: int, schema: str = PG_VAULT
) -> tuple[int, dict[int, Any]]:
    """Read these terms' blocks in this format and decode them as lore scores them
    (pg_packs.Postings: documents, lengths, counts): the bytes read, and the postings."""
    from lore.store.pg_packs import Postings

    chunks: dict[int, list[bytes]] = defaultdict(list)
    sql = f"SELECT term_id, data FROM {_table(packs, fmt_name, schema)} WHERE term_id = ANY(%s)"
    for term_id, data in conn.execute(sql, (terms,), binary=True):
        chunks[term_id].append(bytes(data))
    size, out = 0, {}
    for term_id, parts in chunks.items():
        packed = b"".join(parts)
        size += len(packed)
        if fmt_name == "stored":
            out[term_id] = Postings.decode(packed, b"", width)
        else:  # the row record
            out[term_id] = Postings.decode(b"", packed, width)
    return size, out


def replay(
    conn: Any, reads: Reads, widths: dict[str, int], schema: str = PG_VAULT
) -> dict[str, Any]:
    """Each search's reads in each format: the median of REPEATS, in ms, and its bytes."""
    ms: dict[str, list[float]] = {f: [] for f in FORMATS}
    mb: dict[str, list[float]] = {f: [] for f in FORMATS}
    for n, r in enumerate(reads):
        times: dict[str, list[float]] = {f: [] for f in FORMATS}
        sizes: dict[str, int] = {}
        for k in range(REPEATS):
            order = FORMATS[(n + k) % len(FORMATS) :] + FORMATS[: (n + k) % len(FORMATS)]
            for f in order:
                t = time.perf_counter()
                sizes[f] = sum(
                    read_once(conn, p, f, ids, widths[p], schema)[0] for p, ids in r.items()
                )
                times[f].append((time.perf_counter() - t) * 1000)
        for f in FORMATS:
            ms[f].append(statistics.median(times[f]))
            mb[f].append(sizes[f] / 2**20)
    return {"ms": ms, "mb": mb}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--database", help="default: lore_kept_<size> (bench.scale_search's)")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    import psycopg

    from lore.store.pg_schema import NOTES, PARTS

    server = pg_server.kept(KEPT_SERVER)
    database = args.database or f"lore_kept_{args.size}"
    db = server.database_url(database) + f"&vault={PG_VAULT}"
    vault = WORK_DIR / f"vault-{args.size}-seed0"
    queries_file = WORK_DIR / "queries-seed0.json"
    if not vault.is_dir() or not queries_file.is_file():
        p.error(f"no vault {vault.name} or queries: run `python -m bench.scale --sizes "
                f"{args.size} --generate-only` first")  # fmt: skip
    queries = json.loads(queries_file.read_text(encoding="utf-8"))[: args.queries]
    reads = record_reads(str(vault), db, queries)
    widths = {NOTES.packs: NOTES.width, PARTS.packs: PARTS.width}
    with psycopg.connect(server.database_url(database), autocommit=True) as conn:
        make_scratch(conn, reads, widths)
        try:
            for r in reads[:5]:  # the scratch tables into the server's cache, as the index is
                for f in FORMATS:
                    for packs, ids in r.items():
                        read_once(conn, packs, f, ids, widths[packs])
            result = replay(conn, reads, widths)
            sizes = {
                f: {
                    packs: int(
                        conn.execute(
                            "SELECT pg_total_relation_size(%s::regclass)", (_table(packs, f),)
                        ).fetchone()[0]
                        if f != "stored"
                        else 0
                    )
                    for packs in widths
                }
                for f in FORMATS
            }
        finally:
            conn.execute(f"DROP SCHEMA IF EXISTS {SCRATCH} CASCADE")
    info = run_info("bench.pg_read_format") | {"size": args.size, "queries": len(queries)}
    text = render(info, result, sizes)
    print(text)
    if not args.no_write:
        data = {**info, **result, "scratch_bytes": sizes, "reads": reads}
        write_outputs(f"pg_read_format_{args.size}", text, data)
    return 0


def render(info: dict[str, Any], result: dict[str, Any], sizes: dict[str, Any]) -> str:
    median: Callable[[list[float]], float] = statistics.median
    base = median(result["ms"]["stored"])
    rows = [
        [
            f,
            fmt(median(result["ms"][f]), 1),
            fmt(statistics.fmean(result["ms"][f]), 1),
            fmt(sorted(result["ms"][f])[int(0.95 * (len(result["ms"][f]) - 1))], 1),
            fmt(median(result["ms"][f]) / base, 2),
            fmt(statistics.fmean(result["mb"][f]), 2),
            "" if f == "stored" else fmt(sum(sizes[f].values()) / 2**20, 0),
        ]
        for f in FORMATS
    ]
    lines = [
        f"# Reading a search's postings in other stored formats ({info['size']} notes)",
        "",
        *info_lines(info),
        "",
        *md_table(
            ["format", "p50 ms", "mean ms", "p95 ms", "p50 vs stored", "MB read", "scratch MB"],
            rows,
        ),
        "",
        f"{info['queries']} of bench.scale's sampled queries; per search, the postings of the"
        " terms it reads (lore's read cache off), read in one statement per lexicon and"
        " decoded as lore scores them; the median of 3 replays, formats in turn. MB read:"
        " the packed bytes a search receives. Scratch MB: the scratch table with its index"
        " (the terms read only).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
