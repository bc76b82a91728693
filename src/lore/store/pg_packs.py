"""A term's postings packed in bytes (issue 15): the form every reader of a PostgreSQL
full-text index takes them in, and the form a large sync stores them in.

A large sync (lore.store.pg_postings.flush_loaded) stores each term's new postings in
blocks of up to PACK_SIZE records in document order (`packs` tables: term, first and last
document, count, the records; lore.store.pg_records has the record: 12 bytes a note's
posting, 9 a part's, against ~130 as a row with its key in an index). A small sync
writes rows, and a posting a block record cannot hold (a count over 255, an id over
2^31 - 1) stays a row; a reader takes a term's blocks and rows (packed by the server as
it reads them) alike and numpy decodes them without a Python loop.

Every posting is in exactly one place, so counts stay exact and nothing is masked when
reading: deleting a document (a changed or removed note) cuts its record out of the
blocks holding it (`unpack_documents`), one per term of the note, on the server. The
client used to read those blocks and send them back: ~13,000 blocks (24 MB) each way for
an edit of 10 notes of a 10k vault.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, NamedTuple

from . import pg_records
from .pg_cache import ReadCache
from .pg_schema import Lexicon

if TYPE_CHECKING:
    import numpy as np
    import psycopg
    from numpy.typing import NDArray

    Connection = psycopg.Connection[Any]
    Ints = NDArray[np.integer[Any]]  # integers of any width

# Postings in a block: 1.5 KB of a note's, stored in place (no TOAST table to visit). A
# changed note's old postings are cut out of a block each: the first edit of 10 notes
# after a 10k first index took 7.1 s with blocks of 1,024, 3.9 s with blocks of 128 (3.8 s
# as rows), for 2% more space.
PACK_SIZE = 128


class Postings(NamedTuple):
    """A term's postings: documents, their lengths and per-column counts, row by row, as
    compact as they go (they are kept between searches: lore.store.pg_cache): documents
    and lengths in 4 bytes when they fit, counts in the fewest bytes their largest needs,
    so 12 bytes a note's posting where 8-byte numbers took 48. Integers all: a length
    becomes a double, exactly, where BM25 takes it (lore.store.pg_bm25)."""

    docs: Ints
    lengths: Ints
    counts: Ints  # (documents, columns)

    @classmethod
    def decode(cls, blocks: bytes, rows: bytes, width: int) -> Postings:
        """The postings of a term's block records and row records (lore.store.pg_records)."""
        import numpy as np

        parts = [
            np.frombuffer(blocks, dtype=pg_records.block_dtype(width)),
            np.frombuffer(rows, dtype=pg_records.row_dtype(width)),
        ]
        fields = ("doc", "len", "tf")
        if len(parts[1]):
            docs, lengths, tf = (np.concatenate([p[f] for p in parts]) for f in fields)
        else:  # the usual case: the fields as they are, copied once by _narrow
            docs, lengths, tf = (parts[0][f] for f in fields)
        counts = tf.reshape(len(docs), width)
        return cls(_narrow(docs), _narrow(lengths), _narrow(counts, unsigned=True))

    @classmethod
    def of_block(cls, data: bytes, block_records: bool, width: int) -> Postings:
        """The postings of one block, of block records or (an older lore's) row records."""
        return cls.decode(data, b"", width) if block_records else cls.decode(b"", data, width)

    @property
    def nbytes(self) -> int:
        """What these postings take in memory."""
        return int(self.docs.nbytes + self.lengths.nbytes + self.counts.nbytes)

    @property
    def size(self) -> int:
        return len(self.docs)

    def holding(self, columns: tuple[int, ...] | None) -> NDArray[np.bool_]:
        """The rows with an occurrence in these columns (None: in any)."""
        import numpy as np

        if columns is None:
            return np.ones(self.size, dtype=bool)
        return np.asarray((self.counts[:, list(columns)] > 0).any(axis=1), dtype=bool)


def _narrow(values: Ints, *, unsigned: bool = False) -> Ints:
    """These integers (none negative if `unsigned`) in the narrowest type holding them."""
    import numpy as np

    if not values.size:
        return values.astype(np.int32)
    low, top = int(values.min()), int(values.max())
    if unsigned and top < 2**8:
        return values.astype(np.uint8)
    if unsigned and top < 2**16:
        return values.astype(np.uint16)
    return values.astype(np.int32 if -(2**31) <= low and top < 2**31 else np.int64)


def _read_sql(lx: Lexicon) -> str:
    """Each term's blocks, and its rows packed into one value of row records (a term may
    have both), the second column saying which hold row records (the rows, and blocks an
    older lore packed)."""
    rows = pg_records.row_sql("p", lx.doc, lx.columns)
    return (
        f"SELECT k.term_id, NOT ({pg_records.narrow_sql('k', lx.width)}), k.data"
        f" FROM {lx.packs} k WHERE k.term_id = ANY(%(t)s)"
        f" UNION ALL SELECT p.term_id, true, string_agg({rows}, ''::bytea)"
        f" FROM {lx.postings} p WHERE p.term_id = ANY(%(t)s) GROUP BY p.term_id"
    )


