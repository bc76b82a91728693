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
from typing import TYPE_CHECKING, NamedTuple, cast

from .pg_packs import Postings
from .pg_phrases import Columns, Resolved

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .pg_packs import Ints

K1 = 1.2
B = 0.75
DENSE_SPAN = 8  # postings' documents in a table over their range: see _slots


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


def _frequencies(weights: Sequence[float], counts: Ints, columns: Columns) -> NDArray[np.float64]:
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
    docs: Ints
    lengths: Ints
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


class _Slots(NamedTuple):
    """The distinct documents of some postings arrays as slots of a table: `places[i]`,
    the slot of each posting of the i-th array. Dense (`docs` None): the slot of a
    document is its distance from `low`, and a slot no posting names is empty. Otherwise
    `docs` lists the documents, ascending, one per slot."""

    size: int
    places: list[Ints]
    low: int
    docs: Ints | None

    def documents(self, slots: Ints) -> Ints:
        """The documents in these slots."""
        return slots + self.low if self.docs is None else self.docs[slots]


def _slots(arrays: Sequence[Ints]) -> _Slots:
    """Slots for the documents of these postings. When the documents' range is at most
    DENSE_SPAN times the postings' number, the table covers the range and nothing is
    sorted (a long question's terms hold a large share of the notes). Otherwise the
    postings are sorted, stably: a term's postings come mostly in document order, and
    merging such runs (timsort) takes a seventh of the time a quicksort of them does
    (293,000 postings of five terms: 2 ms against 15; np.unique's quicksort was 30 ms of a
    million-note search's 130). A wider table was slower: zeroing one over 5 million
    parts and finding its filled slots took twice as long as the sort."""
    import numpy as np

    sizes = [len(a) for a in arrays]
    filled = [a for a in arrays if len(a)]
    if not filled:
        return _Slots(0, [np.zeros(0, dtype=np.intp) for _a in arrays], 0, None)
    low = min(int(a.min()) for a in filled)
    span = max(int(a.max()) for a in filled) - low + 1
    if span <= DENSE_SPAN * sum(sizes):
        return _Slots(span, [a - low for a in arrays], low, None)
    every = np.concatenate(arrays)
    order = np.argsort(every, kind="stable")
    ordered = every[order]
    first = np.empty(len(ordered), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    inverse = np.empty(len(every), dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1
    return _Slots(int(first.sum()), np.split(inverse, np.cumsum(sizes)[:-1]), 0, ordered[first])


def _term(
    idf: float, freq: float | NDArray[np.float64], size: Ints | NDArray[np.float64], avgdl: float
) -> NDArray[np.float64]:
    # One phrase's share, as fts5_aux.c writes it (and in its order of operations). A
    # length may be an integer: multiplied by b, it becomes the same double.
    share = idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * size / avgdl)))
    return cast("NDArray[np.float64]", share)


def score(
    r: Resolved,
    postings: Mapping[int, Postings],
    among: Collection[int] | None = None,
) -> tuple[Ints, NDArray[np.float64]]:
    """(documents, FTS5's bm25 of each as a positive number): the candidates, those holding
    a generating phrase and no excluded one (only those `among` these, if given), in
    ascending document order. `postings`: those of every term `r` looks up directly and
    of its excluded ones."""
    import numpy as np

    wanted = None if among is None else np.fromiter(among, dtype=np.int64)
    phrases = _phrases(r, postings, wanted)
    slots = _slots([p.docs for p in phrases.values()])
    where = dict(zip(phrases, slots.places, strict=True))
    lengths = np.zeros(slots.size) if r.every is not None else None
    generating = np.zeros(slots.size, dtype=bool)
    for index, phrase in phrases.items():
        if lengths is not None:
            lengths[where[index]] = phrase.lengths
        if phrase.generating:
            generating[where[index]] = True
    if r.every is not None and lengths is not None:
        scores = np.zeros(slots.size)
        for index in range(r.count):
            if index == r.every[0]:  # every candidate's share, in its place
                scores += _term(r.every[1], r.weights[-1], lengths, r.avgdl)
            elif index in phrases:  # a phrase holds a document once: no slot twice
                phrase = phrases[index]
                scores[where[index]] += _term(phrase.idf, phrase.freq, phrase.lengths, r.avgdl)
    else:
        # bincount adds the shares in the order given, phrase after phrase as FTS5 does,
        # in one pass.
        order = sorted(phrases)
        shares = [
            _term(phrases[i].idf, phrases[i].freq, phrases[i].lengths, r.avgdl) for i in order
        ]
        scores = np.asarray(
            np.bincount(
                np.concatenate([where[i] for i in order] + [np.zeros(0, dtype=np.intp)]),
                weights=np.concatenate([*shares, np.zeros(0)]),
                minlength=slots.size,
            ),
            dtype=np.float64,
        )
    held = np.flatnonzero(generating)
    docs = slots.documents(held)
    keep = ~_excluded(r, postings, docs)
    return docs[keep], scores[held[keep]]


def candidates(r: Resolved, postings: Mapping[int, Postings]) -> Ints:
    """The documents `score` returns, in the same order, without scoring them (what a
    count of the matching notes needs)."""
    import numpy as np

    held = [
        postings[term_id].docs[postings[term_id].holding(r.columns)]
        for term_id, _idf, generating in r.direct.values()
        if generating
    ]
    held += [counted.docs for counted, _idf, generating in r.counted.values() if generating]
    slots = _slots(held)
    present = np.zeros(slots.size, dtype=bool)
    for at in slots.places:
        present[at] = True
    docs = slots.documents(np.flatnonzero(present))
    return docs[~_excluded(r, postings, docs)]


def _excluded(r: Resolved, postings: Mapping[int, Postings], docs: Ints) -> NDArray[np.bool_]:
    """The documents holding an excluded phrase (in the query's columns)."""
    import numpy as np

    out = np.isin(docs, np.fromiter(r.excluded_notes, dtype=np.int64))
    for term_id in r.excluded_ids:
        p = postings[term_id]
        out |= np.isin(docs, p.docs[p.holding(r.columns)])
    return out
