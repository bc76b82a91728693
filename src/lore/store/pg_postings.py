"""The full-text index's writes on PostgreSQL: a note's token streams (in LEX_COLUMNS order,
as the sync gives them: nothing here tokenizes) become postings rows, its terms' counts per
column and its length, and the statistics BM25 reads (lore.store.pg_schema describes the
tables; lore.store.pg_lexical ranks from them).

Terms are the tokens, the bigrams of two adjacent one-character tokens (most Chinese
words) and the runs of three spelling a three-character word of jieba's dictionary
(lore.store.jieba_words), so such words are looked up as one term. Documents are written a batch
at a time (lore.store.pg_batch): their postings go through a temporary table by COPY, and
the statistics (document frequencies, documents and tokens) are changed set-wise, each row
once per batch (a common word's row updated once per note would be rewritten thousands of
times in one sync, each version behind the last). Syncs of one vault are serialised by its
advisory lock (lore.store.pg_base), so no two transactions change these rows at once.
A note's parts are written the same way to the PARTS tables (a part is a document there).

A large sync (a first index, a rebuild) defers its postings: each batch appends its postings,
terms as text, to a temporary load table by COPY and nothing else, and the terms, their
document frequencies and the postings go in together, before anything reads them or once
MAX_LOAD_CHARACTERS are loaded (`flush_loaded`), in one pass sorting them by term. Written
batch by batch, each batch's postings landed all over the primary key (a term's new
documents after its old ones, for every term): every batch rewrote most of its pages and
split them half full, and each term row was rewritten once per batch. Resolving each
batch's terms to ids as it came (a join with every term so far, and the postings written
twice) took the server as long as the rest of the first index's full-text writes together
(10k notes: 24 s of 58).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .jieba_words import NO_WORDS, WordTerms
from .pg_packs import (
    fits,
    hits_table,
    keep_unfit,
    packed_records,
    restore_unfit,
    split_packs,
    unfit_records,
    unfit_table,
    unpack_documents,
)
from .pg_schema import NOTES, PARTS, Lexicon

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[Any]

# Characters of documents (token streams) a large sync loads before it puts them in. The
# load tables take the server's disk in proportion, about 19 bytes a character (bench.scale's
# 20k notes: 94M characters, 1.7 GB), and the sort packing them nearly as much again.
# Loaded whole, a first index of a million notes would need ~87 GB and the sort's; it
# failed at 676k notes on a disk with 62 GB free. At this size a load is ~4 GB (~40k such
# notes). Each load leaves a term it holds one partly filled block at most, so a much
# smaller load would scatter postings (bench.scale's 100k notes in 3 loads: an index 11%
# larger than in one).
MAX_LOAD_CHARACTERS = 200_000_000


# -- the token stream → postings ------------------------------------------------------------


def is_pair_token(token: str) -> bool:
    """Tokens of one character (a CJK character, mostly) pair into bigram terms."""
    return len(token) == 1


def joined(tokens: Sequence[str]) -> str:
    """The term of adjacent one-character tokens (a bigram, or a dictionary word of three or
    four): no token holds a space, so none of them can be mistaken for a token or for
    another."""
    return " ".join(tokens)


def postings_text(
    doc_id: int,
    fields: Sequence[str],
    load: int | None = None,
    *,
    word_terms: WordTerms = NO_WORDS,
) -> tuple[int, str]:
    """(the note's length in tokens, its postings as rows of COPY's text format: term,
    the load's batch if given, the document, its length and the term's count in each
    column) for the note's token streams in the lexicon's column order. Terms are its
    tokens, its bigrams of adjacent one-character tokens, and its runs of three or four
    spelling one of the `word_terms` words (the index records which:
    lore.store.jieba_words). Built as text in one pass: a row tuple per posting for psycopg
    to format cost the sync's sending thread 40% more CPU (a 10k first index writes 14M
    postings)."""
    size = 0
    columns: list[Counter[str]] = []
    for stream in fields:
        tokens = stream.split()
        size += len(tokens)
        counts = Counter(tokens)
        counts.update(
            [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False) if len(a) == 1 == len(b)]
        )
        if word_terms.digest:
            # Three (four) tokens spelling a word of three (four) characters have one each,
            # so the term is the word's characters, spaced. Runs of four are looked up only
            # where their first three characters start a word: both passes take a fifth less time.
            threes, fours, starts = word_terms.threes, word_terms.fours, word_terms.four_starts
            runs = [a + b + c for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False)]
            counts.update([" ".join(run) for run in runs if run in threes])
            counts.update(
                [
                    " ".join(run + d)
                    for run, d in zip(runs, tokens[3:], strict=False)
                    if run in starts and run + d in fours
                ]
            )
        columns.append(counts)
    *heads, last = columns
    start = f"\t{doc_id}\t{size}\t" if load is None else f"\t{load}\t{doc_id}\t{size}\t"
    # Most terms are in the last column (the body) only.
    elsewhere: set[str] = set().union(*heads)
    rows = [
        f"{term}{start}{chr(9).join(str(c.get(term, 0)) for c in columns)}\n" for term in elsewhere
    ]
    only_last = start + "0\t" * len(heads)
    rows += [f"{term}{only_last}{n}\n" for term, n in last.items() if term not in elsewhere]
    text = "".join(rows)
    # Tokens hold no whitespace (split), so a backslash is all COPY needs escaped.
    return size, text.replace("\\", "\\\\") if "\\" in text else text


# -- writes (inside the caller's transaction) ----------------------------------------------


def _stage(lx: Lexicon) -> tuple[str, str]:
    """The session's temporary tables a batch passes through: its postings with their
    terms as text, and its terms with their document counts."""
    return f"lore_stage_{lx.postings}", f"lore_stage_{lx.terms}"


def _load(lx: Lexicon) -> str:
    """The session's temporary table of deferred postings (term ids resolved)."""
    return f"lore_load_{lx.postings}"


