"""Wikilinks resolved: where a note's `[[links]]` go, and which notes link to it.

A target is read the way entity cards read their relations (lore.memory.entities,
`Entities.resolve_target`): an entity's name or alias → its card; else a note by title,
file name or path without `.md`. Backlinks are the links whose target resolves to the note.

Only notes the caller may see take part: a link to a note outside its access rules is a
dangling link (no path, so nothing is told about the hidden note), and backlinks come only
from notes it may see.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ..store import links as sql
from ..store.base import Store
from ..store.sql_base import sql_store
from .access import Access
from .entities import Entities
from .settings import MemorySettings

_WORD_RUN = re.compile(r"\w+")
_MD = re.compile(r"\.(?:md|markdown)$", re.IGNORECASE)


@dataclass(frozen=True)
class Link:
    """One outgoing `[[target]]`: `path` None when it resolves to no note the caller sees."""

    target: str
    path: str | None
    kind: str | None = None  # note | entity | ambiguous | None (dangling)

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "path": self.path, "kind": self.kind}


@dataclass(frozen=True)
class Backlink:
    """A note that links here, and how it wrote the link."""

    path: str
    title: str
    date: str | None
    target: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "date": self.date, "target": self.target}


@dataclass(frozen=True)
class LinkReport:
    path: str
    outgoing: list[Link] = field(default_factory=list)
    backlinks: list[Backlink] = field(default_factory=list)
    principal: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "principal": self.principal,
            "outgoing": [link.to_dict() for link in self.outgoing],
            "backlinks": [link.to_dict() for link in self.backlinks],
        }


def needle(name: str) -> str:
    """The longest run of word characters of a name, case-folded: a link that can resolve
    to the name holds it in its case-folded target (the SQL prefilter of backlinks)."""
    runs = _WORD_RUN.findall(unicodedata.normalize("NFKC", name).casefold())
    return max(runs, key=len) if runs else ""


def _resolve(entities: Entities, target: str) -> Link:
    found = entities.resolve_target(target)
    kind = found.get("kind")
    path = found.get("path")
    if path is not None and not entities.access.allows(str(path)):
        return Link(target, None, None)
    return Link(target, None if path is None else str(path), kind)


def link_report(
    store: Store, settings: MemorySettings, access: Access, path: str, title: str
) -> LinkReport:
    """Outgoing links and backlinks of the note at `path` (one the caller may see)."""
    entities = Entities(store, settings, access)
    db = sql_store(store)
    outgoing = [_resolve(entities, target) for target in sql.outgoing(db, path)]
    names = [_MD.sub("", path.rsplit("/", 1)[-1]), title]
    for info in entities.registry.entities.values():
        if any(d["path"] == path for d in info.defs):
            names += info.spellings
    rows = sql.links_containing(db, (needle(n) for n in names), access.globs)
    backlinks: dict[str, Backlink] = {}
    for source, source_title, date, target in rows:
        if source == path or source in backlinks:
            continue
        if _resolve(entities, target).path == path:
            backlinks[source] = Backlink(source, source_title, date, target)
    return LinkReport(path, outgoing, list(backlinks.values()), access.principal)
