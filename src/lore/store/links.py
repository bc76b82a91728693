"""SQL for the wikilink graph: a note's links, and the links that may point at a note
(lore.memory.links resolves them). The `links` table is written by the
sync (one row per distinct `[[target]]` of a note, `target_key` its case-fold). Both
backends share these statements (lore.store.sql_base)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .sql_base import SqlBase


def outgoing(store: SqlBase, path: str) -> list[str]:
    """The wikilink targets of the note at `path`, as written, sorted."""
    return [
        str(t)
        for (t,) in store.query(
            "SELECT l.target FROM links l JOIN notes n ON n.id = l.note_id"
            " WHERE n.path = ? ORDER BY l.target",
            [path],
        )
    ]


def links_containing(
    store: SqlBase, needles: Iterable[str], allow: Sequence[str] | None
) -> list[tuple[str, str, str | None, str]]:
    """(source path, source title, source date, target) of every link whose case-folded
    target contains one of `needles`, from the notes `allow` lets through; by path."""
    words = sorted({n for n in needles if n})
    if not words:
        return []
    where, params = store.allow_sql(allow)
    match = " OR ".join(store.CONTAINS.format("l.target_key") for _ in words)
    rows = store.query(
        "SELECT n.path, n.title, n.date, l.target FROM links l JOIN notes n ON n.id = l.note_id"
        f" WHERE ({match}){where} ORDER BY n.path, l.target",
        [*words, *params],
    )
    return [(str(p), str(t), None if d is None else str(d), str(g)) for p, t, d, g in rows]
