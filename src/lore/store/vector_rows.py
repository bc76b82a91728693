"""The semantic layer's rows (lore.store.vectors): what a note's texts to embed come from,
and the text a vector was made from. Imported where they are made: a search without
vectors makes neither (lore.store.rows says why that matters).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rows import Headings


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
