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
- One SQL statement sums the scores of every candidate and keeps the best; the few at the
  cut are then scored again in Python in FTS5's own order of operations, so ties and
  near-ties (a last-bit difference of a sum taken in another order) fall exactly as they
  do in FTS5, and ties of equal score are ordered by the caller's key (the note's path).

Everything takes plain values (token streams, weights, phrases) and a psycopg connection
whose `search_path` is the vault's schema; the caller owns transactions. The tables read
are a Lexicon's (lore.store.pg_schema): the notes' by default, or the notes' parts
(PARTS, one column: FTS5's `fts_sections`), ranked by the same code. Only the token
streams the sync gives are indexed: nothing here tokenizes text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .pg_postings import bigram, is_pair_token
from .pg_schema import LEX_COLUMNS, NOTES, Lexicon
from .query import EVERY_NOTE, TextQuery

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[Any]

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5's floor for a phrase most notes hold
TIE_MARGIN = 20  # rows past the limit fetched to settle ties at the cut
NEAR = 1e-9  # relative score distance within which two notes are re-scored exactly

Phrase = tuple[str, ...]
Columns = tuple[int, ...] | None  # the columns a query matches in (None: every one)


# -- statistics ------------------------------------------------------------------------------


def index_size(conn: Connection, lx: Lexicon = NOTES) -> tuple[int, int]:
    """(documents, tokens) in the index."""
    row = conn.execute(f"SELECT docs, tokens FROM {lx.stats}").fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def idf(notes: int, holding: int) -> float:
    """FTS5's IDF, floored (a phrase held by more than half of the notes gets 1e-6)."""
    value = math.log((notes - holding + 0.5) / (holding + 0.5))
    return value if value > 0.0 else IDF_FLOOR


# -- queries ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LexicalQuery:
    """A full-text query as phrases of tokens, in FTS5's phrase order: generating, then
    scoring, then the every-note token (lore.store.search.fts_match writes them in
    this order); a phrase that counts n times is n phrases, as it is in FTS5.

    `every_note`: the token every note's body ends with; when there are scoring phrases
    it is ORed with them (so they bring no candidates) and, as one more phrase of the
    query, adds its tiny weight, as it does in FTS5. `columns`: match in those columns
    only (FTS5's `title : (...)`)."""

    generating: tuple[Phrase, ...]
    scoring: tuple[Phrase, ...] = ()
    excluded: tuple[Phrase, ...] = ()
    every_note: str | None = None
    columns: Columns = None

    @classmethod
    def of(cls, query: TextQuery, *, scored: bool = True) -> LexicalQuery:
        """The TextQuery as FTS5 runs it (`scored`: each phrase as often as it counts)."""
        counts = dict(query.counts) if scored else {}

        def expand(phrases: tuple[Phrase, ...]) -> tuple[Phrase, ...]:
            return tuple(p for p in phrases for _ in range(counts.get(p, 1)))

        columns = None
        if query.fields:
            columns = tuple(sorted(LEX_COLUMNS.index(name) for name in set(query.fields)))
        return cls(
            expand(query.terms),
            expand(query.score_only),
            query.excluded,
            EVERY_NOTE,
            columns,
        )

    def phrases(self) -> list[Phrase]:
        """The phrases that score, in FTS5's order."""
        every = [(self.every_note,)] if self.every_note and self.scoring else []
        return [*self.generating, *self.scoring, *every]


def _masked(per_column: Sequence[int], columns: Columns) -> tuple[int, ...]:
    if columns is None:
        return tuple(int(n) for n in per_column)
    return tuple(int(n) if i in columns else 0 for i, n in enumerate(per_column))


@dataclass(frozen=True)
class _Counted:
    """A phrase counted in the token streams: per note, its count in each column."""

    holding: int  # notes holding it (in the query's column, if any)
    per_note: dict[int, tuple[int, ...]]  # note id -> counts per column
    lengths: dict[int, int]


def _direct(phrase: Phrase) -> str | None:
    """The term a phrase is looked up as, or None when it must be counted in the streams."""
    if len(phrase) == 1:
        return phrase[0]
    if len(phrase) == 2 and all(map(is_pair_token, phrase)):
        return bigram(*phrase)
    return None


def _anchors(phrase: Phrase) -> list[str]:
    """Terms every note holding the phrase holds: its bigrams where its tokens pair, else
    its tokens."""
    out: list[str] = []
    for i, token in enumerate(phrase):
        following = phrase[i + 1] if i + 1 < len(phrase) else None
        if following is not None and is_pair_token(token) and is_pair_token(following):
            out.append(bigram(token, following))
        elif not (i > 0 and is_pair_token(token) and is_pair_token(phrase[i - 1])):
            out.append(token)
    return out


def _pattern(phrase: Phrase) -> str:
    """A regular expression (PostgreSQL's) matching at every space that starts an
    occurrence, overlapping ones included, in ' ' || stream || ' '."""
    body = " ".join(re.sub(r"([^0-9A-Za-z\u0080-\U0010ffff])", r"\\\1", t) for t in phrase)
    return f" (?={body} )"


def _count_phrase(
    conn: Connection,
    phrase: Phrase,
    columns: Columns,
    terms: Mapping[str, tuple[int, int]],
    lx: Lexicon,
) -> _Counted:
    anchors = _anchors(phrase)
    if any(a not in terms for a in anchors):
        return _Counted(0, {}, {})
    anchors.sort(key=lambda a: terms[a][1])  # the rarest first: it says where to look
    first, *rest = (terms[a][0] for a in anchors)
    pattern = _pattern(phrase)
    counts = ", ".join(f"regexp_count(' ' || d.{c} || ' ', %(p)s)" for c in lx.columns)
    doc = lx.doc
    rows = conn.execute(
        f"SELECT d.{doc}, d.len, {counts} FROM {lx.postings} p0"
        f" JOIN {lx.docs} d ON d.{doc} = p0.{doc} WHERE p0.term_id = %(first)s"
        + "".join(
            f" AND EXISTS (SELECT 1 FROM {lx.postings} p WHERE p.term_id = %(t{i})s"
            f" AND p.{doc} = p0.{doc})"
            for i in range(len(rest))
        ),
        {"p": pattern, "first": first, **{f"t{i}": t for i, t in enumerate(rest)}},
    ).fetchall()
    per_note: dict[int, tuple[int, ...]] = {}
    lengths: dict[int, int] = {}
    for note_id, size, *counts in rows:
        per_column = _masked(counts, columns)
        if any(per_column):
            per_note[int(note_id)] = per_column
            lengths[int(note_id)] = int(size)
    return _Counted(len(per_note), per_note, lengths)


@dataclass
class _Resolved:
    """The query with every phrase resolved to a term id or to its counted notes."""

    lx: Lexicon
    notes: int
    avgdl: float
    weights: tuple[float, ...]
    columns: Columns
    direct: dict[int, tuple[int, float, bool]]  # phrase index -> (term id, idf, generating)
    counted: dict[int, tuple[_Counted, float, bool]]  # phrase index -> (notes, idf, generating)
    every: tuple[int, float] | None  # (phrase index, idf) of the every-note token
    excluded_ids: list[int]  # term ids of excluded phrases
    excluded_notes: set[int]  # notes holding an excluded phrase counted in the streams
    count: int  # phrases that score

    @property
    def empty(self) -> bool:
        return not any(gen for _t, _i, gen in self.direct.values()) and not any(
            gen and c.per_note for c, _i, gen in self.counted.values()
        )


def _resolve(
    conn: Connection, query: LexicalQuery, weights: Sequence[float], lx: Lexicon
) -> _Resolved:
    notes, tokens = index_size(conn, lx)
    phrases = query.phrases()
    wanted: list[str] = []
    for phrase in (*phrases, *query.excluded):
        key = _direct(phrase)
        wanted += [key] if key is not None else _anchors(phrase)
    if query.columns is None:
        found = conn.execute(f"SELECT term, id, df FROM {lx.terms} WHERE term = ANY(%s)", (wanted,))
    else:  # the notes holding the term in those columns (FTS5's IDF under a column filter)
        found = conn.execute(
            f"SELECT t.term, t.id, count(p.{lx.doc}) FROM {lx.terms} t LEFT JOIN {lx.postings} p"
            f" ON p.term_id = t.id AND ({_in_columns(lx, query.columns)}) WHERE t.term = ANY(%s)"
            " GROUP BY t.term, t.id",
            (wanted,),
        )
    terms = {str(term): (int(tid), int(df)) for term, tid, df in found}
    resolved = _Resolved(
        lx=lx,
        notes=notes,
        avgdl=tokens / notes if notes else 1.0,
        weights=tuple(float(w) for w in weights),
        columns=query.columns,
        direct={},
        counted={},
        every=None,
        excluded_ids=[],
        excluded_notes=set(),
        count=len(phrases),
    )
    generating = len(query.generating)
    counted_cache: dict[Phrase, _Counted] = {}
    for index, phrase in enumerate(phrases):
        is_generating = index < generating
        key = _direct(phrase)
        if query.every_note is not None and phrase == (query.every_note,) and not is_generating:
            holding = terms.get(query.every_note, (0, notes))[1]
            resolved.every = (index, idf(notes, holding))
        elif key is not None:
            if key in terms and terms[key][1] > 0:
                tid, holding = terms[key]
                resolved.direct[index] = (tid, idf(notes, holding), is_generating)
        else:
            if phrase not in counted_cache:
                counted_cache[phrase] = _count_phrase(conn, phrase, query.columns, terms, lx)
            counted = counted_cache[phrase]
            if counted.per_note:
                resolved.counted[index] = (counted, idf(notes, counted.holding), is_generating)
    for phrase in query.excluded:
        key = _direct(phrase)
        if key is not None:
            if key in terms:
                resolved.excluded_ids.append(terms[key][0])
        else:
            counted = _count_phrase(conn, phrase, query.columns, terms, lx)
            resolved.excluded_notes |= set(counted.per_note)
    return resolved


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


def _in_columns(lx: Lexicon, columns: tuple[int, ...], alias: str = "p") -> str:
    return " OR ".join(f"{alias}.tf_{lx.columns[c]} > 0" for c in columns)


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


def _candidates(
    conn: Connection, r: _Resolved, limit: int | None, where: str, params: Mapping[str, Any]
) -> list[tuple[int, float]]:
    """(note id, score) of the candidates, best first, at most `limit` (None: all); the
    scores are the exact ones to within a last-bit rounding of the sum."""
    keys = [(tid, idf_, gen) for tid, idf_, gen in r.direct.values()]
    counted_rows: list[tuple[int, int, float, bool, float]] = []
    for counted, idf_, gen in r.counted.values():
        for note_id, per_column in counted.per_note.items():
            counted_rows.append(
                (note_id, counted.lengths[note_id], idf_, gen, _weighted(r.weights, per_column))
            )
    lx, doc = r.lx, r.lx.doc
    column_filter = f" WHERE ({_in_columns(lx, r.columns)})" if r.columns is not None else ""
    f = _f_sql(lx, r.weights, r.columns)
    every = ""
    if r.every is not None:
        w = float(r.weights[-1])
        every = (
            f" + {r.every[1]!r}::float8 * (({w!r}::float8 * %(k1p1)s) / ({w!r}::float8"
            " + %(k1)s * (%(omb)s + %(b)s * s.len / %(avgdl)s)))"
        )
    excluded = ""
    if r.excluded_ids:
        in_columns = f" AND ({_in_columns(lx, r.columns, 'x')})" if r.columns is not None else ""
        excluded += (
            f" AND NOT EXISTS (SELECT 1 FROM {lx.postings} x WHERE x.term_id = ANY(%(x_ids)s)"
            f" AND x.{doc} = s.doc{in_columns})"
        )
    if r.excluded_notes:
        excluded += " AND NOT s.doc = ANY(%(x_notes)s)"
    sql = (
        "WITH q AS (SELECT * FROM unnest(%(ids)s::int4[], %(idfs)s::float8[], %(gens)s::bool[])"
        " AS q(term_id, idf, gen)),"
        " hits AS ("
        f"SELECT p.{doc} AS doc, p.len, q.gen, {_term_sql(f)} AS c"
        f" FROM q JOIN {lx.postings} p ON p.term_id = q.term_id{column_filter}"
        " UNION ALL SELECT v.doc, v.len, v.gen, v.idf * ((v.f * %(k1p1)s) / (v.f + %(k1)s"
        " * (%(omb)s + %(b)s * v.len / %(avgdl)s))) FROM unnest(%(v_notes)s::int4[],"
        " %(v_lens)s::int4[], %(v_idfs)s::float8[], %(v_gens)s::bool[], %(v_fs)s::float8[])"
        " AS v(doc, len, idf, gen, f)),"
        " s AS (SELECT doc, max(len) AS len, sum(c) AS c FROM hits GROUP BY doc"
        " HAVING bool_or(gen))"
        f" SELECT s.doc, s.c{every} AS score FROM s WHERE true{excluded}"
        f"{' AND ' + where if where else ''}"
        " ORDER BY score DESC" + (" LIMIT %(limit)s" if limit is not None else "")
    )
    rows = conn.execute(
        sql,
        {
            "ids": [k[0] for k in keys],
            "idfs": [k[1] for k in keys],
            "gens": [k[2] for k in keys],
            "v_notes": [c[0] for c in counted_rows],
            "v_lens": [c[1] for c in counted_rows],
            "v_idfs": [c[2] for c in counted_rows],
            "v_gens": [c[3] for c in counted_rows],
            "v_fs": [c[4] for c in counted_rows],
            "k1p1": K1 + 1.0,
            "k1": K1,
            "omb": 1.0 - B,
            "b": B,
            "avgdl": r.avgdl,
            "x_ids": r.excluded_ids,
            "x_notes": sorted(r.excluded_notes),
            "limit": limit,
            **params,
        },
    ).fetchall()
    return [(int(n), float(s)) for n, s in rows]


def _exact(conn: Connection, r: _Resolved, note_ids: list[int]) -> dict[int, float]:
    """FTS5's score of these notes, summed in its order of phrases and operations."""
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
            per_column = _masked(counts, r.columns)
            if any(per_column):
                for index in by_term[int(tid)]:
                    contributions[int(note_id)][index] = (int(size), per_column)
    for index, (counted, _idf, _gen) in r.counted.items():
        for note_id in note_ids:
            if note_id in counted.per_note:
                size = counted.lengths[note_id]
                contributions[note_id][index] = (size, counted.per_note[note_id])
    lengths = {n: next(iter(c.values()))[0] for n, c in contributions.items() if c}
    missing = [n for n in note_ids if n not in lengths]
    if missing:
        lengths.update(
            (int(n), int(size))
            for n, size in conn.execute(
                f"SELECT {r.lx.doc}, len FROM {r.lx.docs} WHERE {r.lx.doc} = ANY(%s)",
                (missing,),
            )
        )
    idfs = {i: v[1] for i, v in r.direct.items()} | {i: v[1] for i, v in r.counted.items()}
    scores: dict[int, float] = {}
    for note_id in note_ids:
        size = lengths[note_id]
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


def rank(
    conn: Connection,
    query: LexicalQuery,
    weights: Sequence[float],
    limit: int,
    order_key: Callable[[list[int]], Mapping[int, str]],
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    lx: Lexicon = NOTES,
) -> list[tuple[int, float]]:
    """(note id, BM25 score as a positive number rounded to 6 places) of the best `limit`
    notes, best first, equal scores ordered by `order_key` (note ids -> their paths): what
    lore.retrieve.search.rank returns on SQLite.

    `where`: an extra condition on candidates (the column `s.doc`), with named
    `params`: where compiled search filters go."""
    r = _resolve(conn, query, weights, lx)
    if r.notes == 0 or r.empty:
        return []
    rows = _candidates(conn, r, limit + TIE_MARGIN, where, params or {})
    if len(rows) > limit:
        floor = rows[limit - 1][1] * (1 - NEAR)
        if len(rows) == limit + TIE_MARGIN and rows[-1][1] >= floor:
            rows = _candidates(conn, r, None, where, params or {})  # near-ties past the margin
        rows = [row for row in rows if row[1] >= floor]
    exact = _exact(conn, r, [n for n, _s in rows])
    keys = order_key(list(exact))
    ordered = sorted(exact, key=lambda n: (-exact[n], keys[n]))[:limit]
    return [(n, round(exact[n], 6)) for n in ordered]


def scores(
    conn: Connection,
    query: LexicalQuery,
    weights: Sequence[float],
    note_ids: Sequence[int],
    lx: Lexicon = NOTES,
) -> dict[int, float]:
    """FTS5's bm25 of these notes as a positive number, unrounded, bit for bit (with one
    column's weight alone, a field's share: --explain's per-field scores)."""
    r = _resolve(conn, query, weights, lx)
    return _exact(conn, r, list(note_ids)) if r.notes and note_ids else {}


def matching(
    conn: Connection,
    query: LexicalQuery,
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
    lx: Lexicon = NOTES,
) -> list[int]:
    """Notes holding a generating phrase and no excluded one (and passing `where`)."""
    plain = LexicalQuery(query.generating, excluded=query.excluded, columns=query.columns)
    r = _resolve(conn, plain, [1.0] * lx.width, lx)
    if r.notes == 0 or r.empty:
        return []
    return [n for n, _s in _candidates(conn, r, None, where, params or {})]


def count_matching(
    conn: Connection,
    query: LexicalQuery,
    *,
    where: str = "",
    params: Mapping[str, Any] | None = None,
) -> int:
    """How many notes `matching` finds."""
    return len(matching(conn, query, where=where, params=params))
