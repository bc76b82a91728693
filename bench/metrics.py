"""Ranking metrics (binary relevance) and latency percentiles.

Standard definitions, per query, then averaged over queries:
  R@k      |relevant ∩ top-k| / |relevant|
  MRR@k    1 / rank of the first relevant hit in the top k, 0 if none
  nDCG@k   DCG@k / IDCG@k with DCG = Σ rel_i / log2(i + 1), i = 1..k, rel_i ∈ {0, 1}

Run `python -m bench.metrics` to check them against hand-computed values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

CUTOFFS = (1, 5, 10)


def _dedupe(ranked: Sequence[str]) -> list[str]:
    # A system that returns the same doc twice must not get credit twice (it would push
    # recall above 1 and inflate DCG), so only the first occurrence of each id counts.
    seen: set[str] = set()
    out: list[str] = []
    for doc_id in ranked:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
    return out


def recall_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        raise ValueError("recall is undefined for a query with no relevant docs")
    return len(set(_dedupe(ranked)[:k]) & relevant) / len(relevant)


def reciprocal_rank_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    for rank, doc_id in enumerate(_dedupe(ranked)[:k], 1):
        if doc_id in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        raise ValueError("nDCG is undefined for a query with no relevant docs")
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, doc_id in enumerate(_dedupe(ranked)[:k], 1)
        if doc_id in relevant
    )
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / idcg


def percentile(values: Sequence[float], q: float) -> float:
    """q-th percentile (0..100) with linear interpolation between order statistics
    (the same as numpy's default), so results match whatever tool re-reads the JSON."""
    if not values:
        return math.nan
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def evaluate(
    run: Mapping[str, Sequence[str]], qrels: Mapping[str, set[str]], k: int = 10
) -> dict[str, float]:
    """Mean metrics over the queries in `run` (each must have judgements in `qrels`)."""
    if not run:
        raise ValueError("empty run")
    totals = {f"R@{c}": 0.0 for c in CUTOFFS} | {f"MRR@{k}": 0.0, f"nDCG@{k}": 0.0}
    for qid, ranked in run.items():
        relevant = qrels[qid]
        for c in CUTOFFS:
            totals[f"R@{c}"] += recall_at_k(ranked, relevant, c)
        totals[f"MRR@{k}"] += reciprocal_rank_at_k(ranked, relevant, k)
        totals[f"nDCG@{k}"] += ndcg_at_k(ranked, relevant, k)
    return {name: total / len(run) for name, total in totals.items()}


def _self_check() -> None:
    def close(a: float, b: float) -> bool:
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)

    ranked = ["d3", "d1", "d7", "d2", "d9"]
    one = {"d1"}
    two = {"d1", "d2"}

    # Single relevant doc at rank 2.
    assert recall_at_k(ranked, one, 1) == 0.0
    assert recall_at_k(ranked, one, 5) == 1.0
    assert close(reciprocal_rank_at_k(ranked, one, 10), 0.5)
    assert close(ndcg_at_k(ranked, one, 10), 1 / math.log2(3))  # 0.6309...
    assert close(ndcg_at_k(ranked, one, 10), 0.6309297535714575)

    # Two relevant docs at ranks 2 and 4.
    assert close(recall_at_k(ranked, two, 1), 0.0)
    assert close(recall_at_k(ranked, two, 2), 0.5)
    assert close(recall_at_k(ranked, two, 5), 1.0)
    assert close(reciprocal_rank_at_k(ranked, two, 10), 0.5)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)  # 0.6309 + 0.4307
    idcg = 1 + 1 / math.log2(3)  # 1.6309
    assert close(ndcg_at_k(ranked, two, 10), dcg / idcg)
    assert abs(ndcg_at_k(ranked, two, 10) - 0.65092) < 1e-5  # (0.63093 + 0.43068) / 1.63093

    # Perfect ranking scores 1 everywhere; a miss scores 0.
    assert close(ndcg_at_k(["d1", "d2"], two, 10), 1.0)
    assert close(reciprocal_rank_at_k(["d1"], one, 10), 1.0)
    assert ndcg_at_k(["x", "y"], one, 10) == 0.0
    assert reciprocal_rank_at_k([], one, 10) == 0.0

    # The cutoff is honoured: relevant at rank 11 counts for nothing at @10.
    late = [f"x{i}" for i in range(10)] + ["d1"]
    assert reciprocal_rank_at_k(late, one, 10) == 0.0
    assert ndcg_at_k(late, one, 10) == 0.0
    assert recall_at_k(late, one, 10) == 0.0

    # Duplicates are counted once: ["d1", "d1"] is not recall 2 nor DCG > IDCG.
    assert recall_at_k(["d1", "d1"], one, 5) == 1.0
    assert close(ndcg_at_k(["d1", "d1"], one, 10), 1.0)
    # ...and a duplicate does not take a rank slot: d1 is at rank 2, not 3.
    assert close(reciprocal_rank_at_k(["x", "x", "d1"], one, 10), 0.5)

    # Means over queries.
    m = evaluate({"q1": ["d1"], "q2": ["x", "d2"]}, {"q1": {"d1"}, "q2": {"d2"}})
    assert close(m["MRR@10"], 0.75)
    assert close(m["R@1"], 0.5)
    assert close(m["R@5"], 1.0)
    assert close(m["nDCG@10"], (1 + 1 / math.log2(3)) / 2)

    # Percentiles: linear interpolation, as numpy.percentile's default.
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert close(percentile(list(map(float, range(1, 101))), 95), 95.05)
    assert percentile([3.0, 1.0, 2.0], 0) == 1.0 and percentile([3.0, 1.0, 2.0], 100) == 3.0
    assert math.isnan(percentile([], 50))


if __name__ == "__main__":
    _self_check()
    print("bench.metrics: all self-checks passed")
