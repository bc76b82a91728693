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
- Single tokens, and phrases of two one-character tokens (most Chinese words), are terms of
  their own: their notes, counts per column and document frequencies are rows of
  `lex_postings` and `lex_terms`, read by one index range scan each.
- Any other phrase (three characters or more, or with a longer token: "jira 1234") is
  counted in the token streams (`lex_docs`) of the notes holding all of its terms, so its
  position in a long note does not matter (no 16,383-position or 256-occurrence cap).
- One SQL statement sums the scores of every candidate and keeps the best, with each
  one's path (what orders equal scores). Its sums are FTS5's to within a last bit (taken
  in another order), so the few whose order or rounded score that bit could change
  (near-ties, a score at a rounding boundary) are summed again by the server in the
  query's order of phrases (FTS5's order of operations, the same float8 arithmetic): ties
  and near-ties fall exactly as they do in FTS5. Only weights whose f(p) the server
  cannot compute as FTS5 does (not multiples of 1/1024) are summed again here, in Python.
- What only a sync changes (the statistics, a term's id and frequency, a long phrase's
  notes) is read once per generation of the index and kept in the read snapshot's cache
  (lore.store.pg_cache); what is left to read goes in one round trip (a pipeline).

Everything takes plain values (token streams, weights, phrases) and a psycopg connection
whose `search_path` is the vault's schema; the caller owns transactions. The tables read
are a Lexicon's (lore.store.pg_schema): the notes' by default, or the notes' parts
(PARTS, one column: FTS5's `fts_sections`), ranked by the same code. Only the token
streams the sync gives are indexed: nothing here tokenizes text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .pg_cache import ReadCache
from .pg_phrases import (
    Columns,
    Resolved,
    in_columns,
    masked,
    resolve,
)
from .pg_phrases import (
    LexicalQuery as LexicalQuery,  # what callers build and rank() takes
)
from .pg_schema import NOTES, Lexicon

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[Any]

K1 = 1.2
B = 0.75
TIE_MARGIN = 20  # rows past the limit fetched to settle ties at the cut
NEAR = 1e-9  # relative score distance within which two notes are re-scored exactly
# A bound on the relative difference of two sums of the same positive numbers added in
# other orders (n * 2**-53 for n phrases: every query below ~9,000 phrases).
SUM_ERROR = 1e-12
PROBE_COST = 8  # a primary-key lookup, in postings rows read in a pass over a term's


def _weighted(weights: Sequence[float], per_column: Sequence[int]) -> float:
    """FTS5's f(p): each occurrence adds its column's weight, title's first. A product
    where it is the same number as the repeated sum (weights that are whole numbers or
    halves, quarters, ...: every weight lore ships), the sum itself otherwise."""
    total = 0.0
    for w, n in zip(weights, per_column, strict=True):
        if (w * 1024).is_integer() and n < 2**20:
            total += w * n
        else:
            for _ in range(n):
                total += w
    return total


def _f_sql(lx: Lexicon, weights: Sequence[float], columns: Columns) -> str:
    return (
        "("
        + " + ".join(
            f"p.tf_{c} * {float(w)!r}::float8"
            for i, (c, w) in enumerate(zip(lx.columns, weights, strict=True))
            if columns is None or i in columns
        )
        + ")"
    )


def _term_sql(f: str) -> str:
    # The contribution of one phrase, as fts5_aux.c writes it.
    return f"q.idf * (({f} * %(k1p1)s) / ({f} + %(k1)s * (%(omb)s + %(b)s * p.len / %(avgdl)s)))"


# What orders candidates of equal score (lore.retrieve.search.rank's ties by path): the
# note's path; a part's id (as SQLite's rowid orders parts).
_TIE_KEY = {NOTES.docs: "(SELECT n.path FROM notes n WHERE n.id = t.doc)"}


class _Candidate(NamedTuple):
    doc: int
    score: float  # the server's sum: in any order (within a last bit of FTS5's) or exact
    exact: float | None  # FTS5's score bit for bit (when asked and the server can)
    tie: str  # what orders equal scores


def _statement(
    r: Resolved,
    limit: int | None,
    where: str,
    params: Mapping[str, Any],
    among: Sequence[int] | None,
    *,
    exact: bool,
) -> tuple[str, dict[str, Any]]:
    """The candidates as the CTE `t` (doc, len, score), best first, at most `limit`
    (None: all, in no order); only those `among` these documents, if given. Each score
    is the sum of the note's phrases in any order (within a last bit of FTS5's), or with
    `exact` in FTS5's order: bit for bit FTS5's (weights permitting: exact_in_sql)."""
    keys = [(tid, idf_, gen, index) for index, (tid, idf_, gen) in r.direct.items()]
    counted_rows: list[tuple[int, int, float, bool, float, int]] = []
    wanted = None if among is None else set(among)
    for index, (counted, idf_, gen) in r.counted.items():
        for note_id, per_column in counted.per_note.items():
            if wanted is not None and note_id not in wanted:
                continue
            freq = _weighted(r.weights, per_column)
            counted_rows.append((note_id, counted.lengths[note_id], idf_, gen, freq, index))
    lx, doc = r.lx, r.lx.doc
    conditions = [f"({in_columns(lx, r.columns)})"] if r.columns is not None else []
    if among is not None and len(among) * len(keys) * PROBE_COST < r.postings:
        # A few documents: each (term, document) looked up in the primary key.
        conditions.append(f"p.{doc} = ANY(%(among)s::int8[])")
    elif among is not None:
        # Many: a filter on each term's postings (`+ 0`: not an index condition, with
        # which the planner may walk the whole primary key for them, every term's).
        conditions.append(f"p.{doc} + 0 = ANY(%(among)s::int8[])")
    column_filter = " WHERE " + " AND ".join(conditions) if conditions else ""
    f = _f_sql(lx, r.weights, r.columns)
    excluded = ""
    if r.excluded_ids:
        x_columns = f" AND ({in_columns(lx, r.columns, 'x')})" if r.columns is not None else ""
        excluded += (
            f" AND NOT EXISTS (SELECT 1 FROM {lx.postings} x WHERE x.term_id = ANY(%(x_ids)s)"
            f" AND x.{doc} = s.doc{x_columns})"
        )
    if r.excluded_notes:
        excluded += " AND NOT s.doc = ANY(%(x_notes)s::int8[])"
    sql = (
        "WITH q AS (SELECT * FROM unnest(%(ids)s::int4[], %(idfs)s::float8[], %(gens)s::bool[],"
        " %(idx)s::int4[]) AS q(term_id, idf, gen, idx)),"
        " hits AS ("
        f"SELECT p.{doc} AS doc, p.len, q.gen, q.idx, {_term_sql(f)} AS c"
        f" FROM q JOIN {lx.postings} p ON p.term_id = q.term_id{column_filter}"
        " UNION ALL SELECT v.doc, v.len, v.gen, v.idx, v.idf * ((v.f * %(k1p1)s) / (v.f + %(k1)s"
        " * (%(omb)s + %(b)s * v.len / %(avgdl)s))) FROM unnest(%(v_notes)s::int4[],"
        " %(v_lens)s::int4[], %(v_idfs)s::float8[], %(v_gens)s::bool[], %(v_fs)s::float8[],"
        " %(v_idx)s::int4[]) AS v(doc, len, idf, gen, f, idx)),"
        # FTS5 adds a note's phrases in the query's order: `exact`, the same sum in that
        # order (the every-note token is the last phrase).
        f" s AS (SELECT doc, max(len) AS len, sum(c{' ORDER BY idx' if exact else ''}) AS c"
        " FROM hits GROUP BY doc HAVING bool_or(gen)),"
        f" t AS (SELECT s.doc, s.len, s.c{_every_sql(r, 's.len')} AS score FROM s"
        f" WHERE true{excluded}{' AND ' + where if where else ''}"
        + (" ORDER BY score DESC LIMIT %(limit)s" if limit is not None else "")
        + ")"
    )
    values = {
        "ids": [k[0] for k in keys],
        "idfs": [k[1] for k in keys],
        "gens": [k[2] for k in keys],
        "idx": [k[3] for k in keys],
        "v_notes": [c[0] for c in counted_rows],
        "v_lens": [c[1] for c in counted_rows],
        "v_idfs": [c[2] for c in counted_rows],
        "v_gens": [c[3] for c in counted_rows],
        "v_fs": [c[4] for c in counted_rows],
        "v_idx": [c[5] for c in counted_rows],
        "k1p1": K1 + 1.0,
        "k1": K1,
        "omb": 1.0 - B,
        "b": B,
        "avgdl": r.avgdl,
        "x_ids": r.excluded_ids,
        "x_notes": sorted(r.excluded_notes),
        "limit": limit,
        "among": None if among is None else [int(n) for n in among],
        **params,
    }
    return sql, values


def _every_sql(r: Resolved, length: str) -> str:
    """The every-note token's share (the query's last phrase), or nothing."""
    if r.every is None:
        return ""
    w = float(r.weights[-1])
    return (
        f" + {r.every[1]!r}::float8 * (({w!r}::float8 * %(k1p1)s) / ({w!r}::float8"
        f" + %(k1)s * (%(omb)s + %(b)s * {length} / %(avgdl)s)))"
    )


def _candidates(
    conn: Connection,
    r: Resolved,
    limit: int | None,
    where: str,
    params: Mapping[str, Any],
    among: Sequence[int] | None = None,
    *,
    exact: bool = True,
) -> list[_Candidate]:
    """The candidates (see _statement), best first, with what orders equal scores:
    one statement."""
    exact = exact and r.exact_in_sql
    sql, values = _statement(r, limit, where, params, among, exact=exact)
    tie = _TIE_KEY.get(r.lx.docs, "NULL")
    sql += f" SELECT t.doc, t.score, {'t.score' if exact else 'NULL'}, {tie} FROM t"
    rows = conn.execute(sql + " ORDER BY t.score DESC", values).fetchall()
    return [
        _Candidate(
            int(n),
            float(score),
            None if e is None else float(e),
            f"{int(n):020d}" if tie is None else str(tie),
        )
        for n, score, e, tie in rows
    ]


def _matches(conn: Connection, r: Resolved, where: str, params: Mapping[str, Any]) -> list[int]:
    sql, values = _statement(r, None, where, params, None, exact=False)
    return [int(n) for (n,) in conn.execute(sql + " SELECT doc FROM t", values)]


def _exact(conn: Connection, r: Resolved, note_ids: list[int]) -> dict[int, float]:
    """FTS5's score of these notes, summed in its order of phrases and operations, here:
    for weights whose f(p) the server cannot compute as FTS5 does (Resolved.exact_in_sql)."""
    contributions: dict[int, dict[int, tuple[int, tuple[int, ...]]]] = {n: {} for n in note_ids}
    by_term: dict[int, list[int]] = {}  # a phrase counted n times is n phrases
    for index, (tid, _i, _g) in r.direct.items():
        by_term.setdefault(tid, []).append(index)
    if by_term and note_ids:
        for tid, note_id, size, *counts in conn.execute(
            f"SELECT term_id, {r.lx.doc}, len, {r.lx.tf} FROM {r.lx.postings}"
            f" WHERE term_id = ANY(%s) AND {r.lx.doc} = ANY(%s)",
            (list(by_term), note_ids),
        ):
            per_column = masked(counts, r.columns)
            if any(per_column):
                for index in by_term[int(tid)]:
                    contributions[int(note_id)][index] = (int(size), per_column)
    for index, (counted, _idf, _gen) in r.counted.items():
        for note_id in note_ids:
            if note_id in counted.per_note:
                size = counted.lengths[note_id]
                contributions[note_id][index] = (size, counted.per_note[note_id])
    lengths = {n: next(iter(c.values()))[0] for n, c in contributions.items() if c}
    idfs = {i: v[1] for i, v in r.direct.items()} | {i: v[1] for i, v in r.counted.items()}
    scores: dict[int, float] = {}
    for note_id in note_ids:
        size = lengths[note_id]  # a candidate holds a phrase
        score = 0.0
        for index in range(r.count):
            if r.every is not None and index == r.every[0]:
                freq = r.weights[-1]
                weight = r.every[1]
            elif index in contributions[note_id]:
                freq = _weighted(r.weights, contributions[note_id][index][1])
                weight = idfs[index]
            else:
                continue
            score += weight * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * size / r.avgdl)))
        scores[note_id] = score
    return scores


