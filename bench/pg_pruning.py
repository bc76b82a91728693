"""What a PostgreSQL search reads, and what block-max pruning could spare it (issue 15).

    .venv/bin/python -m bench.pg_pruning --size 100000

Runs bench.scale's sampled queries (`search(q, limit=10)`, mode 4) on the index
bench.scale_search keeps (`--build` there makes it) and takes every full-text ranking a
search asks of the store (pg_lexical.rank_and_score: the notes' at the hybrid's depth,
their names', their parts'). Each ranking is then replayed alone, to see:

- what it reads: every posting of its terms (each candidate is scored), its candidates and
  the depth it asks for;
- what block-max pruning could spare it: search engines skip the blocks of postings that
  cannot reach the results. Here each term's postings are taken as the index stores them
  (blocks of up to pg_packs.PACK_SIZE documents); the documents are cut at every block's
  ends, and a stretch must be read when the sum, over the query's phrases, of the best
  share a block of theirs covering it may give reaches the score of the last result (ties
  kept). That score is taken from the full ranking: an oracle no real algorithm has before
  it reads, so what is read here is the least block-max could read. Two bounds per block:
  `stored`, from what an index could keep beside each block (each column's largest count,
  the shortest document), and `exact`, the block's best share itself (no bound kept in
  advance is tighter); at the ranking's depth and at depth 10;
- what a posting costs: reading the terms' postings from the server in one statement (as
  pg_packs.term_postings does), decoding them, scoring the candidates (pg_bm25.score) and
  choosing the best (pg_lexical._best), in ns per posting.

Writes bench/results/pg_pruning_<size>.{md,json} unless --no-write.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from bench import pg_server
from bench.report import fmt, info_lines, md_table, run_info, write_outputs
from bench.scale import PG_VAULT, WORK_DIR
from bench.scale_search import KEPT_SERVER

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from lore.store.pg_packs import Postings
    from lore.store.pg_phrases import LexicalQuery, Resolved
    from lore.store.pg_schema import Lexicon

STEPS = ("server", "decode", "score", "best")
BOUNDS = ("stored", "exact")
# The depths block-max is tried at: the ranking's own, the hybrid's pool, a page of results.
DEPTHS = ("asked", 100, 10)


class Ranking(NamedTuple):
    """One ranking a search asked for, as pg_lexical.rank_and_score was called."""

    lx: Lexicon
    query: LexicalQuery
    weights: tuple[float, ...]
    limit: int
    among: tuple[int, ...]

    @property
    def kind(self) -> str:
        if self.lx.postings.startswith("part"):
            return "parts"
        return "names" if self.query.columns else "notes"


class Segment(NamedTuple):
    """A block of one phrase's postings: its documents (None: every note) and their range,
    the most it may add to a score, the term and block it is (for counting reads once),
    and whether it brings candidates."""

    docs: NDArray[np.int64] | None
    first: int
    last: int
    bound: float
    phrase: int
    key: tuple[int, int]
    size: int
    generating: bool


def must_read(segments: Sequence[Segment], theta: float, among: Sequence[int] = ()) -> int:
    """Postings block-max must read to find every document scoring at least `theta`
    (and to score the documents `among`): the blocks covering a stretch of documents where
    some phrase brings candidates and the phrases' bounds add up to `theta` or more. A
    block is counted once, however many phrases share it."""
    import numpy as np

    if not segments:
        return 0
    cuts = np.unique([s.first for s in segments] + [s.last + 1 for s in segments])
    spans = [(int(np.searchsorted(cuts, s.first)), int(np.searchsorted(cuts, s.last + 1)))
             for s in segments]  # fmt: skip
    best: dict[int, NDArray[np.float64]] = {}
    candidates = np.zeros(len(cuts) - 1, dtype=bool)
    for s, (i, j) in zip(segments, spans, strict=True):
        phrase = best.setdefault(s.phrase, np.zeros(len(cuts) - 1))
        np.maximum(phrase[i:j], s.bound, out=phrase[i:j])
        candidates[i:j] |= s.generating
    # A margin for the order the shares are summed in: the bound must not miss a tie.
    live = candidates & (sum(best.values()) * (1 + 1e-9) >= theta)
    if among:
        at = np.searchsorted(cuts, np.asarray(among), side="right") - 1
        live[at[(at >= 0) & (at < len(live))]] = True
    read = {s.key: s.size for s, (i, j) in zip(segments, spans, strict=True) if live[i:j].any()}
    return sum(read.values())


def must_read_known(segments: Sequence[Segment], theta: float, among: Sequence[int] = ()) -> int:
    """What must_read gives when each block's documents are known before its counts are
    read (an index keeping the documents of a block apart from their counts): a block is
    read when it holds a document that some phrase brings and whose bounds (of the blocks
    holding it, and the every-note share) add up to `theta` or more."""
    import numpy as np

    held = [s for s in segments if s.docs is not None and len(s.docs)]
    if not held:
        return 0
    every = sum(s.bound for s in segments if s.docs is None)
    docs = np.concatenate([s.docs for s in held if s.docs is not None])
    unique, inverse = np.unique(docs, return_inverse=True)

    def per_posting(values: list[float]) -> NDArray[np.float64]:
        return np.concatenate(
            [
                np.full(len(s.docs), v)
                for s, v in zip(held, values, strict=True)
                if s.docs is not None
            ]
        )

    bound = np.bincount(inverse, per_posting([s.bound for s in held]), len(unique)) + every
    brought = np.bincount(inverse, per_posting([float(s.generating) for s in held]), len(unique))
    live = (brought > 0) & (bound * (1 + 1e-9) >= theta)
    if among:
        live |= np.isin(unique, np.asarray(among))
    owner = per_posting([float(k) for k in range(len(held))]).astype(np.int64)
    read = {held[k].key: held[k].size for k in np.unique(owner[live[inverse]]).tolist()}
    return sum(read.values())


# What block-max is asked to do: (name, bound, how the blocks to read are found). Ranges:
# a block's documents are known only as its first and last; doc ids: each block's
# documents are read first (kept apart from their counts), only the counts are spared.
VARIANTS: tuple[tuple[str, str, Callable[[Sequence[Segment], float, Sequence[int]], int]], ...] = (
    ("ranges", "stored", must_read),
    ("doc ids", "stored", must_read_known),
    ("exact", "exact", must_read_known),
)


def _blocks(conn: Any, lx: Lexicon, term_id: int) -> list[Postings]:
    """A term's postings block by block as stored (the rows small syncs wrote: one more)."""
    import numpy as np

    from lore.store.pg_packs import Postings
    from lore.store.pg_records import narrow_sql

    out = [  # a block an older lore packed holds row records
        Postings.of_block(bytes(data), narrow, lx.width)
        for data, narrow in conn.execute(
            f"SELECT k.data, {narrow_sql('k', lx.width)} FROM {lx.packs} k WHERE k.term_id = %s",
            (term_id,),
            binary=True,
        )
    ]
    tf = ", ".join(f"tf_{c}" for c in lx.columns)
    rows = conn.execute(
        f"SELECT {lx.doc}, len, {tf} FROM {lx.postings} WHERE term_id = %s", (term_id,)
    ).fetchall()
    if rows:
        table = np.array(rows, dtype=np.int64)
        out.append(Postings(table[:, 0], table[:, 1].astype(np.float64), table[:, 2:]))
    return [p for p in out if p.size]


