"""Plain data objects that cross the library boundary.

Everything here is a frozen dataclass with no behaviour beyond conversion to plain dicts:
the CLI, the MCP server and outside evaluations all read the same shapes. A search's are
here; `Explain` (lore.model.explain) and the sync's (lore.model.sync: `SyncReport`,
`Skipped`, `Heading`) are in modules of their own, imported from here on first use: a
`lore search` process makes neither.
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from .explain import Explain as Explain
    from .sync import Heading as Heading
    from .sync import Skipped as Skipped
    from .sync import SyncReport as SyncReport

_ELSEWHERE = {"Explain": "explain", "Heading": "sync", "Skipped": "sync", "SyncReport": "sync"}


def __getattr__(name: str) -> Any:
    module = _ELSEWHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def anchor(path: str, heading: str | None) -> str:
    """Where to cite a passage: `path#heading` (the path alone before the first heading)."""
    return f"{path}#{heading}" if heading else path


class HitJson(TypedDict):
    """One hit as every front end gives it: `lore search --json`, `Hit.to_dict()`, the
    HTTP API and the MCP `search` and `lookup` tools (docs/json.md)."""

    path: str
    title: str
    date: str | None
    score: float
    snippet: str
    heading: str | None
    line: int
    frontmatter: dict[str, Any]
    tags: list[str]
    mode: str
    explain: dict[str, Any] | None
    words_matched: list[str]
    words_total: int
    claims: list[str]
    category: str | None
    anchor: str


class SearchJson(TypedDict):
    """The result of one search, in every front end (docs/json.md)."""

    query: str
    mode: str
    matched: int
    reason: str | None
    notices: list[str]
    degraded: list[str]
    hits: list[HitJson]


@dataclass(frozen=True)
class Hit:
    """One search result with its evidence.

    `path` is relative to the vault (POSIX separators); `snippet` is cut from the original
    text with matched terms wrapped in the highlight markers; `heading` is the section the
    snippet sits under (None before the first heading); `line` is the 1-based line of the
    snippet's first match in the file.
    """

    path: str
    title: str
    date: str | None
    score: float
    snippet: str
    heading: str | None
    line: int
    frontmatter: dict[str, Any]
    tags: list[str]
    mode: str
    explain: Explain | None = None
    # The query's words this note holds (title, tags or text), and how many there are: a
    # hit that holds only some says so ("matched 2 of 3 words").
    words_matched: list[str] = field(default_factory=list)
    words_total: int = 0
    # With an LLM (issue 19): the note's key claims, each grounded in it, and its category
    # (the author's `category:`, else the one the model chose from [lore] categories).
    claims: list[str] = field(default_factory=list)
    category: str | None = None

    def to_dict(self) -> HitJson:
        # Copies of what is mutable: the caller may change what it gets.
        return HitJson(
            path=self.path,
            title=self.title,
            date=self.date,
            score=self.score,
            snippet=self.snippet,
            heading=self.heading,
            line=self.line,
            frontmatter=copy.deepcopy(self.frontmatter),
            tags=list(self.tags),
            mode=self.mode,
            explain=self.explain.to_dict() if self.explain else None,
            words_matched=list(self.words_matched),
            words_total=self.words_total,
            claims=list(self.claims),
            category=self.category,
            anchor=anchor(self.path, self.heading),
        )


class SearchResult(list[Hit]):
    """The hits of one query (a list, best first) plus the mode that produced them and,
    when there are none, the reason why ("nothing matched", "all filtered out", ...)."""

    def __init__(
        self,
        hits: list[Hit],
        *,
        query: str,
        mode: str,
        reason: str | None = None,
        matched: int = 0,
        notices: list[str] | None = None,
        degraded: list[str] | None = None,
    ) -> None:
        super().__init__(hits)
        self.query = query
        self.mode = mode
        self.reason = reason
        self.matched = matched
        self.notices = list(notices or [])
        # The parts a time budget dropped, in the order dropped (lore.retrieve.budget).
        self.degraded = list(degraded or [])

    def to_dict(self) -> SearchJson:
        return SearchJson(
            query=self.query,
            mode=self.mode,
            matched=self.matched,
            reason=self.reason,
            notices=self.notices,
            degraded=self.degraded,
            hits=[hit.to_dict() for hit in self],
        )
