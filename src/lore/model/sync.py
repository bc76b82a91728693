"""What a sync reports (lore.model): what it took in, left out or warned about, and the
headings it read. A search makes none of these, so a `lore search` process does not define
them (each frozen dataclass costs a cold process about half a millisecond to make).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


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