def term_postings(
    conn: Connection, lx: Lexicon, term_ids: Collection[int], cache: ReadCache | None
) -> dict[int, Postings]:
    """The postings of these terms (in no particular order): from the read snapshot's
    cache, the rest in one statement."""
    out: dict[int, Postings] = {}
    missing: list[int] = []
    for term_id in dict.fromkeys(term_ids):
        kept = cache.get(("postings", lx.postings, term_id)) if cache is not None else None
        if kept is None:
            missing.append(term_id)
        else:
            out[term_id] = kept
    if not missing:
        return out
    for term_id, (blocks, rows) in read_packed(conn, lx, missing).items():
        found = out[term_id] = Postings.decode(blocks, rows, lx.width)
        if cache is not None:
            cache.put(("postings", lx.postings, term_id), found, size=found.nbytes)
    return out


def read_packed(
    conn: Connection, lx: Lexicon, term_ids: Collection[int]
) -> dict[int, tuple[bytes, bytes]]:
    """Each of these terms' postings as the server hands them over, in one statement:
    (its block records end to end, its row records: `Postings.decode` takes both)."""
    found: dict[int, tuple[list[bytes], list[bytes]]] = {t: ([], []) for t in term_ids}
    # In binary: as text, each byte comes as two hex digits the client parses back, which
    # made reading postings 2.5x slower (3.9 MB of blocks: 21 ms against 8.7 ms).
    for term_id, as_rows, packed in conn.execute(_read_sql(lx), {"t": list(found)}, binary=True):
        found[int(term_id)][1 if as_rows else 0].append(bytes(packed))
    return {t: (b"".join(blocks), b"".join(rows)) for t, (blocks, rows) in found.items()}


# -- writes (inside the caller's transaction) ----------------------------------------------


def fits(lx: Lexicon, alias: str) -> str:
    """The condition: a postings row of `alias` (doc, len, tf_…) fits a block record."""
    return pg_records.fits_sql(alias, "doc", lx.columns)


def packed_records(lx: Lexicon, alias: str) -> str:
    """The aggregate packing the rows of a group of postings (of `alias`: doc, len, tf_…)
    that fit a block record into one value, their records in document order."""
    record = pg_records.block_sql(alias, "doc", lx.columns)
    return f"string_agg({record}, ''::bytea ORDER BY {alias}.doc) FILTER (WHERE {fits(lx, alias)})"


def unfit_records(lx: Lexicon, alias: str) -> str:
    """The aggregate packing the rows of a group that do not fit a block record into one
    value of row records (NULL when all fit): they stay rows (`restore_unfit`)."""
    record = pg_records.row_sql(alias, "doc", lx.columns)
    return f"string_agg({record}, ''::bytea) FILTER (WHERE NOT ({fits(lx, alias)}))"


def _unfit(lx: Lexicon) -> str:
    """The session's temporary table of a large sync's postings that stay rows: a term's
    id and its row records."""
    return f"lore_unfit_{lx.postings}"


def unfit_table(lx: Lexicon) -> str:
    """The statement making that table, if this session has not made it yet."""
    return f"CREATE TEMP TABLE IF NOT EXISTS {_unfit(lx)} (term_id integer, data bytea)"


def keep_unfit(lx: Lexicon, source: str) -> str:
    """A data-modifying CTE's body keeping the unfit postings of `source` (rows of term_id,
    unfit: `unfit_records`) for `restore_unfit`."""
    return f"INSERT INTO {_unfit(lx)} SELECT term_id, unfit FROM {source} WHERE unfit IS NOT NULL"


def restore_unfit(lx: Lexicon) -> str:
    """The statement writing the postings `keep_unfit` kept as rows of the postings table."""
    rows = pg_records.rows_from_records_sql(_unfit(lx), lx.postings, lx.doc, lx.columns)
    return f"{rows}; TRUNCATE {_unfit(lx)}"


def split_packs(lx: Lexicon, source: str) -> str:
    """The statement storing each term's packed postings (rows of `source`: term_id, n,
    data, from `packed_records`) as blocks of up to PACK_SIZE records, in document
    order: one sort of the postings by term and document makes both the blocks and the
    terms' counts (lore.store.pg_postings.flush_loaded). A term whose postings all
    stay rows (n = 0) has no block."""
    w = record_width(lx)
    records = PACK_SIZE * w
    return (
        f"INSERT INTO {lx.packs} (term_id, first_doc, last_doc, n, data)"
        f" SELECT a.term_id, {_doc_at('c.data', '0')}, {_doc_at('c.data', f'length(c.data) - {w}')}"
        f", length(c.data) / {w}, c.data FROM {source} a CROSS JOIN LATERAL"
        f" (SELECT substring(a.data from k * {records} + 1 for {records}) AS data"
        f" FROM generate_series(0, ((a.n - 1) / {PACK_SIZE})::integer) k) c WHERE a.n > 0"
    )


