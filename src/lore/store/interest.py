"""SQL for the interest-map tables (schema m004_interest): the last build of
`lore clusters build`, stored whole so `lore clusters show` and `lore report` read it back
exactly as it was built, and the next build can keep cluster ids stable.

    interest_clusters         one row per cluster (label, trend, weekly counts, centroid)
    interest_cluster_members  its notes, most representative first, with 2-D map positions
    interest_meta             parameters, input fingerprint, build time, next free id

Members keep the path, title and date they had when the map was built: the map is a
snapshot, and `notes_digest` says whether the index moved on since. Also here: the rows
the clustering reads (notes, their tags, their title and summary). The same statements
run on both backends (lore.store.sql_base).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .sql_base import SqlBase

if TYPE_CHECKING:  # the rows are made where they are read (lore.store.rows)
    from .interest_rows import ClusterRow, MemberRow, NoteInfo

INTEREST_TABLES = ("interest_clusters", "interest_cluster_members", "interest_meta")
TREND_DATE_SOURCES = ("frontmatter", "filename", "text")  # a note's own dates


def json_or(text: str | None, default: Any) -> Any:
    """The JSON value stored as `text`, or `default` when there is none or it is damaged."""
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


class InterestSql(SqlBase):
    # -- what the clustering reads -----------------------------------------------------------

    def interest_notes(self) -> list[NoteInfo]:
        """Every note, by path, dated only by a date of its own."""
        from .interest_rows import NoteInfo

        rows = self.query("SELECT id, path, title, date, date_source, hash FROM notes")
        notes = [
            NoteInfo(
                int(nid),
                str(path),
                str(title),
                str(date) if date and date_source in TREND_DATE_SOURCES else None,
                str(digest),
            )
            for nid, path, title, date, date_source, digest in rows
        ]
        return sorted(notes, key=lambda n: n.path)

    def all_tags(self) -> list[tuple[int, str, str]]:
        """(note id, tag, origin) of every author and derived tag, by note, tag, origin."""
        return [
            (int(n), str(t), str(o))
            for n, t, o in self.query(
                "SELECT note_id, tag, origin FROM tags UNION ALL"
                " SELECT note_id, tag, origin FROM derived_tags ORDER BY 1, 2, 3"
            )
        ]

    def tag_sets(self) -> dict[int, set[str]]:
        """note id → every tag it carries (author and derived)."""
        tags: dict[int, set[str]] = {}
        for nid, tag in self.query(
            "SELECT note_id, tag FROM tags UNION ALL SELECT note_id, tag FROM derived_tags"
        ):
            tags.setdefault(int(nid), set()).add(str(tag))
        return tags

    def titles_and_summaries(self, ids: Sequence[int]) -> Iterator[tuple[int, str, str]]:
        """(id, title, summary) of these notes, a chunk at a time (in no set order)."""
        for chunk in self.chunks([int(i) for i in ids], 500):
            where, params = self.in_list("id", chunk)
            for nid, title, summary in self.query(
                f"SELECT id, title, summary FROM notes WHERE {where}", params
            ):
                yield int(nid), str(title), str(summary)

    # -- the stored map ----------------------------------------------------------------------

    def notes_digest(self) -> str:
        """A digest of every indexed note's (path, content hash): changes when the index does."""
        import hashlib  # deferred: the interest map asks, a search does not

        digest = hashlib.sha256()
        for path, note_hash in self.query("SELECT path, hash FROM notes ORDER BY path"):
            digest.update(f"{path}\x00{note_hash}\x00".encode())
        return digest.hexdigest()

    def interest_meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.query("SELECT key, value FROM interest_meta")}

    def next_cluster_id(self) -> int:
        value = self.interest_meta().get("next_id", "1")
        return int(value) if value.isdigit() else 1

    def previous_members(self) -> dict[int, set[str]]:
        """cluster id → member paths of the stored map (empty before the first build)."""
        out: dict[int, set[str]] = {}
        for cid, path in self.query("SELECT cluster_id, path FROM interest_cluster_members"):
            out.setdefault(int(cid), set()).add(str(path))
        return out

    def write_map(
        self,
        clusters: Sequence[tuple[ClusterRow, Sequence[MemberRow]]],
        centroids: Mapping[int, bytes],
        meta: Mapping[str, str],
    ) -> None:
        """Replace the stored map (clusters in map order, members most representative
        first), in one transaction."""
        with self.transaction():
            self.empty_tables(*INTEREST_TABLES)
            for i, (c, members) in enumerate(clusters):
                self.execute(
                    "INSERT INTO interest_clusters(id, rank, label, label_source, size, top_tags,"
                    " weekly, trend, recent_share, longrun_share, centroid)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        c.id,
                        i,
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
                self.executemany(
                    "INSERT INTO interest_cluster_members(cluster_id, rank, note_id, path, title,"
                    " date, similarity, x, y) VALUES (?,?,?,?,?,?,?,?,?)",
                    [
                        (c.id, j, m.note_id, m.path, m.title, m.date, m.similarity, m.x, m.y)
                        for j, m in enumerate(members)
                    ],
                )
            self.executemany(
                "INSERT INTO interest_meta(key, value) VALUES (?, ?)", sorted(meta.items())
            )

    def stored_map(self) -> tuple[dict[str, str], list[ClusterRow], list[MemberRow]] | None:
        """(meta, clusters in map order, members in rank order), or None before the first
        `lore clusters build`."""
        from .interest_rows import ClusterRow, MemberRow

        meta = self.interest_meta()
        if "built_at" not in meta:
            return None
        members = [
            MemberRow(
                int(cid),
                int(nid),
                str(path),
                str(title),
                None if date is None else str(date),
                float(sim),
                float(x),
                float(y),
            )  # fmt: skip
            for cid, nid, path, title, date, sim, x, y in self.query(
                "SELECT cluster_id, note_id, path, title, date, similarity, x, y"
                " FROM interest_cluster_members ORDER BY cluster_id, rank"
            )
        ]
        clusters = [
            ClusterRow(
                id=int(cid),
                label=str(label),
                label_source=str(source),
                size=int(size),
                top_tags=tuple(str(t) for t in json_or(top, [])),
                weekly=tuple((str(w), int(n)) for w, n in json_or(weekly, [])),
                trend=str(trend),
                recent_share=float(recent),
                longrun_share=float(longrun),
            )
            for cid, label, source, size, top, weekly, trend, recent, longrun in self.query(
                "SELECT id, label, label_source, size, top_tags, weekly, trend, recent_share,"
                " longrun_share FROM interest_clusters ORDER BY rank, id"
            )
        ]
        return meta, clusters, members