def segments(conn: Any, r: Resolved) -> dict[str, list[Segment]]:
    """Every block of every phrase of the resolved query, with its bound of each kind."""
    import numpy as np

    from lore.store.pg_bm25 import K1, B
    from lore.store.pg_bm25 import _term as share  # one phrase's share of a score, FTS5's

    width = len(r.weights)
    w = np.array([r.weights[i] if r.columns is None or i in r.columns else 0.0
                  for i in range(width)])  # fmt: skip
    out: dict[str, list[Segment]] = {bound: [] for bound in BOUNDS}
    blocks: dict[int, list[Postings]] = {}
    for index, (term_id, idf, generating) in r.direct.items():
        if term_id not in blocks:
            blocks[term_id] = _blocks(conn, r.lx, term_id)
        for n, block in enumerate(blocks[term_id]):
            most = float(block.counts.max(axis=0) @ w)
            shortest = np.array([block.lengths.min()])
            tops = {
                "stored": float(share(idf, most, shortest, r.avgdl)[0]) if most else 0.0,
                "exact": float(share(idf, block.counts @ w, block.lengths, r.avgdl).max()),
            }
            first, last, key = int(block.docs.min()), int(block.docs.max()), (term_id, n)
            for bound, top in tops.items():
                segment = Segment(block.docs, first, last, top, index, key, block.size, generating)
                out[bound].append(segment)
    extra: list[Segment] = []
    for k, term_id in enumerate(r.excluded_ids):  # read only where a result may be
        for n, block in enumerate(_blocks(conn, r.lx, term_id)):
            first, last = int(block.docs.min()), int(block.docs.max())
            key = (term_id, n)
            extra.append(Segment(block.docs, first, last, 0.0, -1 - k, key, block.size, False))
    for index, (counted, idf, generating) in r.counted.items():
        if counted.size:  # counted in the streams, not read as postings: no size
            top = float(share(idf, counted.counts @ w, counted.lengths, r.avgdl).max())
            first, last = int(counted.docs.min()), int(counted.docs.max())
            extra.append(
                Segment(counted.docs, first, last, top, index, (-1000 - index, 0), 0, generating)
            )
    if r.every is not None and out["exact"]:  # every note: most for the shortest
        index, idf = r.every
        top = idf * (r.weights[-1] * (K1 + 1.0)) / (r.weights[-1] + K1 * (1 - B))
        low = min(s.first for s in out["exact"])
        high = max(s.last for s in out["exact"])
        extra.append(Segment(None, low, high, top, index, (-1000 - index, 0), 0, False))
    return {bound: found + extra for bound, found in out.items()}


