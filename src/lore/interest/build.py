"""`lore clusters build`: interest rows → clusters → stable ids → labels, trends → stored.

    select_inputs (vectors.py)   stored vectors or TF-IDF, one row per note, path order
    cluster_rows (cluster.py)    PCA, k-means++ | hierarchical, reassign, merge, cap
    assign_ids (stable.py)       ids kept from the previous build by member overlap
    labels.py, trends.py         names and weekly counts
    lore.store.interest          written in one transaction; `show` and reports read it

Same notes and same settings give the same map, byte for byte: rows are in path order,
every random choice comes from `kmeans_random_state`, ties are broken by index. A rebuild
over a previous map of the same source and clustering settings starts k-means++ from it
as well (kmeans.kmeans), and keeps it as it is when the notes did not change.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, cast

from ..errors import ConfigError, install_hint
from ..store.interest import json_or
from ..store.interest_rows import ClusterRow, MemberRow
from .model import ClusterMember, InterestCluster, InterestMap, Trend
from .settings import InterestSettings

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.base import Store
    from ..store.interest_rows import NoteInfo
    from .cluster import Labels

# params of a stored map that do not shape its clusters (trends, labels, the build itself)
_NOT_CLUSTERING = ("recent_weeks", "trend_ratio", "llm_labels", "today", "clustering")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _previous_rows(
    notes: Sequence[NoteInfo],
    before: Mapping[int, Set[str]],
    prior: Mapping[str, str],
    params: Mapping[str, Any],
    fingerprint: str,
) -> tuple[Labels | None, bool]:
    """(the previous map's cluster of each row, -1 for a new note; whether the rows are the
    previous map's), or (None, False) when there is no previous map or it was built from
    another source or with other clustering settings: then the build is a fresh one."""
    import numpy as np

    try:
        old = json.loads(prior.get("params", "") or "{}")
    except ValueError:
        return None, False
    mine = {k: v for k, v in params.items() if k not in _NOT_CLUSTERING}
    theirs = {k: v for k, v in old.items() if k not in _NOT_CLUSTERING}
    if not before or mine != theirs:
        return None, False
    where = {path: index for index, cid in enumerate(sorted(before)) for path in before[cid]}
    rows = np.array([where.get(n.path, -1) for n in notes], dtype=np.int64)
    return rows, prior.get("fingerprint") == fingerprint


def build_map(
    store: Store,
    settings: InterestSettings,
    *,
    today: dt.date,
    chat: ChatProvider | None = None,
) -> InterestMap:
    """Build the interest map of the indexed notes, store it and return it."""
    try:
        import numpy as np
    except ImportError:
        raise ConfigError(
            "the interest map needs the numpy package", hint=install_hint("interest")
        ) from None

    from .cluster import centroids, cluster_rows
    from .labels import heuristic_labels, llm_labels, note_tags, with_keywords
    from .stable import assign_ids
    from .trends import trends
    from .vectors import select_inputs

    inputs = select_inputs(store, settings)
    messages = list(inputs.messages)
    params: dict[str, Any] = {
        **settings.to_dict(),
        "source": inputs.source,
        "today": today.isoformat(),
    }
    notes = inputs.notes
    clusters: list[InterestCluster] = []
    blobs: dict[int, bytes] = {}
    next_free = store.next_cluster_id()
    if not notes:
        if not inputs.unclustered:
            messages.append("no notes to cluster: the index is empty (run `lore index`)")
    else:
        x = inputs.matrix
        before = store.previous_members()
        prior = store.interest_meta()
        previous, unchanged = _previous_rows(notes, before, prior, params, inputs.fingerprint)
        result = cluster_rows(x, settings, previous=previous, unchanged=unchanged)
        messages += result.messages
        params["clustering"] = result.info
        if unchanged:  # the run that made these clusters, as it was recorded
            recorded = json.loads(prior["params"]).get("clustering", {})
            params["clustering"] = {**result.info, **recorded}
        labels = result.labels
        k = int(labels.max()) + 1
        cents = centroids(x, labels)
        sims = np.einsum("ij,ij->i", x, cents[labels])
        groups: list[list[int]] = []  # row indices, most representative first
        for c in range(k):
            rows = np.flatnonzero(labels == c)
            order = sorted(rows.tolist(), key=lambda r: (-round(float(sims[r]), 6), r))
            groups.append(order)
        paths = [{notes[r].path for r in g} for g in groups]
        ids, next_free = assign_ids(paths, before, next_free)
        tag_table = note_tags(store)
        titles = {n.id: n.title for n in notes}
        member_ids = [[notes[r].id for r in g] for g in groups]
        named = heuristic_labels(member_ids, titles, tag_table, ids)
        if any(label.source == "titles" for label in named):
            # Clusters no tag sets apart (a tagless vault, mode 4): label them by their
            # members' distinctive keywords instead of one member's title.
            tag_table = with_keywords(store, member_ids, named, tag_table)
            named = heuristic_labels(member_ids, titles, tag_table, ids)
        if chat is not None and settings.llm_labels != "off":
            named, problem = llm_labels(
                store, chat, named, [[notes[r].title for r in g] for g in groups]
            )
            if problem:
                messages.append(problem)
        series, trend_messages = trends(
            [[notes[r].date for r in g] for g in groups],
            today=today,
            recent_weeks=settings.recent_weeks,
            ratio=settings.trend_ratio,
        )
        messages += trend_messages
        pos = result.positions
        for c, group in enumerate(groups):
            members = tuple(
                ClusterMember(
                    note_id=notes[r].id,
                    path=notes[r].path,
                    title=notes[r].title,
                    date=notes[r].date,
                    similarity=round(float(sims[r]), 6),
                    x=round(float(pos[r, 0]), 6),
                    y=round(float(pos[r, 1]), 6),
                )
                for r in group
            )
            clusters.append(
                InterestCluster(
                    id=ids[c],
                    label=named[c].label,
                    label_source=named[c].source,
                    size=len(group),
                    members=members,
                    top_tags=named[c].top_tags,
                    weekly=series[c].weekly,
                    trend=series[c].trend,
                    recent_share=series[c].recent_share,
                    longrun_share=series[c].longrun_share,
                )
            )
            blobs[ids[c]] = np.asarray(cents[c], dtype=np.float32).tobytes()
        clusters.sort(key=lambda c: (-c.size, c.id))
    built = InterestMap(
        clusters=tuple(clusters),
        lexical=inputs.lexical,
        params=params,
        fingerprint=inputs.fingerprint,
        built_at=_now(),
        notes=len(notes),
        unclustered=tuple(inputs.unclustered),
        messages=tuple(messages),
    )
    _write(store, built, blobs, next_free)
    return built


def _write(store: Store, built: InterestMap, centroids: dict[int, bytes], next_free: int) -> None:
    """Replace the stored map with `built`, in one transaction."""
    clusters = [
        (
            ClusterRow(
                c.id,
                c.label,
                c.label_source,
                c.size,
                c.top_tags,
                c.weekly,
                c.trend,
                c.recent_share,
                c.longrun_share,
            ),  # fmt: skip
            [
                MemberRow(c.id, m.note_id, m.path, m.title, m.date, m.similarity, m.x, m.y)
                for m in c.members
            ],
        )
        for c in built.clusters
    ]
    meta = {
        "built_at": built.built_at,
        "fingerprint": built.fingerprint,
        "lexical": "1" if built.lexical else "0",
        "notes": str(built.notes),
        "params": json.dumps(built.params, ensure_ascii=False, sort_keys=True),
        "unclustered": json.dumps(list(built.unclustered), ensure_ascii=False),
        "messages": json.dumps(list(built.messages), ensure_ascii=False),
        "next_id": str(next_free),
        "notes_digest": store.notes_digest(),
    }
    store.write_map(clusters, centroids, meta)


def _loaded(meta: dict[str, str], clusters: list[ClusterRow], rows: list[MemberRow]) -> InterestMap:
    members: dict[int, list[ClusterMember]] = {}
    for m in rows:
        members.setdefault(m.cluster_id, []).append(
            ClusterMember(m.note_id, m.path, m.title, m.date, m.similarity, m.x, m.y)
        )
    return InterestMap(
        clusters=tuple(
            InterestCluster(
                id=c.id,
                label=c.label,
                label_source=c.label_source,
                size=c.size,
                members=tuple(members.get(c.id, [])),
                top_tags=c.top_tags,
                weekly=c.weekly,
                trend=_trend(c.trend),
                recent_share=c.recent_share,
                longrun_share=c.longrun_share,
            )
            for c in clusters
        ),
        lexical=meta.get("lexical") == "1",
        params=dict(json_or(meta.get("params"), {})),
        fingerprint=meta.get("fingerprint", ""),
        built_at=meta["built_at"],
        notes=int(meta.get("notes", "0") or 0),
        unclustered=tuple(str(p) for p in json_or(meta.get("unclustered"), [])),
        messages=tuple(str(m) for m in json_or(meta.get("messages"), [])),
    )


def _trend(value: str) -> Trend:
    return cast(Trend, value)


def load(store: Store) -> InterestMap | None:
    """The stored map, with a message when the index changed since it was built."""
    from dataclasses import replace

    rows = store.stored_map()
    if rows is None:
        return None
    found = _loaded(*rows)
    if rows[0].get("notes_digest") != store.notes_digest():
        note = "the index changed since this map was built: run `lore clusters build`"
        return replace(found, messages=(*found.messages, note))
    return found
