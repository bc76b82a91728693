"""What the interest map is made of: plain frozen dataclasses shared by the builder
(lore.interest.build), the store (lore.store.interest) and the reports (lore.present.report).

An InterestMap is read back from the index exactly as it was built (`lore clusters build`
stores it; `lore clusters show` and `lore report` reuse it), so reports never recluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

Trend = Literal["heating", "cooling", "steady", "new"]


class ClusterJson(TypedDict):
    """A cluster in `lore clusters build/show --json`, the HTTP API and the report."""

    id: int
    label: str
    label_source: str
    size: int
    members: list[str]  # paths, most representative first
    top_tags: list[str]
    trend: Trend
    recent_share: float
    longrun_share: float
    weekly: list[list[str | int]]  # [ISO week, notes]


class MemberJson(TypedDict):
    path: str
    title: str
    date: str | None
    similarity: float
    x: float
    y: float


class ClusterPageJson(ClusterJson):
    """One cluster with its members in full (`lore clusters show ID --json`)."""

    notes: list[MemberJson]


class MapJson(TypedDict):
    """The whole map: `lore clusters build --json` and `lore clusters show --json` alike."""

    built_at: str
    lexical: bool
    source: Any  # the `source` setting the build used ("auto", "vectors", "lexical")
    notes: int
    clusters: list[ClusterJson]
    unclustered: list[str]
    messages: list[str]
    fingerprint: str
    params: dict[str, Any]


@dataclass(frozen=True)
class ClusterMember:
    note_id: int
    path: str  # relative to the vault, POSIX separators
    title: str
    date: str | None  # YYYY-MM-DD
    similarity: float  # cosine to the cluster centroid (original space)
    x: float  # 2-D map position (PCA of the clustered vectors), for the chart
    y: float


@dataclass(frozen=True)
class InterestCluster:
    id: int  # stable across rebuilds when membership barely changes
    label: str
    label_source: str  # tags | titles | llm
    size: int
    members: tuple[ClusterMember, ...]  # most representative first
    top_tags: tuple[str, ...]
    weekly: tuple[tuple[str, int], ...]  # (ISO week "2026-W47", notes) oldest first, gaps as 0
    trend: Trend
    recent_share: float  # share of the vault's recent notes that fall in this cluster
    longrun_share: float  # share of all dated notes that fall in this cluster

    def to_dict(self) -> ClusterJson:
        return ClusterJson(
            id=self.id,
            label=self.label,
            label_source=self.label_source,
            size=self.size,
            members=[m.path for m in self.members],
            top_tags=list(self.top_tags),
            trend=self.trend,
            recent_share=round(self.recent_share, 4),
            longrun_share=round(self.longrun_share, 4),
            weekly=[list(w) for w in self.weekly],
        )

    def to_page_dict(self) -> ClusterPageJson:
        """The cluster with its members in full (most representative first)."""
        notes = [
            MemberJson(
                path=m.path, title=m.title, date=m.date, similarity=m.similarity, x=m.x, y=m.y
            )
            for m in self.members
        ]
        return ClusterPageJson(**self.to_dict(), notes=notes)


@dataclass(frozen=True)
class InterestMap:
    clusters: tuple[InterestCluster, ...]  # largest first, then id
    lexical: bool  # True: clustered on TF-IDF of the tokens (no vectors in the index)
    params: dict[str, Any]  # every parameter the build used (seed 000 defaults filled in)
    fingerprint: str  # sha256 of the input (note ids, hashes, vector identity, params)
    built_at: str  # ISO time of the build
    notes: int  # notes clustered
    unclustered: tuple[str, ...] = field(default=())  # paths left out (no text, no vector)
    messages: tuple[str, ...] = field(default=())  # one-line notes for the user

    def to_dict(self) -> MapJson:
        return MapJson(
            built_at=self.built_at,
            lexical=self.lexical,
            source=self.params.get("source"),
            notes=self.notes,
            clusters=[c.to_dict() for c in self.clusters],
            unclustered=list(self.unclustered),
            messages=list(self.messages),
            fingerprint=self.fingerprint,
            params=self.params,
        )

    def cluster(self, cluster_id: int) -> InterestCluster | None:
        return next((c for c in self.clusters if c.id == cluster_id), None)
