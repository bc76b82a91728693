"""How one posting is packed in bytes on PostgreSQL (issue 15): in numpy's terms and in the
SQL that writes and cuts such bytes. Only widths and column names come in (no table of
lore.store.pg_schema).

Two records, both big-endian as PostgreSQL's `int4send`/`int8send` write them:

- a **block** record (what a large sync packs into `packs` tables' blocks): the document
  (4 bytes), its length in tokens (4) and the term's count in each column (1 byte each):
  12 bytes a note's posting (four columns), 9 a part's. PostgreSQL leaves such blocks
  uncompressed, so the server hands them over as they are on the page. A posting that
  does not fit (a count over 255 in a column, a document id over 2^31 - 1) stays a row
  of the `postings` table, which holds any integer.
- a **row** record: the document (8 bytes), its length (4) and each count (4), as they
  are in the table: what the server packs a term's rows into as it reads them, and what
  blocks held before block records (28 bytes a note's posting, which pglz compressed and
  the server decompressed on every read).

A block's bytes tell its record: n records of one or the other. An index made before
keeps its blocks as they are (read, and cut when a note changes, in their record) and
packs its new postings in block records; `lore rebuild` packs them all so. Read back for a
million-note vault's searches (bench/results/pg_read_format_1000000.md), the postings took
32 ms a search at the median in row records as stored, 11.7 ms in block records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MAX_COUNT = 2**8 - 1  # a block record's count, per column
MAX_DOC = 2**31 - 1  # a block record's document (and length: PostgreSQL's integer)
DOC_BYTES = 4


def block_dtype(width: int) -> np.dtype[np.void]:
    """A block record of a lexicon of `width` columns."""
    import numpy as np

    return np.dtype([("doc", ">i4"), ("len", ">i4"), ("tf", "u1", (width,))])


def row_dtype(width: int) -> np.dtype[np.void]:
    """A row record of a lexicon of `width` columns."""
    import numpy as np

    return np.dtype([("doc", ">i8"), ("len", ">i4"), ("tf", ">i4", (width,))])


def block_width(width: int) -> int:
    """Bytes of a block record of a lexicon of `width` columns."""
    return 2 * DOC_BYTES + width


def row_width(width: int) -> int:
    """Bytes of a row record of a lexicon of `width` columns."""
    return 12 + 4 * width


def block_sql(alias: str, doc: str, columns: Sequence[str]) -> str:
    """The SQL expression packing a postings row (of `alias`: its document in the column
    `doc`, `len`, `tf_<column>`) that `fits_sql` lets through into a block record."""
    counts = [f"substring(int4send({alias}.tf_{c}) from 4 for 1)" for c in columns]
    return " || ".join([f"int4send({alias}.{doc}::integer)", f"int4send({alias}.len)", *counts])


def row_sql(alias: str, doc: str, columns: Sequence[str]) -> str:
    """The SQL expression packing a postings row into a row record."""
    counts = [f"int4send({alias}.tf_{c})" for c in columns]
    return " || ".join([f"int8send({alias}.{doc}::int8)", f"int4send({alias}.len)", *counts])


def fits_sql(alias: str, doc: str, columns: Sequence[str]) -> str:
    """The SQL condition: this postings row fits a block record."""
    counts = [f"{alias}.tf_{c} <= {MAX_COUNT}" for c in columns]
    return " AND ".join([f"{alias}.{doc} <= {MAX_DOC}", *counts])


def narrow_sql(block: str, width: int) -> str:
    """The SQL condition: the block `block` (a packs row: data, n) holds block records."""
    return f"length({block}.data) = {block}.n * {block_width(width)}"


def int_at_sql(data: str, offset: str, size: int) -> str:
    """The SQL expression of the big-endian integer of `size` bytes (4 or 8) at this byte
    offset (from 0) of a bytea."""
    kind = "integer" if size == 4 else "bigint"
    return (
        f"('x' || encode(substring({data} from {offset} + 1 for {size}), 'hex'))"
        f"::bit({8 * size})::{kind}"
    )


def doc_at_sql(data: str, offset: str) -> str:
    """The document of the block record at this byte offset of a block's bytes."""
    return int_at_sql(data, offset, DOC_BYTES)


def either_doc_at_sql(data: str, offset: str, narrow: str) -> str:
    """The document at this offset of a block's bytes of either record (`narrow`: the SQL
    condition that they are block records)."""
    block, row = doc_at_sql(data, offset), int_at_sql(data, offset, 8)
    return f"CASE WHEN {narrow} THEN {block} ELSE {row} END"


def either_doc_bytes_sql(doc: str, narrow: str) -> str:
    """A document's id as a record of either kind starts with it."""
    return f"CASE WHEN {narrow} THEN int4send(({doc})::integer) ELSE int8send(({doc})::int8) END"


def row_fields_sql(record: str, width: int) -> list[str]:
    """The SQL expressions of a row record's document, length and counts, in order."""
    return [int_at_sql(record, "0", 8), int_at_sql(record, "8", 4)] + [
        int_at_sql(record, str(12 + 4 * c), 4) for c in range(width)
    ]


def rows_from_records_sql(source: str, postings: str, doc: str, columns: Sequence[str]) -> str:
    """The statement writing the row records of `source` (term_id, data: row records
    end to end) as rows of the postings table `postings` (its document column `doc`)."""
    size = row_width(len(columns))
    fields = ", ".join(row_fields_sql("r.rec", len(columns)))
    tf = ", ".join(f"tf_{c}" for c in columns)
    return (
        f"INSERT INTO {postings} (term_id, {doc}, len, {tf}) SELECT r.term_id, {fields}"
        f" FROM (SELECT u.term_id, substring(u.data from i * {size} + 1 for {size}) AS rec"
        f" FROM {source} u CROSS JOIN LATERAL generate_series(0, length(u.data) / {size} - 1) i) r"
    )
