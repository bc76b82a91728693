"""The row models the store hands up: plain immutable records, no SQL, no behaviour.

Every backend returns these same shapes (lore.store.base.Store), so nothing above the
store knows which database answered. These are the rows a search reads; the others are
beside them by area (note_rows: indexing and one note read back; vector_rows: the
semantic layer's; interest_rows; the tokens' and transfer's rows), imported where they are
used: a `lore search` process makes only the classes it reads (each frozen dataclass costs
it about half a millisecond to make). The rows here are NamedTuples, not dataclasses: a
search makes hundreds of them, and the class itself costs a cold process a fifth of what
a frozen dataclass does (no generated code to compile).
"""

from __future__ import annotations

from typing import Any, NamedTuple

# Token streams of a note's full-text fields, in FTS_COLUMNS order.
FtsFields = tuple[str, str, str, str]
Headings = list[tuple[int, str, int, int]]  # (level, text, body offset, file line)


class HitRow(NamedTuple):
    """What a search hit is made of."""

    id: int
    path: str
    title: str
    date: str | None
    frontmatter: dict[str, Any]
    headings: Headings
    body: str
    body_line: int
    tags: list[str]
    claims: list[str]  # the LLM's grounded claims (#19)
    category: str | None


class NameRow(NamedTuple):
    """What the name channel matches a query against."""

    id: int
    title: str
    frontmatter: dict[str, Any]
    path: str


class PinyinName(NamedTuple):
    """One name or tag of a note with its units (lore.derive.pinyin.encode_units)."""

    kind: str  # name (title, alias, file name, entity) | tag
    name: str  # as written
    units: str
