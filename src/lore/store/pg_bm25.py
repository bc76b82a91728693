"""FTS5's bm25 over postings read from PostgreSQL, computed here with numpy: every
candidate's score bit for bit what SQLite's `bm25()` gives the same note (issue 15).

The server only hands over each term's postings (lore.store.pg_lexical reads them, one
packed value per term); the sums are taken here, in FTS5's order of operations: for each
phrase of the query in turn, score += idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D /
avgdl)), the same IEEE double operations fts5_aux.c performs, element by element. So no
score needs settling afterwards, and one read of a term's postings serves every ranking a
search makes of it (the notes, the count, the names, --explain's field shares).

Nothing here reads the database or tokenizes text: it takes what lore.store.pg_phrases
resolved and the postings of its terms.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .pg_packs import Postings
from .pg_phrases import Columns, Resolved

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

K1 = 1.2
B = 0.75
DENSE_SPAN = 8  # a union of postings by a table over their range: see _union


def weighted(weights: Sequence[float], per_column: Sequence[int]) -> float:
    """FTS5's f(p): each occurrence adds its column's weight, title's first. A product
    where it is the same number as the repeated sum (weights that are whole numbers or
    halves, quarters, ...: every weight lore ships), the sum itself otherwise."""
    total = 0.0
    for w, n in zip(weights, per_column, strict=True):
        if _exact_product(w) and n < 2**20:
            total += w * n
        else:
            for _ in range(n):
                total += w
    return total


def _exact_product(weight: float) -> bool:
    return (weight * 1024).is_integer()


def _frequencies(
    weights: Sequence[float], counts: NDArray[np.int64], columns: Columns
) -> NDArray[np.float64]:
    """f(p) of each row of counts (only the query's columns count)."""
    import numpy as np

    used = [(i, w) for i, w in enumerate(weights) if columns is None or i in columns]
    if all(_exact_product(w) for _i, w in used) and (counts.size == 0 or counts.max() < 2**20):
        total = np.zeros(len(counts))
        for i, w in used:
            total = total + w * counts[:, i].astype(np.float64)
        return total
    mask = [0 if columns is not None and i not in columns else 1 for i in range(len(weights))]
    return np.array(
        [weighted(weights, [int(n) * m for n, m in zip(row, mask, strict=True)]) for row in counts]
    )


class _Phrase(NamedTuple):
    docs: NDArray[np.int64]
    lengths: NDArray[np.float64]
    freq: NDArray[np.float64]
    idf: float
    generating: bool


def _phrases(
    r: Resolved, postings: Mapping[int, Postings], among: NDArray[np.int64] | None
) -> dict[int, _Phrase]:
    """Each scoring phrase's documents (those among `among`, if given) with f(p). A query
    word the planner counts three times is three phrases of one term: worked out once."""
    import numpy as np

    def phrase(p: Postings, idf: float, generating: bool, columns: Columns) -> _Phrase:
        keep = None if columns is None else p.holding(columns)
        if among is not None:
            inside = np.isin(p.docs, among)
            keep = inside if keep is None else keep & inside
        if keep is None:  # every posting: no copy
            return _Phrase(
                p.docs, p.lengths, _frequencies(r.weights, p.counts, None), idf, generating
            )
        freq = _frequencies(r.weights, p.counts[keep], columns)
        return _Phrase(p.docs[keep], p.lengths[keep], freq, idf, generating)

    out: dict[int, _Phrase] = {}
    done: dict[int, _Phrase] = {}
    for index, (term_id, idf, generating) in r.direct.items():
        if term_id not in done:
            done[term_id] = phrase(postings[term_id], idf, generating, r.columns)
        out[index] = done[term_id]._replace(idf=idf, generating=generating)
    for index, (counted, idf, generating) in r.counted.items():
        # Counted in the query's columns only, and only where they hold it (pg_phrases).
        out[index] = phrase(counted, idf, generating, None)
    return out


def _union(arrays: Sequence[NDArray[np.int64]]) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
    """What np.unique(concatenated arrays, return_inverse=True) gives: the distinct
    documents in ascending order and where each posting's document is among them. When
    the documents' range is at most DENSE_SPAN times their number, a table over the range
    finds both without sorting (a long question's terms hold a large share of the notes)."""
    import numpy as np

    every = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    if not len(every):
        return every, np.zeros(0, dtype=np.intp)
    low = int(every.min())
    span = int(every.max()) - low + 1
    if span > DENSE_SPAN * len(every):
        return np.unique(every, return_inverse=True)
    offsets = every - low
    seen = np.zeros(span, dtype=bool)
    seen[offsets] = True
    place = np.cumsum(seen, dtype=np.intp) - 1
    return np.flatnonzero(seen) + low, place[offsets]


def _term(
    idf: float, freq: float | NDArray[np.float64], size: NDArray[np.float64], avgdl: float
) -> NDArray[np.float64]:
    # One phrase's share, as fts5_aux.c writes it (and in its order of operations).
    return idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * size / avgdl)))


def score(
    r: Resolved,
    postings: Mapping[int, Postings],
    among: Collection[int] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(documents, FTS5's bm25 of each as a positive number): the candidates, those holding
    a generating phrase and no excluded one (only those `among` these, if given), in
    ascending document order. `postings`: those of every term `r` looks up directly and
    of its excluded ones."""
    import numpy as np

    wanted = None if among is None else np.fromiter(among, dtype=np.int64)
    phrases = _phrases(r, postings, wanted)
    docs, inverse = _union([p.docs for p in phrases.values()])
    where: dict[int, NDArray[np.intp]] = {}
    lengths = np.zeros(len(docs))
    generating = np.zeros(len(docs), dtype=bool)
    start = 0
    for index, phrase in phrases.items():
        at = inverse[start : start + len(phrase.docs)]
        start += len(phrase.docs)
        where[index] = at
        lengths[at] = phrase.lengths
        if phrase.generating:
            generating[at] = True
    scores = np.zeros(len(docs))
    for index in range(r.count):
        if r.every is not None and index == r.every[0]:
            scores += _term(r.every[1], r.weights[-1], lengths, r.avgdl)
        elif index in phrases:
            phrase = phrases[index]
            scores[where[index]] += _term(phrase.idf, phrase.freq, phrase.lengths, r.avgdl)
    keep = generating & ~_excluded(r, postings, docs)
    return docs[keep], scores[keep]


def candidates(r: Resolved, postings: Mapping[int, Postings]) -> NDArray[np.int64]:
    """The documents `score` returns, in the same order, without scoring them (what a
    count of the matching notes needs)."""
    held = [
        postings[term_id].docs[postings[term_id].holding(r.columns)]
        for term_id, _idf, generating in r.direct.values()
        if generating
    ]
    held += [counted.docs for counted, _idf, generating in r.counted.values() if generating]
    docs = _union(held)[0]
    return docs[~_excluded(r, postings, docs)]


def _excluded(
    r: Resolved, postings: Mapping[int, Postings], docs: NDArray[np.int64]
) -> NDArray[np.bool_]:
    """The documents holding an excluded phrase (in the query's columns)."""
    import numpy as np

    out = np.isin(docs, np.fromiter(r.excluded_notes, dtype=np.int64))
    for term_id in r.excluded_ids:
        p = postings[term_id]
        out |= np.isin(docs, p.docs[p.holding(r.columns)])
    return out
