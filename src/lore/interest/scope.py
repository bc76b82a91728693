"""The stored interest map as one caller may see it: only the notes its access rules allow.

Labels, top tags, sizes and trends of the stored map were made from every note, so a
label could name a note the caller may not see. For a caller with access rules each
cluster is re-described from its visible members alone, with the same functions the build
uses (heuristic labels from their tags and titles, trends from their dates); a cluster
with no visible member is left out. The 2-D positions are kept (they place the visible
notes; the hidden ones are not drawn). Cluster ids stay those of the stored map.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from ..memory.access import Access
from .labels import heuristic_labels
from .model import InterestCluster, InterestMap
from .trends import trends

Tags = dict[int, dict[str, tuple[str, float]]]
STALE = "the index changed since this map was built"


def scope_map(interest: InterestMap, access: Access, tags: Tags) -> InterestMap:
    """`interest` limited to what `access` allows (the map itself when unrestricted)."""
    if access.unrestricted:
        return interest
    kept: list[InterestCluster] = []
    for cluster in interest.clusters:
        members = tuple(m for m in cluster.members if access.allows(m.path))
        if members:
            kept.append(replace(cluster, members=members, size=len(members)))
    if not kept:
        return _empty(interest)
    ids = [c.id for c in kept]
    member_ids = [[m.note_id for m in c.members] for c in kept]
    titles = {m.note_id: m.title for c in kept for m in c.members}
    visible = {nid for group in member_ids for nid in group}
    labels = heuristic_labels(member_ids, titles, {n: tags.get(n, {}) for n in visible}, ids)
    params = interest.params
    series, messages = trends(
        [[m.date for m in c.members] for c in kept],
        today=_today(params.get("today")),
        recent_weeks=int(params.get("recent_weeks", 4)),
        ratio=float(params.get("trend_ratio", 1.5)),
    )
    clusters = tuple(
        replace(
            cluster,
            label=label.label,
            label_source=label.source,
            top_tags=label.top_tags,
            weekly=trend.weekly,
            trend=trend.trend,
            recent_share=trend.recent_share,
            longrun_share=trend.longrun_share,
        )
        for cluster, label, trend in zip(kept, labels, series, strict=True)
    )
    stale = tuple(m for m in interest.messages if m.startswith(STALE))
    return replace(
        interest,
        clusters=clusters,
        notes=sum(c.size for c in clusters),
        unclustered=tuple(p for p in interest.unclustered if access.allows(p)),
        messages=(*messages, *stale),
    )


def _empty(interest: InterestMap) -> InterestMap:
    return replace(interest, clusters=(), notes=0, unclustered=(), messages=())


def _today(value: object) -> dt.date:
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        return dt.datetime.now(dt.UTC).date()
