"""Plain data objects that cross the library boundary.

Everything here is a frozen dataclass with no behaviour beyond conversion to plain dicts:
the CLI, the MCP server and outside evaluations all read the same shapes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict


@dataclass(frozen=True)
class Heading:
    """A Markdown heading and where it starts in the note body (character offset)."""

    level: int
    text: str
    offset: int
    line: int


@dataclass(frozen=True)
class Skipped:
    """A file the sync could not (fully) take in, and why, in one line. `kind` names the
    problem, so the same one across many files can be counted instead of repeated."""

    path: str
    reason: str
    kind: str = ""


@dataclass(frozen=True)
class SyncReport:
    """What one sync did. Paths are relative to the vault, sorted.

    `skipped`: files not taken in (their previously indexed version, if any, is kept).
    `warnings`: files indexed with a problem (malformed front matter, only the head of a
    very large file, an empty note).
    """

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    embedded: int = 0  # texts embedded after the sync (a provider is configured)
    notices: list[str] = field(default_factory=list)  # a part that failed, said once
    # The notes' LLM fields (issue 19): notes done, calls made, pending, failed, dropped.
    llm: dict[str, Any] | None = None

    @property
    def wrote(self) -> bool:
        return bool(self.added or self.changed or self.deleted)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "changed": self.changed,
            "deleted": self.deleted,
            "unchanged": self.unchanged,
            "skipped": [asdict(s) for s in self.skipped],
            "warnings": [asdict(w) for w in self.warnings],
            "seconds": round(self.seconds, 4),
            "embedded": self.embedded,
            "notices": self.notices,
            "llm": self.llm,
        }


@dataclass(frozen=True)
class Explain:
    """Why a hit ranked where it did: the score per field and the query terms it matched."""

    fields: dict[str, float]
    matched_terms: list[str]
    query_terms: list[str]
    fts_query: str
    # Absent from the index (they match nothing), or single tokens in more than half of
    # the notes, to which BM25 gives no weight.
    dropped_terms: list[str]
    # The semantic layer (issue 8): the query plan and every channel's raw and weighted score.
    query_refine: str | None = None
    query_tags: list[str] = field(default_factory=list)
    planner: str = "heuristic"  # heuristic | llm
    channels: dict[str, dict[str, float]] = field(default_factory=dict)
    passage: str | None = None  # the passage whose vector matched best (long notes)
    # Too common to bring candidates: they scored the candidates the rarer terms brought.
    score_only_terms: list[str] = field(default_factory=list)
    excluded_terms: list[str] = field(default_factory=list)  # -word: no hit holds them
    # Script folding and pinyin (issue 17): how folding changed the query's words ("軟體 →
    # 软件"), this hit's matches the note writes in another script or word ("数据库 ≈
    # 數據庫"), and the name or tag the query spelled in pinyin ("zhangsan → 张三").
    folded_terms: list[str] = field(default_factory=list)
    matched_folded: list[str] = field(default_factory=list)
    pinyin: str | None = None
    # Stop words and spoken filler of the query, not searched (a note's name that holds
    # them still counts them: lore.retrieve.names).
    stop_terms: list[str] = field(default_factory=list)
    # Which text the best vector was made from (issue 19): a passage, the whole note, or
    # the summary (the LLM's, the author's, or the head and tail of the text).
    vector_text: str | None = None
    # Where the full-text score came from (issue 12): "the whole note", or its best part,
    # "a part (§ heading)", when that part's share of BM25 beat the whole note's.
    fts_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
        data = asdict(self)  # copies: the caller may change what it gets
        return HitJson(
            path=self.path,
            title=self.title,
            date=self.date,
            score=self.score,
            snippet=self.snippet,
            heading=self.heading,
            line=self.line,
            frontmatter=data["frontmatter"],
            tags=data["tags"],
            mode=self.mode,
            explain=self.explain.to_dict() if self.explain else None,
            words_matched=data["words_matched"],
            words_total=self.words_total,
            claims=data["claims"],
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
