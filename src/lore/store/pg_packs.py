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
reading: deleting a document (a changed or removed note) rewrites the blocks holding it
(`unpack_documents`), one per term of the note, a few kilobytes each.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .pg_cache import ReadCache
from .pg_schema import Lexicon

if TYPE_CHECKING:
    import numpy as np
    import psycopg
    from numpy.typing import NDArray

    Connection = psycopg.Connection[Any]

# Postings in a block: 3.5 KB of a note's, which PostgreSQL compresses in place (no TOAST
# table to visit). A changed note's old postings are cut out of a block each: the first
# edit of 10 notes after a 10k first index took 7.1 s with blocks of 1,024, 3.9 s with
# blocks of 128 (3.8 s as rows), for 2% more space.
PACK_SIZE = 128
FETCH_BLOCKS = 512  # blocks a deletion reads, rewrites and sends at a time


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
    """A term's postings: documents, their lengths and per-column counts, row by row."""

    docs: NDArray[np.int64]
    lengths: NDArray[np.float64]
    counts: NDArray[np.int64]  # (documents, columns)

    @classmethod
    def decode(cls, packed: bytes, width: int) -> Postings:
        import numpy as np

        rows = np.frombuffer(packed, dtype=record_dtype(width))
        return cls(
            rows["doc"].astype(np.int64),
            rows["len"].astype(np.float64),
            rows["tf"].astype(np.int64).reshape(len(rows), width),
        )

    @property
    def size(self) -> int:
        return len(self.docs)

    def holding(self, columns: tuple[int, ...] | None) -> NDArray[np.bool_]:
        """The rows with an occurrence in these columns (None: in any)."""
        import numpy as np

        if columns is None:
            return np.ones(self.size, dtype=bool)
        return np.asarray((self.counts[:, list(columns)] > 0).any(axis=1), dtype=bool)


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
    for term_id, packed in conn.execute(_read_sql(lx), {"t": missing}):
        parts[int(term_id)].append(bytes(packed))
    for term_id, chunks in parts.items():
        found = out[term_id] = Postings.decode(b"".join(chunks), lx.width)
        if cache is not None:
            cache.put(("postings", lx.postings, term_id), found, size=found.size)
    return out


# -- writes (inside the caller's transaction) ----------------------------------------------


def pack_rows(lx: Lexicon, source: str) -> str:
    """The statement storing the postings rows of the table `source` (term_id, doc, len,
    tf_…, none of them indexed yet) as blocks, in the primary key's order."""
    record = record_sql(lx, "s", "doc")
    return (
        f"INSERT INTO {lx.packs} (term_id, first_doc, last_doc, n, data)"
        " SELECT term_id, min(doc), max(doc), count(*), string_agg(record, ''::bytea ORDER BY doc)"
        f" FROM (SELECT s.term_id, s.doc, {record} AS record, (row_number() OVER"
        f" (PARTITION BY s.term_id ORDER BY s.doc) - 1) / {PACK_SIZE} AS block FROM {source} s) b"
        " GROUP BY term_id, block ORDER BY 1, 2"
    )


def _rewrites(lx: Lexicon) -> str:
    """The session's temporary table of blocks a deletion rewrote."""
    return f"lore_stage_{lx.packs}"


def rewrite_table(lx: Lexicon) -> str:
    """The statement making that table, if this session has not made it yet."""
    return (
        f"CREATE TEMP TABLE IF NOT EXISTS {_rewrites(lx)} (term_id integer, first_doc bigint,"
        " new_first bigint, last_doc bigint, n integer, data bytea)"
    )


def unpack_documents(conn: Connection, lx: Lexicon, gone: str, doc_ids: Sequence[int]) -> None:
    """Take these documents out of the blocks holding them: `gone` is a table of (term_id,
    doc) pairs naming every posting of theirs. Each
    block holding one is rewritten without it, or dropped when nothing is left. Blocks
    are read through a server-side cursor, FETCH_BLOCKS at a time, so a deletion of many
    documents never holds all of them here."""
    import numpy as np

    dead = np.unique(np.asarray(list(doc_ids), dtype=np.int64))
    rewrites = _rewrites(lx)
    touched = (
        f"SELECT k.term_id, k.first_doc, k.data FROM {lx.packs} k WHERE (k.term_id, k.first_doc)"
        f" IN (SELECT b.term_id, b.first_doc FROM {gone} g JOIN {lx.packs} b"
        " ON b.term_id = g.term_id AND b.first_doc <= g.doc AND b.last_doc >= g.doc)"
    )
    # A server-side cursor lives in a transaction: the caller's, or one of its own.
    with conn.transaction():
        changed = 0
        with conn.cursor(name=f"lore_unpack_{lx.packs}") as blocks:
            blocks.execute(touched)
            while batch := blocks.fetchmany(FETCH_BLOCKS):
                out = _without(batch, dead, record_dtype(lx.width))
                changed += len(out)
                if out:
                    with conn.cursor() as cur, cur.copy(f"COPY {rewrites} FROM STDIN") as copy:
                        for row in out:
                            copy.write_row(row)
        if changed:
            conn.execute(
                # Analysed, the few rewritten blocks are looked up by key, not joined with
                # a pass over every block.
                f"ANALYZE {rewrites};"
                f" DELETE FROM {lx.packs} k USING {rewrites} r WHERE k.term_id = r.term_id"
                f" AND k.first_doc = r.first_doc;"
                f" INSERT INTO {lx.packs} (term_id, first_doc, last_doc, n, data)"
                f" SELECT term_id, new_first, last_doc, n, data FROM {rewrites} WHERE n > 0"
                " ORDER BY 1, 2;"
                f" TRUNCATE {rewrites}"
            )


def _without(
    blocks: Sequence[tuple[Any, ...]], dead: NDArray[np.int64], dtype: np.dtype[np.void]
) -> list[tuple[Any, ...]]:
    """The blocks (term id, first document, records) holding a dead document, as rows of
    the rewrite table: rewritten without it, or with no records (n = 0) when none is left."""
    import numpy as np

    out: list[tuple[Any, ...]] = []
    for term_id, first_doc, data in blocks:
        rows = np.frombuffer(bytes(data), dtype=dtype)
        keep = rows[~np.isin(rows["doc"], dead)]
        if len(keep) == len(rows):
            continue  # its range held the document; it did not
        first, last = (int(keep["doc"][0]), int(keep["doc"][-1])) if len(keep) else (None, None)
        out.append((term_id, first_doc, first, last, len(keep), keep.tobytes()))
    return out
