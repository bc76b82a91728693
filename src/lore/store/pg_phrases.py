"""What a full-text query is in one PostgreSQL index (issue 15), before any note is scored:
each phrase's term ids, document frequency and IDF, the notes a long phrase is counted in,
the columns it matches in — lore.store.pg_lexical ranks with what this resolves.

Values only a sync changes come from the read snapshot's cache (lore.store.pg_cache); what
is left is read in a round trip or two."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .jieba_words import WordTerms, words_for
from .pg_cache import ReadCache
from .pg_packs import Postings, term_postings
from .pg_postings import is_pair_token, joined
from .pg_schema import LEX_COLUMNS, WORDS_META, Lexicon
from .query import EVERY_NOTE, TextQuery

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[Any]

IDF_FLOOR = 1e-6  # FTS5's floor for a phrase most notes hold

Phrase = tuple[str, ...]
Columns = tuple[int, ...] | None  # the columns a query matches in (None: every one)
# Characters a token stream holds only as a token of their own: lore's tokenizer cuts every
# CJK character out alone (lore.derive.tokenize), Han and kana here, but for these, which
# NFKC also makes of compatibility characters inside a word (ゟ → より, ㊀ → 一).
# tests/store/test_pg_phrase_counts.py checks it against the tokenizer, code point by code
# point.
_ALONE = re.compile(
    "(?![よりコト一二三四五六七八九十])"
    "[\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0003134a]"
)


# -- statistics ------------------------------------------------------------------------------


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


def _direct(phrase: Phrase, word_terms: WordTerms) -> str | None:
    """The term a phrase is looked up as, or None when it must be counted in the streams:
    a token; two one-character tokens (a bigram); three or four making one of the index's
    dictionary words."""
    if len(phrase) == 1:
        return phrase[0]
    if len(phrase) in (2, 3, 4) and all(map(is_pair_token, phrase)):
        if len(phrase) == 2 or "".join(phrase) in word_terms:
            return joined(phrase)
    return None


def _anchors(phrase: Phrase, word_terms: WordTerms) -> list[str]:
    """Terms every note holding the phrase holds: in each run of one-character tokens, its
    dictionary words of four, those of three no such word holds, and the bigrams no word
    covers (or the lone token); any other token itself."""
    out: list[str] = []
    start = 0
    while start < len(phrase):
        end = start + 1
        if is_pair_token(phrase[start]):
            while end < len(phrase) and is_pair_token(phrase[end]):
                end += 1
        run = phrase[start:end]
        held: set[int] = set()  # the run's characters inside a word of four
        covered: set[int] = set()  # the bigrams (by their first character) inside a word
        for n in (4, 3):
            for i in range(len(run) - n + 1):
                chars = set(range(i, i + n))
                if "".join(run[i : i + n]) in word_terms and not chars <= held:
                    out.append(joined(run[i : i + n]))
                    held |= chars if n == 4 else set()
                    covered |= chars - {i + n - 1}
        out += [joined(run[i : i + 2]) for i in range(len(run) - 1) if i not in covered]
        if len(run) == 1:
            out.append(run[0])
        start = end
    return out


def _escaped(phrase: Phrase) -> str:
    """The phrase as a regular expression (PostgreSQL's) matching its tokens, spaced."""
    return " ".join(re.sub(r"([^0-9A-Za-z\u0080-\U0010ffff])", r"\\\1", t) for t in phrase)


def _overlaps(phrase: Phrase) -> bool:
    """Whether two occurrences of the phrase can overlap ("a a" is twice in "a a a"): some
    of its first tokens are also its last."""
    return any(phrase[:n] == phrase[-n:] for n in range(1, len(phrase)))


def _counter(phrase: Phrase) -> tuple[str, str]:
    """(SQL counting the phrase's occurrences in the column `{c}` of `d`, its pattern %(p)s),
    each occurrence a run of whole tokens of the stream (tokens are spaced by one space).

    A regular expression costs the server about 170 us a note, most of a long phrase's
    count: so it is the cheapest exact form that is asked. Occurrences that cannot overlap
    are counted one after the other, from the end of the last one (a lookbehind, 3x
    cheaper than testing every position); with whole-token characters at both ends, they
    are plain substrings, counted by what `replace` removes (as cheap as reading the text)."""
    if _overlaps(phrase):
        # At every space that starts an occurrence, overlapping ones included.
        return "regexp_count(' ' || d.{c} || ' ', %(p)s)", f" (?={_escaped(phrase)} )"
    if _ALONE.fullmatch(phrase[0]) and _ALONE.fullmatch(phrase[-1]):
        counted = "(octet_length(d.{c}) - octet_length(replace(d.{c}, %(p)s, '')))"
        return f"{counted} / octet_length(%(p)s)", " ".join(phrase)
    return "regexp_count(' ' || d.{c} || ' ', %(p)s)", f"(?<= ){_escaped(phrase)}(?= )"


def _count_statement(
    phrase: Phrase,
    terms: Mapping[str, tuple[int, int]],
    postings: Mapping[int, Postings],
    lx: Lexicon,
    word_terms: WordTerms,
) -> tuple[str, dict[str, Any]] | None:
    """The statement counting a phrase in the token streams of the notes holding all of
    its anchors (None: no note holds them all, so none holds the phrase)."""
    import numpy as np

    ids = [terms[a][0] for a in _anchors(phrase, word_terms)]
    docs = postings[ids[0]].docs
    for term_id in ids[1:]:
        docs = np.intersect1d(docs, postings[term_id].docs, assume_unique=True)
    if not len(docs):
        return None
    counter, pattern = _counter(phrase)
    counts = ", ".join(counter.format(c=c) for c in lx.columns)
    sql = f"SELECT d.{lx.doc}, d.len, {counts} FROM {lx.docs} d WHERE d.{lx.doc} = ANY(%(docs)s)"
    return sql, {"p": pattern, "docs": docs.tolist()}


def _counted(rows: Sequence[Sequence[Any]], columns: Columns, width: int) -> Postings:
    """A phrase's postings from its rows counted in the streams (note, length, count per
    column): counts outside `columns` zeroed, notes left without any left out."""
    import numpy as np

    table = np.array(rows, dtype=np.int64).reshape(len(rows), width + 2)
    counts = table[:, 2:]
    if columns is not None:
        counts[:, [i for i in range(width) if i not in columns]] = 0
    held = counts.any(axis=1)
    return Postings(table[held, 0], table[held, 1], counts[held])


def _count_phrases(
    conn: Connection,
    phrases: Sequence[Phrase],
    columns: Columns,
    terms: Mapping[str, tuple[int, int]],
    lx: Lexicon,
    cache: ReadCache | None,
    word_terms: WordTerms,
) -> dict[Phrase, Postings]:
    """Each phrase counted in the token streams of the notes holding all of its anchors:
    those not in the cache in two round trips (the anchors' postings, then a pipeline of
    one statement each)."""
    out: dict[Phrase, Postings] = {}
    wanted: list[Phrase] = []
    for phrase in dict.fromkeys(phrases):
        kept = cache.get(("counted", lx.docs, columns, phrase)) if cache is not None else None
        # Counted for other columns (the name channel asks for titles), the same rows.
        rows = cache.get(("in streams", lx.docs, phrase)) if cache is not None else None
        if kept is not None:
            out[phrase] = kept
        elif rows is not None:
            out[phrase] = _kept(cache, lx, columns, phrase, rows)
        elif all(a in terms for a in _anchors(phrase, word_terms)):
            wanted.append(phrase)
        else:  # a note holding it would hold a term no note holds
            out[phrase] = _counted([], columns, lx.width)
    anchors = [terms[a][0] for phrase in wanted for a in _anchors(phrase, word_terms)]
    postings = term_postings(conn, lx, anchors, cache) if anchors else {}
    pending: dict[Phrase, tuple[str, dict[str, Any]]] = {}
    for phrase in wanted:
        statement = _count_statement(phrase, terms, postings, lx, word_terms)
        if statement is None:
            out[phrase] = _counted([], columns, lx.width)
        else:
            pending[phrase] = statement
    if pending:
        with conn.pipeline():
            cursors = {
                phrase: conn.execute(sql, params) for phrase, (sql, params) in pending.items()
            }
        for phrase, cur in cursors.items():
            rows = cur.fetchall()
            if cache is not None:
                # Rows of Python integers: a tuple and its numbers each.
                size = len(rows) * (56 + 36 * (lx.width + 2))
                cache.put(("in streams", lx.docs, phrase), rows, size=size)
            out[phrase] = _kept(cache, lx, columns, phrase, rows)
    return out


def _kept(
    cache: ReadCache | None,
    lx: Lexicon,
    columns: Columns,
    phrase: Phrase,
    rows: Sequence[Sequence[Any]],
) -> Postings:
    """The phrase's counts in these columns, from its rows (note, length, count per
    column), kept in the cache."""
    found = _counted(rows, columns, lx.width)
    if cache is not None:
        cache.put(("counted", lx.docs, columns, phrase), found, size=found.nbytes)
    return found


@dataclass
class Resolved:
    """The query with every phrase resolved to a term id or to its counted notes."""

    lx: Lexicon
    notes: int
    avgdl: float
    weights: tuple[float, ...]
    columns: Columns
    direct: dict[int, tuple[int, float, bool]]  # phrase index -> (term id, idf, generating)
    counted: dict[int, tuple[Postings, float, bool]]  # phrase index -> (notes, idf, generating)
    every: tuple[int, float] | None  # (phrase index, idf) of the every-note token
    excluded_ids: list[int]  # term ids of excluded phrases
    excluded_notes: set[int]  # notes holding an excluded phrase counted in the streams
    count: int  # phrases that score

    @property
    def empty(self) -> bool:
        return not any(gen for _t, _i, gen in self.direct.values()) and not any(
            gen and c.size for c, _i, gen in self.counted.values()
        )


_ABSENT = (0, 0)  # a term no note holds, as the cache keeps it


def recorded_words(conn: Connection) -> tuple[bool, WordTerms]:
    """(whether the index records dictionary words, the words it holds as terms: none
    unless the installed dictionary is the one it records, pg_schema.WORDS_META)."""
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (WORDS_META,)).fetchone()
    return row is not None, words_for(None if row is None else str(row[0]))


