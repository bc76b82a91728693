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
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, install_hint
from ..store import interest as stored
from .model import ClusterMember, InterestCluster, InterestMap
from .settings import InterestSettings

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.sqlite import SqliteStore
    from .cluster import Labels
    from .vectors import NoteInfo

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
    store: SqliteStore,
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
    next_free = stored.next_id(store)
    if not notes:
        if not inputs.unclustered:
            messages.append("no notes to cluster: the index is empty (run `lore index`)")
    else:
        x = inputs.matrix
        before = stored.previous_members(store)
        prior = stored.get_meta(store)
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
    stored.write_map(
        store,
        built,
        blobs,
        next_free=next_free,
        extra={"notes_digest": stored.notes_digest(store)},
    )
    return built


def load(store: SqliteStore) -> InterestMap | None:
    """The stored map, with a message when the index changed since it was built."""
    from dataclasses import replace

    found = stored.load_map(store)
    if found is None:
        return None
    if stored.get_meta(store).get("notes_digest") != stored.notes_digest(store):
        note = "the index changed since this map was built: run `lore clusters build`"
        return replace(found, messages=(*found.messages, note))
    return found