def stage_tables() -> str:
    """The statement making the temporary tables the writes here and in lore.store.pg_notes
    pass through, if this session has not made them yet: its own, never seen by a reader,
    gone when it ends (or when the transaction that made them rolls back)."""
    out = []
    for lx in (NOTES, PARTS):
        postings, terms = _stage(lx)
        tf = ", ".join(f"tf_{c} integer" for c in lx.columns)
        df = ", ".join(f"df_{c} integer" for c in lx.columns)
        out += [
            f'CREATE TEMP TABLE IF NOT EXISTS {postings} (term text COLLATE "C", doc bigint,'
            f" len integer, {tf}, term_id integer)",
            f'CREATE TEMP TABLE IF NOT EXISTS {terms} (term text COLLATE "C", df integer, {df})',
            f'CREATE TEMP TABLE IF NOT EXISTS {_load(lx)} (term text COLLATE "C", batch integer,'
            f" doc bigint, len integer, {tf})",
            hits_table(lx),
            unfit_table(lx),
        ]
    out += [
        f"CREATE TEMP TABLE IF NOT EXISTS {EMPTIED} (id integer)",
        f'CREATE TEMP TABLE IF NOT EXISTS {DF_STAGE} (term text COLLATE "C", df integer)',
    ]
    return "; ".join(out)


EMPTIED = "lore_stage_emptied"  # terms a deletion left without documents
DF_STAGE = "lore_stage_df"  # term_df changes (lore.store.pg_notes.apply_df)


def id_array(values: Sequence[int]) -> str:
    """Integer ids as an array literal (statements of several parts take no parameters)."""
    return "ARRAY[" + ",".join(str(int(v)) for v in values) + "]::bigint[]"


