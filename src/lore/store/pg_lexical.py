"""Full-text ranking on PostgreSQL: exactly what SQLite FTS5's `bm25()` computes, over the
same token stream (lore.derive.tokenize), so both backends give the same notes in the same
order with the same scores.

FTS5's bm25 (ext/fts5/fts5_aux.c), reproduced term for term:

    score(note) = sum over the query's phrases, in the order they appear in the query, of
                  idf(p) * f(p) * (k1 + 1) / (f(p) + k1 * (1 - b + b * D / avgdl))
    k1 = 1.2, b = 0.75
    f(p)   = sum over the columns of weight(column) * occurrences of p in that column
    D      = the note's tokens in all columns; avgdl = tokens in the index / notes
    idf(p) = log((N - n(p) + 0.5) / (n(p) + 0.5)), floored to 1e-6 when <= 0, where n(p)
             is the number of notes holding the phrase (in the query's column, if it names
             one), whatever else the query says.

A phrase is a run of adjacent tokens within one column; occurrences may overlap ("a a" is
twice in "a a a"). Candidates are the notes holding a generating phrase and no excluded
one; score-only phrases (`(rare) AND (common OR <every note>)` in lore.retrieve.query)
score them without bringing any.

How it is computed here (lore.store.pg_schema has the tables, lore.store.pg_postings
writes them):
- Single tokens, phrases of two one-character tokens (most Chinese words) and of three
  spelling a word of jieba's dictionary (lore.store.jieba_words) are terms of their own:
  their notes, counts per column and document frequencies are in
  `lex_packs`/`lex_postings` (lore.store.pg_packs) and `lex_terms`.
- Any other phrase (a longer word, a name the dictionary lacks, a phrase with a longer
  token: "jira 1234") is counted in the token streams (`lex_docs`) of the notes holding
  all of its terms, so its position in a long note does not matter (no 16,383-position or
  256-occurrence cap).
- The server hands over each term's postings packed in bytes (its blocks as stored, its
  rows concatenated: no arithmetic, no grouping of notes); lore.store.pg_bm25 sums the
  scores with numpy in FTS5's order, so every score is FTS5's bit for bit and ties fall
  by path as they do in SQLite. Summing in SQL cost the server an aggregation of every
  posting per ranking, three or four per search.
- What only a sync changes (the statistics, a term's id and frequency, a long phrase's
  notes, a term's postings) is read once per generation of the index and kept in the read
  snapshot's cache (lore.store.pg_cache): a search reads a term's postings once for its
  notes, their count and their names, and the next searches not at all while the cache
  holds them (128 MB of postings, the least recently used let go).

Everything takes plain values (token streams, weights, phrases) and a psycopg connection
whose `search_path` is the vault's schema; the caller owns transactions. The tables read
are a Lexicon's (lore.store.pg_schema): the notes' by default, or the notes' parts
(PARTS, one column: FTS5's `fts_sections`), ranked by the same code. Only the token
streams the sync gives are indexed: nothing here tokenizes text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import pg_bm25
from .pg_cache import ReadCache
from .pg_packs import Postings, term_postings
from .pg_phrases import (
    LexicalQuery as LexicalQuery,  # what callers build and rank() takes
)
from .pg_phrases import Resolved, resolve
from .pg_schema import NOTES, Lexicon

if TYPE_CHECKING:
    import numpy as np
    import psycopg
    from numpy.typing import NDArray

    from .pg_packs import Ints

    Connection = psycopg.Connection[Any]

FILTER_CHUNK = 256  # candidates, best first, checked against a search's filters at a time


def _postings(conn: Connection, r: Resolved, cache: ReadCache | None) -> dict[int, Postings]:
    """The postings of every term the query looks up directly and of its excluded ones."""
    terms = [term_id for term_id, _idf, _gen in r.direct.values()] + r.excluded_ids
    return term_postings(conn, r.lx, terms, cache)


def _scored(
    conn: Connection, r: Resolved, cache: ReadCache | None, among: Collection[int] | None = None
) -> tuple[Ints, NDArray[np.float64]]:
    """The candidates and FTS5's score of each (pg_bm25.score)."""
    return pg_bm25.score(r, _postings(conn, r, cache), among)


def _passing(
    conn: Connection, docs: Sequence[int], where: str, params: Mapping[str, Any]
) -> set[int]:
    """Those of these documents the condition `where` (on `s.doc`) lets through."""
    sql = f"SELECT s.doc FROM unnest(%(docs)s::int8[]) AS s(doc) WHERE {where}"
    return {int(n) for (n,) in conn.execute(sql, {**params, "docs": list(docs)})}


def _ties(conn: Connection, lx: Lexicon, docs: Sequence[int]) -> dict[int, str]:
    """What orders candidates of equal score (lore.retrieve.search.rank's ties by path):
    the note's path; a part's id (as SQLite's rowid orders parts)."""
    if lx is not NOTES:
        return {n: f"{n:020d}" for n in docs}
    rows = conn.execute("SELECT id, path FROM notes WHERE id = ANY(%s::int8[])", (list(docs),))
    return {int(n): str(path) for n, path in rows}