def _word_terms(conn: Connection, cache: ReadCache | None) -> WordTerms:
    """The words the index holds as terms: read once per generation."""
    kept = cache.get(("word terms",)) if cache is not None else None
    if kept is None:
        kept = recorded_words(conn)[1]
        if cache is not None:
            cache.put(("word terms",), kept)
    assert isinstance(kept, WordTerms)
    return kept


def indexed_size(conn: Connection, lx: Lexicon, cache: ReadCache | None) -> tuple[int, int]:
    """(documents, tokens) in the index: once per generation."""
    size = cache.get(_size_key(lx)) if cache is not None else None
    if size is None:
        size = _size(conn.execute(_size_sql(lx)).fetchone())
        if cache is not None:
            cache.put(_size_key(lx), size)
    return int(size[0]), int(size[1])


def _size_key(lx: Lexicon) -> tuple[str, str]:
    return ("size", lx.stats)


def _size_sql(lx: Lexicon) -> str:
    return f"SELECT docs, tokens FROM {lx.stats}"


def _size(row: Sequence[Any] | None) -> tuple[int, int]:
    return (int(row[0]), int(row[1])) if row else (0, 0)


def _statistics(
    conn: Connection, wanted: Sequence[str], columns: Columns, lx: Lexicon, cache: ReadCache | None
) -> tuple[tuple[int, int], dict[str, tuple[int, int]]]:
    """((documents, tokens) in the index, {term: (id, documents holding it)}) for the
    terms no note holds left out; what the cache lacks read in one round trip."""
    size = cache.get(_size_key(lx)) if cache is not None else None
    terms: dict[str, tuple[int, int]] = {}
    missing: list[str] = []
    for term in dict.fromkeys(wanted):
        kept = cache.get(("term", lx.terms, columns, term)) if cache is not None else None
        if kept is None:
            missing.append(term)
        elif kept != _ABSENT:
            terms[term] = kept
    if size is not None and not missing:
        return size, terms
    lookup = f"SELECT term, id, df FROM {lx.terms} WHERE term = ANY(%s)"
    with conn.pipeline():
        sized = conn.execute(_size_sql(lx)) if size is None else None
        found = conn.execute(lookup, (missing,)) if missing else None
    if sized is not None:
        size = _size(sized.fetchone())
    read = {str(term): (int(tid), int(df)) for term, tid, df in (found or ())}
    if columns is not None and read:
        # The notes holding the term in those columns: FTS5's IDF under a column filter.
        postings = term_postings(conn, lx, [tid for tid, _df in read.values()], cache)
        read = {t: (tid, int(postings[tid].holding(columns).sum())) for t, (tid, _) in read.items()}
    terms.update(read)
    if cache is not None:
        cache.put(_size_key(lx), size)
        for term in missing:
            cache.put(("term", lx.terms, columns, term), read.get(term, _ABSENT))
    assert size is not None
    return size, terms