def write_documents(
    conn: Connection,
    documents: Sequence[tuple[int, Sequence[str]]],
    lx: Lexicon = NOTES,
    *,
    load: int | None = None,
    word_terms: WordTerms = NO_WORDS,
) -> None:
    """Index these documents ((id, token streams in the lexicon's column order)); none of
    them may be indexed already (delete_documents first when one changed). Their terms'
    document frequencies and the index's statistics are updated set-wise: each term row
    once per batch, whatever the number of documents holding it. Three round trips: two
    COPYs and one statement of several parts. The stage tables must exist. With `load`
    (the batch's number in the sync, ascending), the postings wait in the load table for
    `flush_loaded`, which must run before anything reads them. `word_terms`: the words
    the index holds as terms of three or four one-character tokens (postings_text)."""
    if not documents:
        return
    postings, terms = _stage(lx)
    tokens = 0
    target, columns = (
        (postings, _stage_columns(lx))
        if load is None
        else (_load(lx), f"term, batch, doc, len, {lx.tf}")
    )
    with conn.cursor() as cur:
        with cur.copy(f"COPY {target} ({columns}) FROM STDIN") as copy:
            lengths = []
            for doc_id, fields in documents:
                size, text = postings_text(doc_id, fields, load, word_terms=word_terms)
                lengths.append(size)
                tokens += size
                copy.write(text)
        names = ", ".join(lx.columns)
        with cur.copy(f"COPY {lx.docs} ({lx.doc}, len, {names}) FROM STDIN") as copy:
            for (doc_id, fields), size in zip(documents, lengths, strict=True):
                copy.write_row((doc_id, size, *fields))
    stats = f"UPDATE {lx.stats} SET docs = docs + {len(documents)}, tokens = tokens + {tokens}"
    if load is not None:
        conn.execute(stats)
        return
    conn.execute(
        f"ANALYZE {postings};"
        f" INSERT INTO {terms} SELECT term, count(*), {_df_counts(lx)} FROM {postings}"
        " GROUP BY term;"
        f" UPDATE {lx.terms} t SET df = t.df + a.df, {_df_added(lx)} FROM {terms} a"
        " WHERE t.term = a.term;"
        f" INSERT INTO {lx.terms} (term, df, {lx.df}) SELECT a.term, a.df, {lx.df}"
        f" FROM {terms} a WHERE NOT EXISTS (SELECT 1 FROM {lx.terms} t WHERE t.term = a.term)"
        " ORDER BY a.term;"
        # In index order: each page of the primary key is written once per batch.
        f" INSERT INTO {lx.postings} (term_id, {lx.doc}, len, {lx.tf})"
        f" SELECT t.id, s.doc, s.len, {_stage_tf(lx)}"
        f" FROM {postings} s JOIN {lx.terms} t ON t.term = s.term ORDER BY t.id, s.doc;"
        f" {stats}; TRUNCATE {postings}, {terms}"
    )


def _stage_columns(lx: Lexicon) -> str:
    """The stage table's columns a COPY fills (a term's id is resolved in the database)."""
    return f"term, doc, len, {lx.tf}"


def _stage_tf(lx: Lexicon, alias: str = "s") -> str:
    return ", ".join(f"{alias}.tf_{c}" for c in lx.columns)


def _df_counts(lx: Lexicon, only: str = "") -> str:
    """Per column, the documents of a group holding the term there (named df_<column>),
    of the rows `only` (a condition) allows."""
    also = f"{only} AND " if only else ""
    return ", ".join(f"count(*) FILTER (WHERE {also}tf_{c} > 0) AS df_{c}" for c in lx.columns)


def _df_added(lx: Lexicon) -> str:
    """The terms' per-column document counts plus the group `a`'s."""
    return ", ".join(f"df_{c} = t.df_{c} + a.df_{c}" for c in lx.columns)


def flush_loaded(lexicons: Sequence[Lexicon]) -> str:
    """The statement putting the deferred postings of these lexicons in (write_documents
    with `load`), one pass over each load: their terms' rows written once (the new ones
    given their ids in the order batch-by-batch writes would give them: by the batch a
    term first came in, then alphabetically) and the postings packed in blocks
    (lore.store.pg_packs). The rows earlier small syncs wrote are packed with them, not
    counted again: rows never pile up past one large sync."""
    out = []
    for lx in lexicons:
        packed = (  # every term of the load with its id, old or new
            "(SELECT i.id AS term_id, a.n, a.data, a.unfit FROM (SELECT id, term FROM old"
            " UNION ALL SELECT id, term FROM new) i JOIN agg a ON a.term = i.term)"
        )
        out.append(
            f"WITH moved AS (DELETE FROM {lx.postings} RETURNING term_id, {lx.doc}, len, {lx.tf}),"
            f" loaded AS (SELECT term, batch, doc, len, {lx.tf} FROM {_load(lx)} UNION ALL"
            f" SELECT t.term, NULL, m.{lx.doc}, m.len, {_stage_tf(lx, 'm')} FROM moved m"
            f" JOIN {lx.terms} t ON t.id = m.term_id),"
            # A term's postings are one value until they are cut into blocks. PostgreSQL
            # takes values up to 1 GB, and the every-note token is in every document: 12
            # bytes a note and 9 a part, so a large sync of up to ~89 million notes or
            # ~119 million parts.
            f" agg AS MATERIALIZED (SELECT s.term, min(s.batch) AS batch, count(s.batch) AS df,"
            f" {_df_counts(lx, 'batch IS NOT NULL')},"
            f" count(*) FILTER (WHERE {fits(lx, 's')}) AS n, {packed_records(lx, 's')} AS data,"
            f" {unfit_records(lx, 's')} AS unfit FROM loaded s GROUP BY s.term),"
            f" old AS (UPDATE {lx.terms} t SET df = t.df + a.df, {_df_added(lx)} FROM agg a"
            " WHERE t.term = a.term RETURNING t.id, t.term),"
            f" new AS (INSERT INTO {lx.terms} (term, df, {lx.df}) SELECT a.term, a.df, {lx.df}"
            f" FROM agg a WHERE NOT EXISTS (SELECT 1 FROM {lx.terms} t WHERE t.term = a.term)"
            " ORDER BY a.batch, a.term RETURNING id, term),"
            f" unfit AS ({keep_unfit(lx, packed)})"
            f" {split_packs(lx, packed)}; {restore_unfit(lx)}; TRUNCATE {_load(lx)}"
        )
    return "; ".join(out)