def _hits(lx: Lexicon) -> str:
    """The session's temporary table of blocks a deletion changes: each block's key, the
    number of dead documents its range holds, their ids, and where the first of them sits
    in the block's bytes when it is the only one."""
    return f"lore_stage_{lx.packs}"


def hits_table(lx: Lexicon) -> str:
    """The statement making that table, if this session has not made it yet."""
    return (
        f"CREATE TEMP TABLE IF NOT EXISTS {_hits(lx)} (term_id integer, first_doc bigint,"
        " c integer, docs bigint[], at integer)"
    )


def _doc_at(data: str, offset: str) -> str:
    """The document of the block record at this byte offset (from 0) of a block's bytes."""
    return pg_records.doc_at_sql(data, offset)


def record_width(lx: Lexicon) -> int:
    """Bytes of one block record of the lexicon."""
    return pg_records.block_width(lx.width)


def unpack_documents(lx: Lexicon, gone: str) -> str:
    """The statement taking these documents out of the blocks holding them: `gone` is an
    analysed table of (term_id, doc) pairs naming every posting of theirs. The server
    rewrites each block in place, in the record it holds (lore.store.pg_records), nothing
    is sent to the client: a block whose range holds one dead document has its record cut
    out where `position` finds its id at a record's start (or is dropped with its only
    record); any other (several dead documents, or the id's bytes first met inside another
    record's fields) is rebuilt record by record. A block that held none of them is left
    as it was. Ranges may overlap (a large sync packs edited notes' rows after older
    blocks), so every block whose range holds a dead document is visited."""
    hits = _hits(lx)
    narrow = pg_records.narrow_sql("k", lx.width)
    w = "(length(k.data) / k.n)"  # the block's record, in bytes
    key = "k.term_id = h.term_id AND k.first_doc = h.first_doc"
    cut = f"overlay(k.data placing ''::bytea from h.at + 1 for {w})"
    single = f"h.c = 1 AND h.at >= 0 AND h.at % {w} = 0"
    record = f"substring(k.data from i * {w} + 1 for {w})"
    doc = pg_records.either_doc_at_sql("k.data", f"i * {w}", narrow)
    rebuilt = (
        f"SELECT k.term_id, k.first_doc, k.n AS was, {narrow} AS narrow, {w} AS w, s.n, s.data"
        f" FROM {hits} h JOIN {lx.packs} k ON {key}, LATERAL (SELECT count(*)::integer AS n,"
        f" string_agg({record}, ''::bytea ORDER BY i) AS data FROM generate_series(0, k.n - 1) i"
        f" WHERE {doc} <> ALL(h.docs)) s"
        f" WHERE NOT ({single}) AND NOT (h.c = 1 AND h.at < 0)"
    )
    first = pg_records.either_doc_bytes_sql("h.docs[1]", narrow)
    key_r = "k.term_id = r.term_id AND k.first_doc = r.first_doc"
    return (
        # Probed by key, each posting, from the key's index alone (it holds each block's
        # last document: m008_pack_ranges; OFFSET 0 keeps the planner from joining over
        # every block); where a block holds one dead document, its offset is found as it goes.
        f"INSERT INTO {hits} SELECT h.term_id, h.first_doc, h.c, h.docs, CASE WHEN h.c = 1"
        f" THEN (SELECT position({first} in k.data) - 1 FROM {lx.packs} k WHERE {key}) END"
        " FROM (SELECT b.term_id, b.first_doc, count(*)::integer AS c,"
        f" array_agg(g.doc) AS docs FROM {gone} g CROSS JOIN LATERAL"
        f" (SELECT term_id, first_doc FROM {lx.packs} b WHERE b.term_id = g.term_id"
        " AND b.first_doc <= g.doc AND b.last_doc >= g.doc OFFSET 0) b GROUP BY 1, 2) h;"
        # Analysed, the few blocks are looked up by key, not joined over every block.
        f" ANALYZE {hits};"
        f" DELETE FROM {lx.packs} k USING {hits} h WHERE {key} AND {single} AND k.n = 1;"
        f" UPDATE {lx.packs} k SET data = {cut}, n = k.n - 1,"
        f" {_bounds(cut, f'length({cut}) - {w}', narrow)}"
        f" FROM {hits} h WHERE {key} AND {single} AND k.n > 1;"
        f" WITH r AS ({rebuilt}), emptied AS (DELETE FROM {lx.packs} k USING r"
        f" WHERE {key_r} AND r.n = 0) UPDATE {lx.packs} k SET data = r.data, n = r.n,"
        f" {_bounds('r.data', 'length(r.data) - r.w', 'r.narrow')}"
        f" FROM r WHERE {key_r} AND r.n > 0 AND r.n < r.was;"
        f" TRUNCATE {hits}"
    )


def _bounds(data: str, last: str, narrow: str) -> str:
    """SET clauses giving a block its first and last documents from its new bytes (`last`:
    the offset of its last record; `narrow`: whether it holds block records)."""
    first_doc = pg_records.either_doc_at_sql(data, "0", narrow)
    last_doc = pg_records.either_doc_at_sql(data, last, narrow)
    return f"first_doc = {first_doc}, last_doc = {last_doc}"
