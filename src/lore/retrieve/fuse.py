"""Fusion of per-channel scores into one ranking: pure functions, no I/O.

Weighted (default): every channel's raw scores are scaled to [0, 1] over the candidate pool
(BM25 and tag_lex by the pool's best, so "no match" stays 0; cosine similarities min-max,
because e5 similarities crowd into a narrow band), then summed with the mode's weights.
The fts channel takes, per note, the better of its BM25 and PART_SHARE of its best part's.
The tag channel is f·tag_vec + (1−f)·compress(tag_lex), compress(x) = log(1+αx)/log(1+α).
RRF: Σ w_c / (k + rank_c) over the channels that ranked the note.
Ties break by path, so the same inputs always give the same order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

# "vec" is the summary/passage vector channel. Modes 2 and 4 keep seed 000's defaults.
# Modes 1 and 3 do not: seed 000's vec=0.45, fts=0.25, tag=0.15 ranked below BM25 alone on
# the Chinese developer sets (MRR@10 0.978 vs 0.981 on cmrc2018_trial-1k, 0.979 vs 0.978
# on its long notes) and RRF lost everywhere (0.946, 0.820, ...); a grid over the four
# developer sets (bench/results/semantic.md) put vec 0.40, fts 0.55, tag 0.05 among the
# best on every set (the tag channel, fed by heuristic tags there, never helped; it keeps
# a small weight so author and LLM tags still count). LORE_SCORE_WEIGHTS_MODE3 restores
# the seed's values: "vec=0.45,fts=0.25,tag=0.15,priority=0.03,recency=0.02".
# "name" (lore.retrieve.names) is not in seed 000: titles and aliases are the strongest
# evidence of what a note is (DESIGN.md), and on real vaults a note named by the query lost
# to notes that only shared a tag. Its score is absolute (1.0: the query is a name word for
# word), so 0.5 lets an exact name outweigh the best BM25 of the pool unless another note
# matches far better. bench.realvault, mode4 MRR@10 (mynote / obsidian-hub): 0 →
# 0.723 / 0.741 at 0.3, 0.739 / 0.749 at 0.5; the developer sets do not move (0.980-0.981,
# 0.852-0.853 for 0.15-0.5). In every mode: a model makes search better, not different.
NAME_WEIGHT = 0.5
SEMANTIC_WEIGHTS = {
    "vec": 0.40, "fts": 0.55, "tag": 0.05, "name": NAME_WEIGHT, "priority": 0.03, "recency": 0.02,
}  # fmt: skip
LEXICAL_WEIGHTS = {"fts": 0.60, "tag": 0.25, "name": NAME_WEIGHT, "priority": 0.08, "recency": 0.07}
# The fts channel's score of a note is the better of its whole text's BM25 and PART_SHARE
# of its best part's (lore.retrieve.sections): a long note is as good as the one section
# that answers, a part counting less than a whole that answers as well. Mode4 MRR@10 of the
# deep queries of bench/realvault_queries (obsidian-hub / mynote): 0.734 / 0.855 without
# parts; 0.875 / 0.814 at 0.9, 0.833 / 0.844 at 0.8 (mynote mixed 0.817 -> 0.917, the rest
# level). Comparing the two after scaling each by the pool's best (0.792 / 0.842 at 0.9)
# lost on squadshifts_new_wiki (0.853). Not a channel of its own: added on top of the whole
# note, a part counts a short note twice (its one part is its body); that lost mynote's deep
# queries (0.855 -> 0.77 at weight 0.3 beside fts 0.6).
PART_SHARE = 0.8
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "mode1": dict(SEMANTIC_WEIGHTS),
    "mode2": dict(LEXICAL_WEIGHTS),
    "mode3": dict(SEMANTIC_WEIGHTS),
    "mode4": dict(LEXICAL_WEIGHTS),
}
RRF_K = 60
QUERY_CHANNELS = ("fts", "vec", "tag_vec", "tag_lex", "name")


class Fused(NamedTuple):  # a tuple: a search fuses hundreds
    note_id: int
    score: float
    raw: dict[str, float]  # channel -> raw score (fts BM25, cosine, matched share, ...)
    weighted: dict[str, float]  # channel -> its contribution to `score`


def compress(x: float, alpha: float) -> float:
    if alpha <= 0:
        return x
    return math.log1p(alpha * x) / math.log1p(alpha)


def _scale_max(values: Mapping[int, float]) -> dict[int, float]:
    top = max((v for v in values.values()), default=0.0)
    return {k: (v / top if top > 0 else 0.0) for k, v in values.items()}


def _scale_minmax(values: Mapping[int, float], pool: list[int]) -> dict[int, float]:
    present = [values[k] for k in pool if k in values]
    if not present:
        return {}
    low, high = min(present), max(present)
    span = high - low
    return {k: ((values[k] - low) / span if span > 1e-9 else 1.0) for k in pool if k in values}


def channel_weights(weights: Mapping[str, float], fraction: float) -> dict[str, float]:
    """Mode weights (vec, fts, tag, name, priority, recency) → per-channel weights."""
    has_vec = weights.get("vec", 0.0) > 0
    tag = weights.get("tag", 0.0)
    f = fraction if has_vec else 0.0
    return {
        "fts": weights.get("fts", 0.0),
        "name": weights.get("name", 0.0),
        "vec": weights.get("vec", 0.0),
        "tag_vec": tag * f,
        "tag_lex": tag * (1 - f),
        "priority": weights.get("priority", 0.0),
        "recency": weights.get("recency", 0.0),
    }


def best_of_note_and_part(
    note: Mapping[int, float], part: Mapping[int, float], share: float = PART_SHARE
) -> dict[int, float]:
    """The lexical score of each note: the BM25 of its whole text or `share` of its best
    part's (lore.retrieve.sections), whichever is higher. Both are BM25 with the same
    parameters over the same token stream, so they are compared as they are."""
    return {k: max(note.get(k, 0.0), share * part.get(k, 0.0)) for k in {*note, *part}}


def weighted(
    pool: list[int],
    raw: Mapping[str, Mapping[int, float]],
    weights: Mapping[str, float],
    order_key: Mapping[int, str],
    *,
    alpha: float = 5.0,
    vec_scale: str = "minmax",
) -> list[Fused]:
    """Weighted fusion over `pool` (note ids); `weights` per channel (see channel_weights).
    `vec_scale`: "minmax" over the pool, or "max" (cosine / the pool's best)."""
    scaled: dict[str, dict[int, float]] = {}
    for name, values in raw.items():
        if name in ("vec", "tag_vec"):
            scaled[name] = (
                _scale_minmax(values, pool) if vec_scale == "minmax" else _scale_max(values)
            )
        elif name == "tag_lex":
            scaled[name] = {k: compress(v, alpha) for k, v in values.items()}
        elif name in ("priority", "recency", "name"):  # already in [0, 1], absolute
            scaled[name] = dict(values)
        else:
            scaled[name] = _scale_max(values)
    if "section" in raw:
        scaled["fts"] = _scale_max(best_of_note_and_part(raw.get("fts", {}), raw["section"]))
    out: list[Fused] = []
    for nid in pool:
        parts = {
            name: round(weights.get(name, 0.0) * scaled[name].get(nid, 0.0), 6)
            for name in raw
            if weights.get(name, 0.0) > 0
        }
        out.append(
            Fused(
                nid,
                round(sum(parts.values()), 6),
                {name: values[nid] for name, values in raw.items() if nid in values},
                parts,
            )
        )
    out.sort(key=lambda f: (-f.score, order_key.get(f.note_id, "")))
    return out


def rrf(
    pool: list[int],
    raw: Mapping[str, Mapping[int, float]],
    weights: Mapping[str, float],
    order_key: Mapping[int, str],
    *,
    k: int = RRF_K,
) -> list[Fused]:
    """Reciprocal-rank fusion: Σ w_c / (k + rank in channel c); nudges add w·value/(k+1)."""
    ranks: dict[str, dict[int, int]] = {}
    for name in QUERY_CHANNELS:
        values = raw.get(name, {})
        ordered = sorted(
            (nid for nid in pool if values.get(nid, 0.0) > 0),
            key=lambda n: (-values[n], order_key.get(n, "")),
        )
        ranks[name] = {nid: i + 1 for i, nid in enumerate(ordered)}
    out: list[Fused] = []
    for nid in pool:
        parts: dict[str, float] = {}
        for name, w in weights.items():
            if w <= 0 or name not in raw:
                continue
            if name in ranks:
                rank = ranks[name].get(nid)
                parts[name] = round(w / (k + rank), 6) if rank else 0.0
            else:
                parts[name] = round(w * raw[name].get(nid, 0.0) / (k + 1), 6)
        out.append(
            Fused(
                nid,
                round(sum(parts.values()), 6),
                {name: values[nid] for name, values in raw.items() if nid in values},
                parts,
            )
        )
    out.sort(key=lambda f: (-f.score, order_key.get(f.note_id, "")))
    return out
