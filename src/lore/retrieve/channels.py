"""The search channels. Each one brings its own candidates (its best `pool` notes) and can
score any other candidate, so fusion sees every channel's score for every note in the pool
and an exact-term hit can never be crowded out by vector hits.

    fts       BM25 over our token stream, field weights (raw: the BM25 score)
    vec       best cosine similarity of the query_refine vector with the note's summary or
              any of its passages (raw: cosine; the best passage is reported)
    tag_vec   cosine of the query_tags vector with the note's tag-text vector
    tag_lex   share of query_tags found among the note's tags (any origin)
    priority  front-matter priority scaled to [0, 1] over the pool (a nudge, no candidates)
    recency   0.5 ** (days older than the newest dated note in the pool / 365) (a nudge);
              an undated note gets the median of the dated ones
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, NamedTuple

from ..derive.tags import tag_key
from ..store.query import Filters, TextQuery
from .query import QueryPlan

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..store.base import Store

RECENCY_HALF_LIFE_DAYS = 365.0


class PassageMatch(NamedTuple):  # a tuple: cheaper for a cold process than a dataclass
    kind: str  # summary | passage
    start: int
    end: int
    heading: str | None
    similarity: float


def keep_filtered(store: Store, ids: list[int], filters: Filters) -> list[int]:
    """The ids (in order) that pass the filters."""
    return store.keep_filtered(ids, filters)


def without_excluded(store: Store, plan: QueryPlan, ids: list[int]) -> list[int]:
    """The ids (in order) of notes that hold none of the plan's excluded terms."""
    if not plan.excluded or not ids:
        return ids
    # One pass over the excluded terms' notes (a rowid list makes FTS5 seek per row).
    holding = store.holding(TextQuery(tuple(t.tokens for t in plan.excluded)))
    return [i for i in ids if i not in holding]


# -- vectors -----------------------------------------------------------------------------


def vec_candidates(
    store: Store,
    vector: npt.NDArray[np.float32],
    identity: str,
    space: str,
    filters: Filters,
    pool: int,
) -> dict[int, tuple[float, PassageMatch]]:
    """The best `pool` notes by their best text's similarity (KNN in sqlite-vec)."""
    k = min(4096, pool * (4 if space == "doc" else 1) * (4 if filters.active else 1))
    sims = {r: 1.0 - d for r, d in store.knn(vector.tobytes(), k, space)}
    best = _best_per_note(store, sims, identity, space)
    ids = store.keep_filtered(sorted(best, key=lambda n: -best[n][0]), filters)[:pool]
    return {nid: best[nid] for nid in ids}


def vec_scores(
    store: Store,
    vector: npt.NDArray[np.float32],
    identity: str,
    space: str,
    ids: list[int],
) -> dict[int, tuple[float, PassageMatch]]:
    """Exact best similarity for these notes (candidates another channel brought): their
    vectors are read by rowid (point lookups, in one statement) and compared here."""
    import numpy as np

    if not ids:
        return {}
    blobs: list[bytes] = []
    found: list[int] = []
    rowids = store.vector_ids_of(ids, identity, space)
    stored = store.vectors(rowids)
    for rowid in rowids:
        blob = stored.get(rowid)
        if blob is not None:
            found.append(rowid)
            blobs.append(blob)
    if not found:
        return {}
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(found), -1)
    sims = matrix @ np.asarray(vector, dtype=np.float32)
    best = _best_per_note(
        store, {r: float(s) for r, s in zip(found, sims, strict=True)}, identity, space
    )
    wanted = set(ids)
    return {nid: v for nid, v in best.items() if nid in wanted}


def _best_per_note(
    store: Store, sims: dict[int, float], identity: str, space: str
) -> dict[int, tuple[float, PassageMatch]]:
    if not sims:
        return {}
    best: dict[int, tuple[float, PassageMatch]] = {}
    for span in store.text_spans(list(sims), space):
        sim = round(sims[span.vector_id], 6)
        nid = span.note_id
        match = PassageMatch(span.kind, span.start, span.end, span.heading, sim)
        if nid not in best:
            best[nid] = (sim, match)
            continue
        score, shown = best[nid]
        # The score is the best of summary and passages; the passage shown is the best
        # passage (a summary says less about where in the note the answer is).
        better_shown = (match.kind == "passage" and shown.kind != "passage") or (
            match.kind == shown.kind and sim > shown.similarity
        )
        best[nid] = (max(score, sim), match if better_shown else shown)
    return best


