"""Table definitions and the ordered list of migrations.

`meta.schema_version` records how many migrations an index has had. Opening an index runs
the missing ones in order, inside one transaction; an index from a newer lore is refused.
Every table here is derived from the vault and can be dropped and rebuilt (`lore rebuild`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# FTS5 column order is part of the format: bm25() weights are given in this order.
FTS_COLUMNS = ("title", "tags", "summary", "body")


def m001_core(db: Any) -> None:
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS meta (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        CREATE TABLE notes (
            id          INTEGER PRIMARY KEY,
            path        TEXT NOT NULL UNIQUE,   -- relative to the vault, POSIX separators
            title       TEXT NOT NULL,
            title_source TEXT NOT NULL,         -- frontmatter | heading | filename
            date        TEXT,                   -- YYYY-MM-DD
            date_source TEXT,                   -- frontmatter | filename | mtime
            mtime_ns    INTEGER NOT NULL,
            size        INTEGER NOT NULL,
            hash        TEXT NOT NULL,          -- sha256 of the bytes indexed
            frontmatter TEXT NOT NULL,          -- JSON object, every key kept
            headings    TEXT NOT NULL,          -- JSON [[level, text, offset, line], ...]
            summary     TEXT NOT NULL,
            body        TEXT NOT NULL,          -- the text after the front matter
            body_line   INTEGER NOT NULL,       -- 1-based line of the file where body starts
            priority    INTEGER,
            status      TEXT,
            truncated   INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX notes_date ON notes(date);
        CREATE TABLE tags (
            note_id INTEGER NOT NULL,
            tag     TEXT NOT NULL,              -- as written
            tag_key TEXT NOT NULL,              -- case-folded, for matching
            origin  TEXT NOT NULL,              -- frontmatter | inline | heuristic | llm
            position INTEGER NOT NULL,          -- order within the note
            PRIMARY KEY (note_id, tag_key, origin)
        ) WITHOUT ROWID;
        CREATE INDEX tags_key ON tags(tag_key);
        CREATE TABLE links (
            note_id    INTEGER NOT NULL,
            target     TEXT NOT NULL,           -- wikilink target as written
            target_key TEXT NOT NULL,           -- case-folded
            PRIMARY KEY (note_id, target_key)
        ) WITHOUT ROWID;
        CREATE INDEX links_target ON links(target_key);
        CREATE TABLE unreadable (
            path     TEXT PRIMARY KEY,          -- a note file the last sync could not read
            mtime_ns INTEGER NOT NULL,
            size     INTEGER NOT NULL,
            reason   TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE term_df (
            term TEXT PRIMARY KEY,              -- a token of the FTS stream
            df   INTEGER NOT NULL               -- notes containing it (any field)
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE fts USING fts5(
            title, tags, summary, body,
            content = '', contentless_delete = 1, tokenize = 'ascii'
        );
        """
    )


MIGRATIONS: list[tuple[str, Callable[[Any], None]]] = [
    ("m001_core", m001_core),
]
SCHEMA_VERSION = len(MIGRATIONS)
