"""SQL for the interest-map tables (schema m004_interest): the last build of
`lore clusters build`, stored whole so `lore clusters show` and `lore report` read it back
exactly as it was built, and the next build can keep cluster ids stable.

    interest_clusters         one row per cluster (label, trend, weekly counts, centroid)
    interest_cluster_members  its notes, most representative first, with 2-D map positions
    interest_meta             parameters, input fingerprint, build time, next free id

Members keep the path, title and date they had when the map was built: the map is a
snapshot, and `notes_digest` says whether the index moved on since.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..interest.model import ClusterMember, InterestCluster, InterestMap
from .sqlite import SqliteStore

INTEREST_TABLES = ("interest_clusters", "interest_cluster_members", "interest_meta")


def notes_digest(store: SqliteStore) -> str:
    """A digest of every indexed note's (path, content hash): changes when the index does."""
    import hashlib

    digest = hashlib.sha256()
    for path, note_hash in store.query("SELECT path, hash FROM notes ORDER BY path"):
        digest.update(f"{path}\x00{note_hash}\x00".encode())
    return digest.hexdigest()


def get_meta(store: SqliteStore) -> dict[str, str]:
    return {str(k): str(v) for k, v in store.query("SELECT key, value FROM interest_meta")}


def next_id(store: SqliteStore) -> int:
    value = get_meta(store).get("next_id", "1")
    return int(value) if value.isdigit() else 1


def previous_members(store: SqliteStore) -> dict[int, set[str]]:
    """cluster id → member paths of the stored map (empty before the first build)."""
    out: dict[int, set[str]] = {}
    for cid, path in store.query("SELECT cluster_id, path FROM interest_cluster_members"):
        out.setdefault(int(cid), set()).add(str(path))
    return out


def write_map(
    store: SqliteStore,
    interest: InterestMap,
    centroids: Mapping[int, bytes],
    *,
    next_free: int,
    extra: Mapping[str, str],
) -> None:
    """Replace the stored map with `interest`, in one transaction."""
    with store.transaction():
        db = store.db
        for table in INTEREST_TABLES:
            db.execute(f"DELETE FROM {table}")
        for rank, c in enumerate(interest.clusters):
            db.execute(
                "INSERT INTO interest_clusters(id, rank, label, label_source, size, top_tags,"
                " weekly, trend, recent_share, longrun_share, centroid)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    c.id,
                    rank,
                    c.label,
                    c.label_source,
                    c.size,
                    json.dumps(list(c.top_tags), ensure_ascii=False),
                    json.dumps([list(w) for w in c.weekly]),
                    c.trend,
                    c.recent_share,
                    c.longrun_share,
                    centroids.get(c.id, b""),
                ),
            )
            db.executemany(
                "INSERT INTO interest_cluster_members(cluster_id, rank, note_id, path, title,"
                " date, similarity, x, y) VALUES (?,?,?,?,?,?,?,?,?)",
                [
                    (c.id, i, m.note_id, m.path, m.title, m.date, m.similarity, m.x, m.y)
                    for i, m in enumerate(c.members)
                ],
            )
        meta = {
            "built_at": interest.built_at,
            "fingerprint": interest.fingerprint,
            "lexical": "1" if interest.lexical else "0",
            "notes": str(interest.notes),
            "params": json.dumps(interest.params, ensure_ascii=False, sort_keys=True),
            "unclustered": json.dumps(list(interest.unclustered), ensure_ascii=False),
            "messages": json.dumps(list(interest.messages), ensure_ascii=False),
            "next_id": str(next_free),
            **extra,
        }
        db.executemany("INSERT INTO interest_meta(key, value) VALUES (?, ?)", sorted(meta.items()))


def _json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


def load_map(store: SqliteStore) -> InterestMap | None:
    """The stored map, or None before the first `lore clusters build`."""
    meta = get_meta(store)
    if "built_at" not in meta:
        return None
    members: dict[int, list[ClusterMember]] = {}
    for cid, nid, path, title, date, sim, x, y in store.query(
        "SELECT cluster_id, note_id, path, title, date, similarity, x, y"
        " FROM interest_cluster_members ORDER BY cluster_id, rank"
    ):
        members.setdefault(int(cid), []).append(
            ClusterMember(
                int(nid),
                str(path),
                str(title),
                None if date is None else str(date),
                float(sim),
                float(x),
                float(y),
            )
        )
    clusters = tuple(
        InterestCluster(
            id=int(cid),
            label=str(label),
            label_source=str(source),
            size=int(size),
            members=tuple(members.get(int(cid), [])),
            top_tags=tuple(str(t) for t in _json(top, [])),
            weekly=tuple((str(w), int(n)) for w, n in _json(weekly, [])),
            trend=trend,
            recent_share=float(recent),
            longrun_share=float(longrun),
        )
        for cid, label, source, size, top, weekly, trend, recent, longrun in store.query(
            "SELECT id, label, label_source, size, top_tags, weekly, trend, recent_share,"
            " longrun_share FROM interest_clusters ORDER BY rank, id"
        )
    )
    return InterestMap(
        clusters=clusters,
        lexical=meta.get("lexical") == "1",
        params=dict(_json(meta.get("params"), {})),
        fingerprint=meta.get("fingerprint", ""),
        built_at=meta["built_at"],
        notes=int(meta.get("notes", "0") or 0),
        unclustered=tuple(str(p) for p in _json(meta.get("unclustered"), [])),
        messages=tuple(str(m) for m in _json(meta.get("messages"), [])),
    )


def centroid_blobs(store: SqliteStore) -> dict[int, bytes]:
    """cluster id → its centroid (float32 bytes, L2-normalised, original space)."""
    return {
        int(cid): bytes(blob)
        for cid, blob in store.query("SELECT id, centroid FROM interest_clusters")
    }