def delete_documents(
    conn: Connection,
    doc_ids: Sequence[int],
    lx: Lexicon = NOTES,
    *,
    word_terms: WordTerms = NO_WORDS,
) -> None:
    """Take these documents out of the index (ids not indexed are ignored), with their
    share of the document frequencies and statistics; a term no document holds any more
    is dropped. A document's postings are found from its token streams, through the
    primary key (no index by document: it would cost every insert a third more), in rows
    or in blocks (lore.store.pg_packs). Four round trips: the streams, a COPY of their
    postings, their terms' ids, and one statement of several parts. The stage tables
    must exist; `word_terms` must be what the documents were written with."""
    if not doc_ids:
        return
    postings, _terms = _stage(lx)
    rows = conn.execute(
        f"SELECT {lx.doc}, {', '.join(lx.columns)} FROM {lx.docs} WHERE {lx.doc} = ANY(%s)",
        ([int(i) for i in doc_ids],),
    ).fetchall()
    if not rows:
        return
    with (
        conn.cursor() as cur,
        cur.copy(f"COPY {postings} ({_stage_columns(lx)}) FROM STDIN") as copy,
    ):
        for doc_id, *fields in rows:
            copy.write(postings_text(doc_id, fields, word_terms=word_terms)[1])
    # Each term resolved to its id once, for the blocks, the rows and the counts below;
    # analysed before and after, the few postings of a few notes are looked up by key,
    # not joined with a pass over every term or block.
    conn.execute(
        f"ANALYZE {postings};"
        f" UPDATE {postings} s SET term_id = t.id FROM {lx.terms} t WHERE t.term = s.term;"
        f" ANALYZE {postings}"
    )
    taken = ", ".join(f"df_{c} = t.df_{c} - g.df_{c}" for c in lx.columns)
    conn.execute(
        f"{unpack_documents(lx, postings)};"
        f" DELETE FROM {lx.postings} p USING {postings} s"
        f" WHERE p.term_id = s.term_id AND p.{lx.doc} = s.doc;"
        f" WITH counted AS (SELECT term_id, count(*) AS df, {_df_counts(lx)}"
        f" FROM {postings} GROUP BY term_id),"
        f" changed AS (UPDATE {lx.terms} t SET df = t.df - g.df, {taken} FROM counted g"
        " WHERE t.id = g.term_id RETURNING t.id, t.df)"
        f" INSERT INTO {EMPTIED} SELECT id FROM changed WHERE df <= 0;"
        f" DELETE FROM {lx.terms} WHERE id IN (SELECT id FROM {EMPTIED});"
        f" WITH d AS (DELETE FROM {lx.docs} WHERE {lx.doc} = ANY({id_array([r[0] for r in rows])})"
        f" RETURNING len) UPDATE {lx.stats} SET docs = docs - (SELECT count(*) FROM d),"
        " tokens = tokens - (SELECT coalesce(sum(len), 0) FROM d);"
        f" TRUNCATE {postings}, {EMPTIED}"
    )
