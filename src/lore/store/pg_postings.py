"""The full-text index's writes on PostgreSQL: a note's token streams (in LEX_COLUMNS order,
as the sync gives them: nothing here tokenizes) become postings rows, its terms' counts per
column and its length, and the statistics BM25 reads (lore.store.pg_schema describes the
tables; lore.store.pg_lexical ranks from them).

Terms are the tokens, and the bigrams of two adjacent one-character tokens (most Chinese
words), so a two-character word is looked up as one term. The statistics (document
frequencies, notes and tokens) change by `Pending` deltas, applied once per transaction.
A note's parts are written the same way to the PARTS tables (a part is a document there).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .pg_schema import NOTES, Lexicon

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[Any]


# -- the token stream → postings ------------------------------------------------------------


def is_pair_token(token: str) -> bool:
    """Tokens of one character (a CJK character, mostly) pair into bigram terms."""
    return len(token) == 1


def bigram(first: str, second: str) -> str:
    # No token holds a space, so a bigram can never be mistaken for a token.
    return f"{first} {second}"


def note_postings(fields: Sequence[str]) -> tuple[int, dict[str, list[int]]]:
    """(the note's length in tokens, {term: its count in each column}) for the note's token
    streams in LEX_COLUMNS order; terms are its tokens and its bigrams of adjacent
    one-character tokens."""
    size = 0
    counts: dict[str, list[int]] = {}
    for column, stream in enumerate(fields):
        tokens = stream.split()
        size += len(tokens)
        pairs = (
            bigram(a, b)
            for a, b in zip(tokens, tokens[1:], strict=False)
            if len(a) == 1 and len(b) == 1
        )
        for source in (Counter(tokens), Counter(pairs)):
            for term, n in source.items():
                row = counts.get(term)
                if row is None:
                    row = counts[term] = [0] * len(fields)
                row[column] = n
    return size, counts


# -- writes (inside the caller's transaction) ----------------------------------------------


@dataclass
class Pending:
    """Changes to the statistics that writes made and `flush` has not applied yet. They are
    applied once, before anything reads the statistics and before the transaction commits:
    a row updated once per note (a common word's, lex_stats) would otherwise be rewritten
    thousands of times in one sync, each version behind the last."""

    df: dict[str, list[int]] = field(default_factory=dict)  # term -> [any, per column...]
    docs: int = 0
    tokens: int = 0

    def __bool__(self) -> bool:
        return bool(self.df or self.docs or self.tokens)

    def add(self, counts: Mapping[str, list[int]], sign: int) -> None:
        for term, per_column in counts.items():
            row = self.df.get(term)
            if row is None:
                row = self.df[term] = [0] * (len(per_column) + 1)
            row[0] += sign
            for i, n in enumerate(per_column, 1):
                if n:
                    row[i] += sign


def _term_ids(
    conn: Connection, terms: Iterable[str], *, create: bool, lx: Lexicon
) -> dict[str, int]:
    keys = sorted(set(terms))
    if not keys:
        return {}
    if create:
        # Sorted, so two writers adding the same new terms wait for each other, never
        # deadlock (each unique-index entry is taken in the same order).
        conn.execute(
            f"INSERT INTO {lx.terms} (term) SELECT t FROM unnest(%s::text[]) AS t ORDER BY t"
            " ON CONFLICT (term) DO NOTHING",
            (keys,),
        )
    rows = conn.execute(f"SELECT term, id FROM {lx.terms} WHERE term = ANY(%s)", (keys,))
    return {str(term): int(tid) for term, tid in rows}


def flush(conn: Connection, pending: Pending, lx: Lexicon = NOTES) -> None:
    """Apply the pending changes to the statistics (in the caller's transaction), in key
    order, and forget them."""
    if not pending:
        return
    ids = _term_ids(conn, pending.df, create=False, lx=lx)
    changed = sorted((ids[t], d) for t, d in pending.df.items() if any(d))
    if changed:
        order = [tid for tid, _d in changed]
        conn.execute(
            f"SELECT 1 FROM {lx.terms} WHERE id = ANY(%s) ORDER BY id FOR UPDATE", (order,)
        )
        columns = list(zip(*(d for _tid, d in changed), strict=True))
        conn.execute(
            f"UPDATE {lx.terms} t SET df = t.df + d.df,"
            + ", ".join(f" df_{c} = t.df_{c} + d.df_{c}" for c in lx.columns)
            + f" FROM unnest(%s::int4[], %s::int4[], {', '.join(['%s::int4[]'] * lx.width)})"
            f" AS d(id, df, {lx.df}) WHERE t.id = d.id",
            (order, *[list(c) for c in columns]),
        )
        conn.execute(f"DELETE FROM {lx.terms} WHERE id = ANY(%s) AND df <= 0", (order,))
    if pending.docs or pending.tokens:
        conn.execute(
            f"UPDATE {lx.stats} SET docs = docs + %s, tokens = tokens + %s",
            (pending.docs, pending.tokens),
        )
    pending.df.clear()
    pending.docs = pending.tokens = 0


def write_notes(
    conn: Connection,
    notes: Sequence[tuple[int, Sequence[str]]],
    pending: Pending,
    lx: Lexicon = NOTES,
) -> None:
    """Index these notes ((note id, token streams in LEX_COLUMNS order)); none of them may
    be indexed already (delete_notes first when a note changed). Their statistics are
    added to `pending`."""
    if not notes:
        return
    derived = []
    terms: set[str] = set()
    for note_id, fields in notes:
        size, counts = note_postings(fields)
        derived.append((note_id, size, counts))
        pending.add(counts, +1)
        pending.docs += 1
        pending.tokens += size
        terms.update(counts)
    ids = _term_ids(conn, terms, create=True, lx=lx)
    with conn.cursor() as cur:
        with cur.copy(
            f"COPY {lx.postings} (term_id, {lx.doc}, len, {lx.tf}) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int4", "int8"] + ["int4"] * (1 + lx.width))
            for note_id, size, counts in derived:
                for term, per_column in counts.items():
                    copy.write_row((ids[term], note_id, size, *per_column))
        columns = ", ".join(lx.columns)
        with cur.copy(f"COPY {lx.docs} ({lx.doc}, len, {columns}) FROM STDIN") as copy:
            for (note_id, fields), (_nid, size, _c) in zip(notes, derived, strict=True):
                copy.write_row((note_id, size, *fields))


def delete_notes(
    conn: Connection, note_ids: Sequence[int], pending: Pending, lx: Lexicon = NOTES
) -> None:
    """Take these notes out of the index (ids not indexed are ignored); their statistics
    are taken out of `pending`."""
    if not note_ids:
        return
    pairs: list[tuple[str, int]] = []
    rows = conn.execute(
        f"SELECT {lx.doc}, {', '.join(lx.columns)} FROM {lx.docs} WHERE {lx.doc} = ANY(%s)",
        (list(note_ids),),
    ).fetchall()
    for note_id, *fields in rows:
        size, counts = note_postings(fields)
        pending.add(counts, -1)
        pending.docs -= 1
        pending.tokens -= size
        pairs.extend((term, int(note_id)) for term in counts)
    ids = _term_ids(conn, {t for t, _n in pairs}, create=False, lx=lx)
    conn.execute(
        f"DELETE FROM {lx.postings} p USING unnest(%s::int4[], %s::int8[]) AS d(term_id, doc)"
        f" WHERE p.term_id = d.term_id AND p.{lx.doc} = d.doc",
        ([ids[t] for t, _n in pairs], [n for _t, n in pairs]),
    )
    conn.execute(f"DELETE FROM {lx.docs} WHERE {lx.doc} = ANY(%s)", ([int(r[0]) for r in rows],))
