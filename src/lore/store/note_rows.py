"""The rows of indexing and of reading one note back: what a sync compares, writes and
derives from (StoredNote, Unreadable, NoteRow, NoteText, NameSource) and what `lore show`
presents (NoteRecord). A search reads none of them (see lore.store.rows)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rows import FtsFields


@dataclass(frozen=True, slots=True)
class StoredNote:
    """What a sync needs of a note it re-derives or deletes: its id, and its content hash
    (a file whose stat changed but not its content is not derived again). The stamps are
    compared apart (Store.note_stamps). Held for every note a rebuild derives: about 300
    bytes a note, 460 when the stat and date source came with it."""

    id: int
    hash: str


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
class NameSource:
    """What a note's pinyin rows are derived from (lore.index.pinyin), as stored: its
    names (a NameRow's fields), its tags and the entity cards it defines."""

    id: int
    title: str
    frontmatter: dict[str, Any]
    path: str
    tags: list[str]
    entity_names: list[str]  # names and aliases of the entity cards the note defines
