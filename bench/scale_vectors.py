"""Query latency in mode 3 at scale, SQLite and PostgreSQL side by side (issue 15).

bench.scale measures the full-text index (mode 4); a team also searches by meaning. Here
every text a note sends to the embedding model gets a random unit vector (seeded by the
text's hash: the same text, the same vector, on both backends), and the same sampled
queries are searched in mode 3 and in mode 4, alternating query by query, on an index of
bench.scale's generated vault. Random vectors say nothing of quality (bench.semantic
measures that): they cost what real ones cost to store and to search.

    python -m bench.scale_vectors --sizes 10000 --backends sqlite,postgresql

Needs lore's `vec` and `postgres` extras and bench.scale's vaults (generated when missing).
Writes bench/results/scale_vectors.{md,json}.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from bench import datasets, pg_server, scale
from bench.metrics import percentile
from bench.report import info_lines, run_info, write_outputs

DIM = 384  # multilingual-e5-small's
PG_DATABASE = "lore_scale_vectors"


class RandomUnitVectors:
    """An embedding provider whose vector of a text is a random unit vector seeded by the
    text (queries included): what a model costs lore to store and search, not to run."""

    name = "bench-random"
    identity = f"bench:random-unit-{DIM}"
    max_tokens = 512
    batch_size = 256

    def embed(self, texts: list[str], kind: str) -> Any:
        import numpy as np

        rows = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(f"{kind}\0{text}".encode()).digest()[:8], "big")
            row = np.random.default_rng(seed).standard_normal(DIM)
            rows[i] = row / np.linalg.norm(row)
        return rows


def measure(vault: Path, db: str, queries: Sequence[str]) -> dict[str, Any]:
    import lore
    from lore.index.embed import embed_missing, vector_count
    from lore.index.semantic import refresh

    out: dict[str, Any] = {}
    t = time.perf_counter()
    v = lore.open(vault, db=db)
    v.sync()
    out["sync_s"] = time.perf_counter() - t
    provider = RandomUnitVectors()
    v.capabilities.use(embedder=provider)
    t = time.perf_counter()
    refresh(v.store, tags=False)  # the texts to embed (keywords would add jieba's cost)
    out["texts_s"] = time.perf_counter() - t
    t = time.perf_counter()
    embed_missing(v.store, provider)
    out["vectors_s"] = time.perf_counter() - t
    out["vectors"] = vector_count(v.store)
    v.close()
    v = lore.open(vault, db=db)
    v.capabilities.use(embedder=provider)
    out["mode"] = v.mode
    latencies: dict[str, list[float]] = {"mode3": [], "mode4": []}
    for q in queries:
        for mode in ("mode3", "mode4"):
            t = time.perf_counter()
            result = v.search(q, limit=10, mode=mode)
            latencies[mode].append((time.perf_counter() - t) * 1000)
            if mode == "mode3" and result.mode != "mode3":
                raise RuntimeError(f"searched in {result.mode}, not mode3: {result.notices}")
    v.close()
    for mode, values in latencies.items():
        out[f"{mode}_p50_ms"] = percentile(values, 50)
        out[f"{mode}_p95_ms"] = percentile(values, 95)
    return out


@contextmanager
def _index(backend: str, server: pg_server.Server | None) -> Iterator[str]:
    """A new, empty index: a SQLite file in a temporary folder, or a PostgreSQL database."""
    if backend == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="lore-scale-vectors-"))
        try:
            yield str(folder / "index.sqlite")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    assert server is not None
    try:
        yield server.new_database(PG_DATABASE) + f"&vault={scale.PG_VAULT}"
    finally:
        server.drop_database(PG_DATABASE)


def render(info: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    lines = ["# Mode 3 at scale (issue 15)", "", *info_lines(info)]
    if "postgresql" in info:
        lines.append(f"- PostgreSQL: {info['postgresql']}, default settings")
    lines += [
        "",
        "| notes | backend | vectors | texts s | vectors s | mode 3 p50 ms | mode 3 p95 ms"
        " | mode 4 p50 ms | mode 4 p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        if "error" in r:
            lines.append(f"| {r['notes']} | {r['backend']} | error: {r['error']} |||||||")
            continue
        lines.append(
            f"| {r['notes']} | {r['backend']} | {r['vectors']} | {r['texts_s']:.1f}"
            f" | {r['vectors_s']:.1f} | {r['mode3_p50_ms']:.1f} | {r['mode3_p95_ms']:.1f}"
            f" | {r['mode4_p50_ms']:.1f} | {r['mode4_p95_ms']:.1f} |"
        )
    lines += [
        "",
        "vectors: texts with a vector (summaries, tag strings, passages; random unit vectors"
        f" of {DIM} dimensions, seeded by the text). texts s: deriving the texts to embed"
        " (without keywords); vectors s: writing the vectors (SQLite: sqlite-vec; PostgreSQL:"
        " pgvector with its HNSW index). p50/p95: per-query wall time of `search(q,"
        " limit=10)`, mode 3 and mode 4 alternating query by query on one handle, the query"
        " vector from the same provider (no model run).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.scale_vectors", description=__doc__)
    p.add_argument("--sizes", type=scale._sizes, default=[10_000])
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-write", action="store_true", help="print only, keep results/ as is")
    args = p.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if unknown := sorted(set(backends) - set(scale.BACKENDS)):
        p.error(f"--backends: {', '.join(unknown)} is not one of {', '.join(scale.BACKENDS)}")
    info = run_info("bench.scale_vectors")
    root = datasets.data_root()
    pool = scale.paragraph_pool(root)
    queries = scale.query_sample(root, args.queries, args.seed)
    runs: list[dict[str, Any]] = []
    with ExitStack() as stack:
        server = None
        if "postgresql" in backends:
            server = stack.enter_context(pg_server.throwaway())
            info["postgresql"] = server.version
        for n in args.sizes:
            vault = Path(scale.ensure_vault(n, args.seed, pool, False)["vault"])
            for backend in backends:
                print(f"== {n} notes, {backend}", file=sys.stderr)
                with _index(backend, server) as db:
                    try:
                        result = measure(vault, db, queries)
                    except Exception as exc:  # a failed size is reported, the rest still run
                        result = {"error": f"{type(exc).__name__}: {exc}"}
                runs.append({"notes": n, "backend": backend, **result})
                print(f"   {runs[-1]}", file=sys.stderr)
    markdown = render(info, runs)
    print(markdown)
    if not args.no_write:
        data = {**info, "seed": args.seed, "runs": runs}
        md_path, json_path = write_outputs("scale_vectors", markdown, data)
        print(f"wrote {md_path} and {json_path}", file=sys.stderr)
    return 0 if all("error" not in r for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
