"""SQL for what one caller may see of the index as a whole: counts and the tag list,
limited by its access rules (SQLite GLOB patterns, applied in the WHERE clause). `allow`
None means every note (the owner)."""

from __future__ import annotations

from collections.abc import Sequence

from .memory import allow_sql
from .sqlite import SqliteStore


def tag_counts(store: SqliteStore, allow: Sequence[str] | None) -> list[tuple[str, int]]:
    """Every tag (as first written, by case-folded key) with how many notes carry it,
    most used first, ties by tag."""
    where, params = allow_sql(allow)
    rows = store.query(
        "SELECT min(t.tag), count(DISTINCT t.note_id) AS n FROM tags t"
        f" JOIN notes n ON n.id = t.note_id WHERE 1{where}"
        " GROUP BY t.tag_key ORDER BY n DESC, t.tag_key",
        params,
    )
    return [(str(tag), int(n)) for tag, n in rows]


def counts(store: SqliteStore, allow: Sequence[str] | None) -> dict[str, int]:
    """notes, distinct tags and links of the notes `allow` lets through."""
    where, params = allow_sql(allow)
    notes = store.query(f"SELECT count(*) FROM notes n WHERE 1{where}", params)[0][0]
    tags = store.query(
        "SELECT count(DISTINCT t.tag_key) FROM tags t JOIN notes n ON n.id = t.note_id"
        f" WHERE 1{where}",
        params,
    )[0][0]
    links = store.query(
        f"SELECT count(*) FROM links l JOIN notes n ON n.id = l.note_id WHERE 1{where}", params
    )[0][0]
    return {"notes": int(notes), "tags": int(tags), "links": int(links)}


def indexed_hash(store: SqliteStore, path: str) -> str | None:
    """The content hash the index holds for the note at `path` (None: not indexed)."""
    rows = store.query("SELECT hash FROM notes WHERE path = ?", [path])
    return str(rows[0][0]) if rows else None