def resolve(
    conn: Connection,
    query: LexicalQuery,
    weights: Sequence[float],
    lx: Lexicon,
    cache: ReadCache | None = None,
) -> Resolved:
    phrases = query.phrases()
    word_terms = _word_terms(conn, cache)
    wanted: list[str] = []
    for phrase in (*phrases, *query.excluded):
        key = _direct(phrase, word_terms)
        wanted += [key] if key is not None else _anchors(phrase, word_terms)
    (notes, tokens), terms = _statistics(conn, wanted, query.columns, lx, cache)
    resolved = Resolved(
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
    long_phrases = [p for p in (*phrases, *query.excluded) if _direct(p, word_terms) is None]
    counted = _count_phrases(conn, long_phrases, query.columns, terms, lx, cache, word_terms)
    generating = len(query.generating)
    for index, phrase in enumerate(phrases):
        is_generating = index < generating
        key = _direct(phrase, word_terms)
        if query.every_note is not None and phrase == (query.every_note,) and not is_generating:
            holding = terms.get(query.every_note, (0, notes))[1]
            resolved.every = (index, idf(notes, holding))
        elif key is not None:
            if key in terms and terms[key][1] > 0:
                tid, holding = terms[key]
                resolved.direct[index] = (tid, idf(notes, holding), is_generating)
        elif counted[phrase].size:
            found = counted[phrase]
            resolved.counted[index] = (found, idf(notes, found.size), is_generating)
    for phrase in query.excluded:
        key = _direct(phrase, word_terms)
        if key is not None:
            if key in terms:
                resolved.excluded_ids.append(terms[key][0])
        else:
            resolved.excluded_notes |= set(counted[phrase].docs.tolist())
    return resolved