def capture(vault: Path, db: str, queries: Sequence[str]) -> tuple[Any, list[Ranking]]:
    """The vault opened, and the rankings its searches of these queries ask for."""
    import lore
    from lore.store import pg_lexical
    from lore.store.pg_schema import NOTES

    v = lore.open(vault, db=db)
    asked: list[Ranking] = []
    real = pg_lexical.rank_and_score

    def recorded(conn: Any, query: Any, weights: Any, limit: int, among: Any, **kw: Any) -> Any:
        lx = kw.get("lx", NOTES)
        asked.append(Ranking(lx, query, tuple(weights), limit, tuple(among)))
        return real(conn, query, weights, limit, among, **kw)

    pg_lexical.rank_and_score = recorded
    try:
        for q in queries:
            v.search(q, limit=10)
    finally:
        pg_lexical.rank_and_score = real
    return v, asked


def replay(conn: Any, ranking: Ranking) -> dict[str, Any] | None:
    """One ranking alone: what it reads, what block-max must read, each step's time."""
    import numpy as np

    from lore.store import pg_bm25, pg_lexical, pg_packs
    from lore.store.pg_phrases import resolve

    r = resolve(conn, ranking.query, ranking.weights, ranking.lx, None)
    if r.notes == 0 or r.empty:
        return None
    terms = list(dict.fromkeys([t for t, _i, _g in r.direct.values()] + r.excluded_ids))
    took = dict.fromkeys(STEPS, 0.0)
    t = time.perf_counter()
    packed = pg_packs.read_packed(conn, r.lx, terms)
    took["server"] = time.perf_counter() - t
    t = time.perf_counter()
    postings = {k: pg_packs.Postings.decode(*v, r.lx.width) for k, v in packed.items()}
    took["decode"] = time.perf_counter() - t
    t = time.perf_counter()
    docs, scores = pg_bm25.score(r, postings)
    took["score"] = time.perf_counter() - t
    t = time.perf_counter()
    if ranking.limit > 0 and len(docs):
        pg_lexical._best(conn, r.lx, docs, scores, ranking.limit, "", {})
    took["best"] = time.perf_counter() - t
    size = sum(postings[t].size for t in terms)
    out: dict[str, Any] = {"kind": ranking.kind, "depth": ranking.limit, "postings": size}
    out |= {"candidates": len(docs), "seconds": took}
    ordered = np.sort(scores)[::-1]
    blocks = segments(conn, r)
    for label, depth in zip(DEPTHS, (ranking.limit, *DEPTHS[1:]), strict=True):
        last = min(int(depth), len(ordered)) - 1
        theta = float(ordered[last]) if int(depth) > 0 and last >= 0 else np.inf
        for variant, bound, read in VARIANTS:
            out[f"read_{label}_{variant}"] = read(blocks[bound], theta, ranking.among)
    return out


