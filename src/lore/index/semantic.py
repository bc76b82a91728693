"""After the sync transaction: derive each changed note's tags and its texts to embed.

Kept out of the sync transaction on purpose: it needs no network, but it is a separate,
idempotent step keyed by the note's content hash (`semantic_state`), so a crash between the
two loses nothing and the next sync completes it. Notes whose hash did not change are not
touched; rows of deleted notes are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..derive.passages import PASSAGE_VERSION, NoteText, note_texts
from ..derive.tags import TAGS_VERSION, heuristic_tags, tag_key
from ..store.sqlite import SqliteStore

VERSION = f"tags{TAGS_VERSION}.passages{PASSAGE_VERSION}"
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class NoteSource:
    id: int
    path: str
    title: str
    body: str
    headings: list[tuple[int, str, int, int]]
    summary: str
    tags: list[str]  # every tag: front matter, inline, heuristic, llm (in that order)


def load_sources(store: SqliteStore, ids: list[int]) -> dict[int, NoteSource]:
    """The stored fields of these notes, with all their tags."""
    out: dict[int, NoteSource] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        tags: dict[int, list[str]] = {}
        for nid, tag in store.query(
            f"SELECT note_id, tag FROM tags WHERE note_id IN ({marks}) ORDER BY note_id, position",
            chunk,
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        for nid, tag in store.query(
            f"SELECT note_id, tag FROM derived_tags WHERE note_id IN ({marks})"
            " ORDER BY note_id, origin DESC, position",  # llm before heuristic
            chunk,
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        for nid, path, title, body, headings, summary in store.query(
            f"SELECT id, path, title, body, headings, summary FROM notes WHERE id IN ({marks})",
            chunk,
        ):
            heads = [(int(h[0]), str(h[1]), int(h[2]), int(h[3])) for h in json.loads(headings)]
            unique = list(dict.fromkeys(tags.get(int(nid), [])))
            out[int(nid)] = NoteSource(
                int(nid), str(path), str(title), str(body), heads, str(summary), unique
            )
    return out


def texts_of(source: NoteSource) -> list[NoteText]:
    return note_texts(source.title, source.body, source.headings, source.summary, source.tags)


def _version(tags: bool) -> str:
    return VERSION if tags else f"{VERSION}.notags"


def stale_notes(store: SqliteStore, tags: bool = True) -> list[tuple[int, str]]:
    return [
        (int(nid), str(digest))
        for nid, digest in store.query(
            "SELECT n.id, n.hash FROM notes n LEFT JOIN semantic_state s ON s.note_id = n.id"
            " WHERE s.note_hash IS NOT n.hash OR s.version IS NOT ? ORDER BY n.id",
            [_version(tags)],
        )
    ]


def _orphans(store: SqliteStore) -> bool:
    return bool(
        store.query(
            "SELECT 1 FROM semantic_state WHERE note_id NOT IN (SELECT id FROM notes) LIMIT 1"
        )
    )


def refresh(
    store: SqliteStore,
    *,
    force: bool = False,
    progress: Progress | None = None,
    tags: bool = True,
) -> int:
    """Re-derive tags and texts-to-embed of every note whose content changed (all notes with
    `force`); drop the rows of deleted notes. One transaction. Returns the notes derived.

    `tags=False` skips the heuristic keywords (jieba, ~10 ms a note: 10x the cost of the
    whole full-text sync); turning them on later re-derives every note (its version differs).
    """
    if not force and not stale_notes(store, tags) and not _orphans(store):
        return 0  # nothing to do: take no write lock
    with store.transaction():
        db = store.db
        for table in ("semantic_state", "derived_tags", "note_texts"):
            db.execute(f"DELETE FROM {table} WHERE note_id NOT IN (SELECT id FROM notes)")
        if force:
            db.execute("DELETE FROM semantic_state")
        todo = stale_notes(store, tags)
        if not todo:
            return 0
        author = _author_tags(store, [nid for nid, _ in todo])
        done = 0
        for start in range(0, len(todo), 500):
            chunk = todo[start : start + 500]
            sources = load_sources(store, [nid for nid, _ in chunk])
            for nid, digest in chunk:
                source = sources[nid]
                _derive_one(db, source, author.get(nid, []), digest, tags)
                done += 1
                if progress is not None:
                    progress(done, len(todo), source.path)
    return done


def _author_tags(store: SqliteStore, ids: list[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for nid, tag in store.query(
            f"SELECT note_id, tag FROM tags WHERE note_id IN ({marks}) ORDER BY position", chunk
        ):
            out.setdefault(int(nid), []).append(str(tag))
    return out


def _derive_one(db: Any, source: NoteSource, author: list[str], digest: str, tags: bool) -> None:
    nid = source.id
    db.execute("DELETE FROM derived_tags WHERE note_id = ? AND origin = 'heuristic'", (nid,))
    db.execute("DELETE FROM derived_tags WHERE note_id = ? AND origin = 'llm'", (nid,))
    db.execute("DELETE FROM note_texts WHERE note_id = ?", (nid,))
    author_keys = {tag_key(t) for t in author}
    keywords = heuristic_tags(source.title, source.body) if tags else []
    found = [t for t in keywords if tag_key(t) not in author_keys]
    db.executemany(
        "INSERT OR IGNORE INTO derived_tags(note_id, tag, tag_key, origin, position)"
        " VALUES (?,?,?,?,?)",
        [(nid, t, tag_key(t), "heuristic", i) for i, t in enumerate(found)],
    )
    full = NoteSource(
        nid,
        source.path,
        source.title,
        source.body,
        source.headings,
        source.summary,
        list(dict.fromkeys(author + found)),
    )
    write_texts(db, nid, texts_of(full))
    db.execute(
        "INSERT INTO semantic_state(note_id, note_hash, version) VALUES (?,?,?)"
        " ON CONFLICT(note_id) DO UPDATE SET note_hash = excluded.note_hash,"
        " version = excluded.version",
        (nid, digest, _version(tags)),
    )


def write_texts(db: Any, note_id: int, texts: list[NoteText]) -> None:
    db.execute("DELETE FROM note_texts WHERE note_id = ?", (note_id,))
    db.executemany(
        'INSERT INTO note_texts(note_id, kind, seq, hash, start, "end", heading)'
        " VALUES (?,?,?,?,?,?,?)",
        [(note_id, t.kind, t.seq, t.hash, t.start, t.end, t.heading) for t in texts],
    )


def set_llm_tags(store: SqliteStore, note_id: int, tags: list[str]) -> None:
    """Store a note's LLM tags (inside a transaction) and re-plan its tag text."""
    db = store.db
    db.execute("DELETE FROM derived_tags WHERE note_id = ? AND origin = 'llm'", (note_id,))
    db.executemany(
        "INSERT OR IGNORE INTO derived_tags(note_id, tag, tag_key, origin, position)"
        " VALUES (?,?,?,?,?)",
        [(note_id, t, tag_key(t), "llm", i) for i, t in enumerate(tags) if tag_key(t)],
    )
    source = load_sources(store, [note_id]).get(note_id)
    if source is not None:
        write_texts(db, note_id, texts_of(source))