def _exact_scores(conn: Connection, r: Resolved, found: list[_Candidate]) -> dict[int, float]:
    """FTS5's score of each candidate found (from the server when it summed them)."""
    if r.exact_in_sql:
        return {c.doc: c.exact for c in found if c.exact is not None}
    return _exact(conn, r, [c.doc for c in found])


def _unsure(found: list[_Candidate]) -> list[int]:
    """The candidates (best first) whose order or rounded score the server's sum may not
    settle: within NEAR of a neighbour's, or within SUM_ERROR of a rounding boundary."""
    out: set[int] = set()
    for a, b in zip(found, found[1:], strict=False):
        if a.score - b.score <= NEAR * a.score:
            out |= {a.doc, b.doc}
    for c in found:
        if round(c.score * (1 - SUM_ERROR), 6) != round(c.score * (1 + SUM_ERROR), 6):
            out.add(c.doc)
    return [c.doc for c in found if c.doc in out]


def _settled(
    conn: Connection, r: Resolved, found: list[_Candidate], where: str, params: Mapping[str, Any]
) -> dict[int, float]:
    """Each candidate's score, FTS5's bit for bit where it decides their order or their
    rounded value: the server's sum elsewhere (the same to 6 places, in the same order)."""
    if not r.exact_in_sql:
        return _exact(conn, r, [c.doc for c in found])
    settled = {c.doc: c.score for c in found}
    unsure = _unsure(found)
    if unsure:
        again = _candidates(conn, r, None, where, params, among=unsure)
        settled |= _exact_scores(conn, r, again)
    return settled


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
    lore.retrieve.search.rank returns on SQLite. One statement, and one more for the few
    candidates the server's sum leaves unsure (_unsure); `cache`: the read snapshot's
    (lore.store.pg_cache).

    `where`: an extra condition on candidates (the column `s.doc`), with named
    `params`: where compiled search filters go."""
    r = resolve(conn, query, weights, lx, cache)
    if r.notes == 0 or r.empty:
        return []
    rows = _candidates(conn, r, limit + TIE_MARGIN, where, params or {}, exact=False)
    if len(rows) > limit:
        floor = rows[limit - 1].score * (1 - NEAR)
        if len(rows) == limit + TIE_MARGIN and rows[-1].score >= floor:
            # near-ties past the margin
            rows = _candidates(conn, r, None, where, params or {}, exact=False)
        rows = [row for row in rows if row.score >= floor]
    exact = _settled(conn, r, rows, where, params or {})
    ties = {row.doc: row.tie for row in rows}
    ordered = sorted(exact, key=lambda n: (-exact[n], ties[n]))[:limit]
    return [(n, round(exact[n], 6)) for n in ordered]


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
    found = _candidates(conn, r, None, "", {}, among=note_ids)
    return _exact_scores(conn, r, found)


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
    plain = LexicalQuery(query.generating, excluded=query.excluded, columns=query.columns)
    r = resolve(conn, plain, [1.0] * lx.width, lx, cache)
    if r.notes == 0 or r.empty:
        return []
    return _matches(conn, r, where, params or {})


def count_matching(
    conn: Connection,
    query: LexicalQuery,
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    cache: ReadCache | None = None,
) -> int:
    """How many notes `matching` finds."""
    return len(matching(conn, query, where=where, params=params, cache=cache))