def measure(vault: Path, db: str, queries: Sequence[str]) -> dict[str, Any]:
    """The rankings of these queries' searches, each replayed (one read snapshot)."""
    v, asked = capture(vault, db, queries)
    try:
        with v.store.snapshot():
            conn = v.store.lexical()
            replays = [found for ranking in asked if (found := replay(conn, ranking))]
    finally:
        v.close()
    return {"queries": len(queries), "rankings": replays}


def render(info: dict[str, Any], run: dict[str, Any]) -> str:
    rankings, n = run["rankings"], run["queries"]
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for found in rankings:
        by_kind[found["kind"]].append(found)
    rows = []
    for kind, found in sorted(by_kind.items()):
        postings = sum(f["postings"] for f in found)
        asked = int(statistics.median(f["depth"] for f in found))
        for label in DEPTHS:
            read = [sum(f[f"read_{label}_{v}"] for f in found) for v, _b, _r in VARIANTS]
            rows.append(
                [kind, fmt(len(found) / n, 2), fmt(postings / len(found), 0),
                 fmt(statistics.fmean(f["candidates"] for f in found), 0),
                 f"{asked} (asked)" if label == "asked" else str(label)]
                + [f"{100 * r / max(postings, 1):.1f}%" for r in read]
            )  # fmt: skip
    lines = [f"# What a PostgreSQL search reads ({run['size']} notes)", "", *info_lines(info), ""]
    lines += md_table(
        ["ranking", "per query", "postings read", "candidates", "depth"]
        + [f"block-max: {variant}" for variant, _b, _r in VARIANTS],
        rows,
    )
    total = sum(f["postings"] for f in rankings)
    seconds = {step: sum(f["seconds"][step] for f in rankings) for step in STEPS}
    lines += ["", "Cost of a posting (all rankings, replayed one by one):", ""]
    lines += md_table(
        ["step", "ns per posting", "ms per query"],
        [[k, fmt(s * 1e9 / max(total, 1), 1), fmt(s * 1000 / n, 2)] for k, s in seconds.items()],
    )
    lines += [
        "",
        f"{n} of bench.scale's sampled queries (`search(q, limit=10)`, mode 4) on its vault of"
        f" {run['size']} notes. Per query: rankings asked per search; depth: the median"
        " number of results asked; postings read, candidates: the mean per ranking (every"
        " posting of the query's terms is read today). Block-max: the share of those postings"
        " it would still have to read, with the score of the last result known in advance"
        " (the least it could read). `ranges`: bounds kept with each block (each column's"
        " largest count, the shortest document), a block known only by its first and last"
        " document; `doc ids`: the same bounds, each block's documents read before its"
        " counts (only the counts are spared: the documents are 8 of a posting's 28 bytes);"
        " `exact`: each block's true best share, documents known (no bound is tighter).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.pg_pruning", description=__doc__)
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--queries", type=int, default=100, help="of bench.scale's sample")
    p.add_argument("--server-dir", type=Path, default=KEPT_SERVER)
    p.add_argument("--database", help="default: lore_kept_<size> (bench.scale_search's)")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    vault = WORK_DIR / f"vault-{args.size}-seed{args.seed}"
    queries_file = WORK_DIR / f"queries-seed{args.seed}.json"
    database = args.database or f"lore_kept_{args.size}"
    server = pg_server.kept(args.server_dir)
    if not vault.is_dir() or not queries_file.is_file() or not server.has_database(database):
        p.error(f"no vault {vault.name}, queries or database {database}: run `python -m"
                f" bench.scale_search --size {args.size} --build` first")  # fmt: skip
    queries = json.loads(queries_file.read_text(encoding="utf-8"))[: args.queries]
    info = run_info("bench.pg_pruning") | {"postgresql": server.version}
    db = server.database_url(database) + f"&vault={PG_VAULT}"
    run = {"size": args.size, **measure(vault, db, queries)}
    text = render(info, run)
    print(text)
    if not args.no_write:
        write_outputs(f"pg_pruning_{args.size}", text, {**info, "run": run})
    return 0


if __name__ == "__main__":
    sys.exit(main())
