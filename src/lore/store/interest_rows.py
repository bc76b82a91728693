"""The rows of the interest map (lore.interest): its notes, clusters and members. A search
reads none of them (see lore.store.rows)."""

from __future__ import annotations

from dataclasses import dataclass


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
