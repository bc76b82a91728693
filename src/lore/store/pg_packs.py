"""A term's postings packed in bytes (issue 15): the form every reader of a PostgreSQL
full-text index takes them in, and the form a large sync stores them in.

A posting is a record of `record_dtype`: the document (int8), its length (int4) and the
term's count in each column (int4), big-endian, as PostgreSQL's `int8send`/`int4send`
write them. A large sync (lore.store.pg_postings.flush_loaded) stores each term's new
postings in blocks of up to PACK_SIZE records in document order (`packs` tables: term,
first and last document, count, the records): about 28 bytes a note's posting and 16 a
part's, before PostgreSQL compresses them, against ~130 as a row with its key in an index. A
small sync writes rows, as before; a reader takes a term's blocks and rows alike and
numpy decodes them without a Python loop.

Every posting is in exactly one place, so counts stay exact and nothing is masked when
reading: deleting a document (a changed or removed note) cuts its record out of the
blocks holding it (`unpack_documents`), one per term of the note, on the server. The
client used to read those blocks and send them back: ~13,000 blocks (24 MB) each way for
an edit of 10 notes of a 10k vault.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, NamedTuple

from .pg_cache import ReadCache
from .pg_schema import Lexicon

if TYPE_CHECKING:
    import numpy as np
    import psycopg
    from numpy.typing import NDArray

    Connection = psycopg.Connection[Any]
    Ints = NDArray[np.integer[Any]]  # integers of any width

# Postings in a block: 3.5 KB of a note's, which PostgreSQL compresses in place (no TOAST
# table to visit). A changed note's old postings are cut out of a block each: the first
# edit of 10 notes after a 10k first index took 7.1 s with blocks of 1,024, 3.9 s with
# blocks of 128 (3.8 s as rows), for 2% more space.
PACK_SIZE = 128


def record_dtype(width: int) -> np.dtype[np.void]:
    """One posting as packed: the document (int8), its length (int4) and the term's count
    in each of the lexicon's `width` columns (int4), big-endian."""
    import numpy as np

    return np.dtype([("doc", ">i8"), ("len", ">i4"), ("tf", ">i4", (width,))])