def rank(
    conn: Connection,
    query: LexicalQuery,
    weights: Sequence[float],
    limit: int,
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    lx: Lexicon = NOTES,
    cache: ReadCache | None = None,
) -> list[tuple[int, float]]:
    """(note id, BM25 score as a positive number rounded to 6 places) of the best `limit`
    notes, best first, equal scores ordered by path (parts: by id): what
    lore.retrieve.search.rank returns on SQLite. `cache`: the read snapshot's
    (lore.store.pg_cache).

    `where`: an extra condition on candidates (the column `s.doc`), with named
    `params`: where compiled search filters go; it is asked of the best candidates first,
    a chunk at a time, until the best `limit` that pass it are known."""
    if limit <= 0:
        return []
    ranked, _none = rank_and_score(
        conn, query, weights, limit, (), where=where, params=params, lx=lx, cache=cache
    )
    return ranked


def rank_and_score(
    conn: Connection,
    query: LexicalQuery,
    weights: Sequence[float],
    limit: int,
    among: Sequence[int],
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    lx: Lexicon = NOTES,
    cache: ReadCache | None = None,
) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """What `rank` and `scores` (of the documents `among`) give, from one scoring of the
    candidates: the parts' ranking scores the parts of other channels' notes too."""
    import numpy as np

    r = resolve(conn, query, weights, lx, cache)
    if r.notes == 0 or r.empty:
        return [], {}
    docs, scores = _scored(conn, r, cache)
    exact: dict[int, float] = {}
    if among:
        held = np.isin(docs, np.fromiter(among, dtype=np.int64))
        exact = dict(zip(docs[held].tolist(), scores[held].tolist(), strict=True))
    if limit <= 0:
        return [], exact
    return _best(conn, lx, docs, scores, limit, where, params or {}), exact


def _best(
    conn: Connection,
    lx: Lexicon,
    docs: Ints,
    scores: NDArray[np.float64],
    limit: int,
    where: str,
    params: Mapping[str, Any],
) -> list[tuple[int, float]]:
    """The best `limit` of these candidates passing `where`, best first, ties in order
    (rank's answer). The condition is asked of the best first, a chunk at a time, until
    the last place is settled."""
    import numpy as np

    if not len(docs):
        return []
    best: list[tuple[int, float]] = []
    if where:
        order = np.lexsort((docs, -scores))
        step = max(FILTER_CHUNK, limit)
        for start in range(0, len(order), step):
            at = order[start : start + step]
            chunk = list(zip(docs[at].tolist(), scores[at].tolist(), strict=True))
            passing = _passing(conn, [n for n, _s in chunk], where, params)
            best += [c for c in chunk if c[0] in passing]
            if len(best) > limit and best[limit][1] < best[limit - 1][1]:
                break  # every note that may share the last place is in
        if len(best) > limit:
            floor = best[limit - 1][1]
            best = [c for c in best if c[1] >= floor]
    else:  # the best `limit` and every note sharing the last place, without a full sort
        cut = max(len(scores) - limit, 0)
        floor = np.partition(scores, cut)[cut]
        held = np.flatnonzero(scores >= floor)
        best = list(zip(docs[held].tolist(), scores[held].tolist(), strict=True))
    shared = Counter(s for _n, s in best)
    tied = [n for n, s in best if shared[s] > 1]
    ties = _ties(conn, lx, tied) if tied else {}
    best.sort(key=lambda c: (-c[1], ties.get(c[0], "")))
    return [(n, round(s, 6)) for n, s in best[:limit]]


def scores(
    conn: Connection,
    query: LexicalQuery,
    weights: Sequence[float],
    note_ids: Sequence[int],
    lx: Lexicon = NOTES,
    cache: ReadCache | None = None,
) -> dict[int, float]:
    """FTS5's bm25 of those of these notes the query matches, as a positive number,
    unrounded, bit for bit (with one column's weight alone, a field's share: --explain's
    per-field scores)."""
    r = resolve(conn, query, weights, lx, cache)
    if not r.notes or not note_ids or r.empty:
        return {}
    docs, found = _scored(conn, r, cache, among=note_ids)
    return dict(zip(docs.tolist(), found.tolist(), strict=True))


def matching(
    conn: Connection,
    query: LexicalQuery,
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    lx: Lexicon = NOTES,
    cache: ReadCache | None = None,
) -> list[int]:
    """Notes holding a generating phrase and no excluded one (and passing `where`)."""
    docs: list[int] = _matching(conn, query, lx, cache).tolist()
    if where and docs:
        passing = _passing(conn, docs, where, params or {})
        docs = [n for n in docs if n in passing]
    return docs


def _matching(conn: Connection, query: LexicalQuery, lx: Lexicon, cache: ReadCache | None) -> Ints:
    """The notes `matching` finds before its condition."""
    import numpy as np

    plain = LexicalQuery(query.generating, excluded=query.excluded, columns=query.columns)
    r = resolve(conn, plain, [1.0] * lx.width, lx, cache)
    if r.notes == 0 or r.empty:
        return np.zeros(0, dtype=np.int64)
    return pg_bm25.candidates(r, _postings(conn, r, cache))


def count_matching(
    conn: Connection,
    query: LexicalQuery,
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    cache: ReadCache | None = None,
) -> int:
    """How many notes `matching` finds (without a list of them when there is no condition:
    a common word's count is most of the vault)."""
    if where:
        return len(matching(conn, query, where=where, params=params, cache=cache))
    return len(_matching(conn, query, NOTES, cache))
