"""The row models the store hands up: plain frozen dataclasses, no SQL, no behaviour.

Every backend returns these same shapes (lore.store.base.Store), so nothing above the
store knows which database answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Token streams of a note's full-text fields, in FTS_COLUMNS order.
FtsFields = tuple[str, str, str, str]
Headings = list[tuple[int, str, int, int]]  # (level, text, body offset, file line)


@dataclass(frozen=True, slots=True)
class StoredStat:
    id: int
    mtime_ns: int
    size: int
    hash: str
    date_source: str | None


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A file the last sync could not take in, with the stat it had then."""

    mtime_ns: int
    size: int
    reason: str


@dataclass(frozen=True)
class NoteRow:
    """What the sync writes for one note (everything but the id)."""

    path: str
    title: str
    title_source: str
    date: str | None
    date_source: str | None
    mtime_ns: int
    size: int
    hash: str
    frontmatter: dict[str, Any]
    headings: list[list[Any]]
    summary: str
    body: str
    body_line: int
    priority: int | None
    status: str | None
    truncated: bool
    tags: list[tuple[str, str]]  # (tag as written, origin)
    links: list[str]
    fts: FtsFields
    # The body's parts for passage ranking: (start, end, token stream) (lore.derive.sections).
    sections: list[tuple[int, int, str]] = field(default_factory=list)


@dataclass(frozen=True)
class NoteRecord:
    """One indexed note as `lore show` and `read_note` present it."""

    id: int
    path: str
    title: str
    title_source: str
    date: str | None
    date_source: str | None
    frontmatter: dict[str, Any]
    headings: list[list[Any]]  # [[level, text, offset, line], ...]
    summary: str
    body: str
    body_line: int
    size: int
    hash: str
    truncated: bool
    tags: list[tuple[str, str]]  # (tag, origin): the author's
    derived_tags: list[tuple[str, str]]  # (tag, origin): heuristic | llm
    links: list[str]


@dataclass(frozen=True)
class HitRow:
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
    claims: list[str] = field(default_factory=list)  # the LLM's grounded claims (#19)
    category: str | None = None


@dataclass(frozen=True)
class NameRow:
    """What the name channel matches a query against."""

    id: int
    title: str
    frontmatter: dict[str, Any]
    path: str


@dataclass(frozen=True)
class NoteSource:
    """A note's stored fields with all its tags: what its texts to embed come from."""

    id: int
    path: str
    title: str
    body: str
    headings: Headings
    summary: str
    tags: list[str]  # every tag: front matter, inline, heuristic, llm (in that order)
    frontmatter: dict[str, Any] = field(default_factory=dict)
    llm_summary: bool = False  # `summary` is the LLM's (a current row has one)


@dataclass(frozen=True)
class TextSpan:
    """One embedded text of a note that a vector belongs to."""

    vector_id: int
    note_id: int
    kind: str  # summary | passage | tags
    start: int
    end: int
    heading: str | None


@dataclass(frozen=True)
class NoteText:
    """The stored text of a note (memory derivation reads notes this way)."""

    id: int
    path: str
    title: str
    date: str | None
    frontmatter: dict[str, Any]
    body: str
    body_line: int


@dataclass(frozen=True)
class NoteInfo:
    """A note as the interest map sees it."""

    id: int
    path: str
    title: str
    date: str | None  # the note's own date (front matter, file name, text), else None
    hash: str


@dataclass(frozen=True)
class ClusterRow:
    """One stored interest cluster (lore.interest.model.InterestCluster without members)."""

    id: int
    label: str
    label_source: str
    size: int
    top_tags: tuple[str, ...]
    weekly: tuple[tuple[str, int], ...]
    trend: str
    recent_share: float
    longrun_share: float


@dataclass(frozen=True)
class MemberRow:
    cluster_id: int
    note_id: int
    path: str
    title: str
    date: str | None
    similarity: float
    x: float
    y: float


@dataclass(frozen=True)
class NameSource(NameRow):
    """What a note's pinyin rows are derived from (lore.index.pinyin), as stored: its
    names, its tags and the entity cards it defines."""

    tags: list[str]
    entity_names: list[str]  # names and aliases of the entity cards the note defines


@dataclass(frozen=True)
class PinyinName:
    """One name or tag of a note with its units (lore.derive.pinyin.encode_units)."""

    kind: str  # name (title, alias, file name, entity) | tag
    name: str  # as written
    units: str