# -- tags --------------------------------------------------------------------------------


def tag_lex_scores(
    store: Store, query_tags: list[str], filters: Filters, pool: int, ids: list[int]
) -> dict[int, float]:
    """Share of the query tags each note carries: author tags (front matter, inline) by
    case-folded text, LLM tags by token key. Notes with any match become candidates (the
    best `pool`), plus `ids` are scored.

    A tag carried by more notes than the pool holds cannot say which of them belong in it,
    so it brings no candidates: it only scores `ids` (the other channels' candidates). No
    query reads every note of a tag the whole vault carries.

    Heuristic tags are left out here on purpose: they are keywords of the same text the fts
    channel already scores, so matching them counts the same evidence twice. Measured on
    the developer sets in mode4 (tag weight 0.25): -0.002 MRR@10 on cmrc2018_trial and
    -0.011 on squadshifts_new_wiki. They still feed the tag vector (tag_vec) and `lore
    show`."""
    if not query_tags:
        return {}
    folded = sorted({t.strip().lstrip("#").casefold() for t in query_tags if t.strip()})
    keys = sorted({tag_key(t) for t in query_tags} - {""})
    by_tag: dict[int, set[str]] = {}
    # (derived?, the values looked up, their match key): author tags are stored
    # case-folded, LLM tags by token key already.
    sources = ((False, folded, tag_key), (True, keys, str))
    for derived, values, match_key in sources:
        rows: list[tuple[int, str]] = []
        common: list[str] = []
        holders = store.tag_holders(values, derived=derived, limit=pool + 1)
        for value in values:
            carriers = holders[value]
            if len(carriers) <= pool:
                rows += carriers
            else:
                common.append(value)
        if common and ids:
            rows += store.tag_holders_among(common, ids, derived=derived)
        for nid, key in rows:
            by_tag.setdefault(nid, set()).add(match_key(key))
    total = len(keys) or 1
    scores = {nid: min(1.0, len(found) / total) for nid, found in by_tag.items()}
    ranked = sorted(scores, key=lambda n: (-scores[n], n))
    keep = set(store.keep_filtered(ranked, filters)[:pool]) | set(ids)
    return {nid: s for nid, s in scores.items() if nid in keep}


# -- nudges ------------------------------------------------------------------------------


def nudges(store: Store, ids: list[int]) -> tuple[dict[int, float], dict[int, float]]:
    """(priority, recency) in [0, 1] for these notes, relative to the pool (deterministic:
    recency is measured from the newest dated note in the pool, not from today)."""
    if not ids:
        return {}, {}
    rows = store.nudge_rows(ids)
    prio = {int(i): float(p) for i, p, _d in rows if p is not None and p > 0}
    top = max(prio.values(), default=0.0)
    priority = {i: (p / top) for i, p in prio.items()} if top > 0 else {}
    dates: dict[int, dt.date] = {}
    for i, _p, d in rows:
        try:
            dates[int(i)] = dt.date.fromisoformat(str(d)) if d else dt.date.min
        except ValueError:
            continue
    dated = [d for d in dates.values() if d != dt.date.min]
    newest = max(dated, default=None)
    recency: dict[int, float] = {}
    if newest is not None:
        for i, d in dates.items():
            if d != dt.date.min:
                recency[i] = round(0.5 ** ((newest - d).days / RECENCY_HALF_LIFE_DAYS), 6)
        # An undated note may be from any time: the middle of the dated ones, neither
        # favoured nor held back.
        middle = sorted(recency.values())[(len(recency) - 1) // 2]  # the low median
        recency.update({i: middle for i, d in dates.items() if d == dt.date.min})
    return priority, recency
