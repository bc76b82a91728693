"""The rows of the note fields by the LLM as the sync reads and writes them
(lore.store.note_llm): never made by a search, which reads `Shown`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LlmRow:
    """One note's fields as stored."""

    note_id: int
    note_hash: str
    version: str
    model: str
    state: str  # llm | failed
    reason: str | None = None
    summary: str | None = None
    claims: list[dict[str, str]] = field(default_factory=list)
    category: str | None = None
    dropped: list[dict[str, str]] = field(default_factory=list)
    calls: int = 0


@dataclass(frozen=True)
class NoteSource:
    """What the model is given of a note, and what decides its summary."""

    id: int
    path: str
    hash: str
    title: str
    frontmatter: dict[str, Any]
    headings: list[tuple[int, str, int, int]]
    body: str
    summary: str  # notes.summary as it stands