def record_sql(lx: Lexicon, alias: str, doc: str | None = None) -> str:
    """The SQL expression packing a postings row (of `alias`, its document in the column
    `doc`, the lexicon's by default) into one record."""
    return " || ".join(
        [f"int8send({alias}.{doc or lx.doc}::int8)", f"int4send({alias}.len)"]
        + [f"int4send({alias}.tf_{c})" for c in lx.columns]
    )


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
    def decode(cls, packed: bytes, width: int) -> Postings:
        import numpy as np

        rows = np.frombuffer(packed, dtype=record_dtype(width))
        tf = rows["tf"].reshape(len(rows), width)
        return cls(_narrow(rows["doc"]), _narrow(rows["len"]), _narrow(tf, unsigned=True))

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
    """Each term's blocks, and its rows packed into one more (a term may have both)."""
    return (
        f"SELECT term_id, data FROM {lx.packs} WHERE term_id = ANY(%(t)s)"
        f" UNION ALL SELECT p.term_id, string_agg({record_sql(lx, 'p')}, ''::bytea)"
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
    parts: dict[int, list[bytes]] = {term_id: [] for term_id in missing}
    # In binary: as text, each byte comes as two hex digits the client parses back, which
    # made reading postings 2.5x slower (3.9 MB of blocks: 21 ms against 8.7 ms).
    for term_id, packed in conn.execute(_read_sql(lx), {"t": missing}, binary=True):
        parts[int(term_id)].append(bytes(packed))
    for term_id, chunks in parts.items():
        found = out[term_id] = Postings.decode(b"".join(chunks), lx.width)
        if cache is not None:
            cache.put(("postings", lx.postings, term_id), found, size=found.nbytes)
    return out


# -- writes (inside the caller's transaction) ----------------------------------------------


def packed_records(lx: Lexicon, alias: str) -> str:
    """The aggregate packing a group of postings rows (of `alias`: doc, len, tf_…) into
    one value, their records in document order."""
    return f"string_agg({record_sql(lx, alias, 'doc')}, ''::bytea ORDER BY {alias}.doc)"


def split_packs(lx: Lexicon, source: str) -> str:
    """The statement storing each term's packed postings (rows of `source`: term_id, n,
    data, from `packed_records`) as blocks of up to PACK_SIZE records, in document
    order: one sort of the postings by term and document makes both the blocks and the
    terms' counts (lore.store.pg_postings.flush_loaded)."""
    w = record_width(lx)
    records = PACK_SIZE * w
    return (
        f"INSERT INTO {lx.packs} (term_id, first_doc, last_doc, n, data)"
        f" SELECT a.term_id, {_doc_at('c.data', '0')}, {_doc_at('c.data', f'length(c.data) - {w}')}"
        f", length(c.data) / {w}, c.data FROM {source} a CROSS JOIN LATERAL"
        f" (SELECT substring(a.data from k * {records} + 1 for {records}) AS data"
        f" FROM generate_series(0, ((a.n - 1) / {PACK_SIZE})::integer) k) c"
    )


def _hits(lx: Lexicon) -> str:
    """The session's temporary table of blocks a deletion changes: each block's key, the
    number of dead documents its range holds, their ids as packed, and where the first
    of them sits in the block's bytes when it is the only one."""
    return f"lore_stage_{lx.packs}"


def hits_table(lx: Lexicon) -> str:
    """The statement making that table, if this session has not made it yet."""
    return (
        f"CREATE TEMP TABLE IF NOT EXISTS {_hits(lx)} (term_id integer, first_doc bigint,"
        " c integer, docs bytea[], at integer)"
    )


def _doc_at(data: str, offset: str) -> str:
    """The document of the record at this byte offset (from 0) of a block's bytes."""
    return f"('x' || encode(substring({data} from {offset} + 1 for 8), 'hex'))::bit(64)::bigint"


def _bounds(lx: Lexicon, data: str) -> str:
    """SET clauses giving a block its first and last documents from its new bytes."""
    last = f"length({data}) - {record_width(lx)}"
    return f"first_doc = {_doc_at(data, '0')}, last_doc = {_doc_at(data, last)}"


def record_width(lx: Lexicon) -> int:
    """Bytes of one record of the lexicon."""
    return record_dtype(lx.width).itemsize


def unpack_documents(lx: Lexicon, gone: str) -> str:
    """The statement taking these documents out of the blocks holding them: `gone` is an
    analysed table of (term_id, doc) pairs naming every posting of theirs. The server
    rewrites each block in place, nothing is sent to the client: a block whose range holds
    one dead document has its record cut out where `position` finds its id at a record's
    start (or is dropped with its only record); any other (several dead documents, or the
    id's bytes first met inside another record's fields) is rebuilt record by record.
    A block that held none of them is left as it was. Ranges may overlap (a large sync
    packs edited notes' rows after older blocks), so every block whose range holds a dead
    document is visited."""
    hits, w = _hits(lx), record_width(lx)
    key = "k.term_id = h.term_id AND k.first_doc = h.first_doc"
    cut = f"overlay(k.data placing ''::bytea from h.at + 1 for {w})"
    single = f"h.c = 1 AND h.at >= 0 AND h.at % {w} = 0"
    record = f"substring(k.data from i * {w} + 1 for {w})"
    rebuilt = (
        f"SELECT k.term_id, k.first_doc, k.n AS was, s.n, s.data FROM {hits} h"
        f" JOIN {lx.packs} k ON {key}, LATERAL (SELECT count(*)::integer AS n,"
        f" string_agg({record}, ''::bytea ORDER BY i) AS data FROM generate_series(0, k.n - 1) i"
        f" WHERE substring(k.data from i * {w} + 1 for 8) <> ALL(h.docs)) s"
        f" WHERE NOT ({single}) AND NOT (h.c = 1 AND h.at < 0)"
    )
    key_r = "k.term_id = r.term_id AND k.first_doc = r.first_doc"
    return (
        # Probed by key, each posting, from the key's index alone (it holds each block's
        # last document: m008_pack_ranges; OFFSET 0 keeps the planner from joining over
        # every block); where a block holds one dead document, its offset is found as it goes.
        f"INSERT INTO {hits} SELECT h.term_id, h.first_doc, h.c, h.docs, CASE WHEN h.c = 1"
        f" THEN (SELECT position(h.docs[1] in k.data) - 1 FROM {lx.packs} k WHERE {key}) END"
        " FROM (SELECT b.term_id, b.first_doc, count(*)::integer AS c,"
        f" array_agg(int8send(g.doc::int8)) AS docs FROM {gone} g CROSS JOIN LATERAL"
        f" (SELECT term_id, first_doc FROM {lx.packs} b WHERE b.term_id = g.term_id"
        " AND b.first_doc <= g.doc AND b.last_doc >= g.doc OFFSET 0) b GROUP BY 1, 2) h;"
        # Analysed, the few blocks are looked up by key, not joined over every block.
        f" ANALYZE {hits};"
        f" DELETE FROM {lx.packs} k USING {hits} h WHERE {key} AND {single} AND k.n = 1;"
        f" UPDATE {lx.packs} k SET data = {cut}, n = k.n - 1, {_bounds(lx, cut)}"
        f" FROM {hits} h WHERE {key} AND {single} AND k.n > 1;"
        f" WITH r AS ({rebuilt}), emptied AS (DELETE FROM {lx.packs} k USING r"
        f" WHERE {key_r} AND r.n = 0) UPDATE {lx.packs} k SET data = r.data, n = r.n,"
        f" {_bounds(lx, 'r.data')} FROM r WHERE {key_r} AND r.n > 0 AND r.n < r.was;"
        f" TRUNCATE {hits}"
    )
