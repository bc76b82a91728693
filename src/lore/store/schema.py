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


def m003_semantic(db: Any) -> None:
    """Tags derived from the text, the texts to embed per note, their vectors' keys, and the
    cache of model answers. Vectors themselves live in a sqlite-vec table (`vec_items`) made
    on first use, once the dimension is known (see lore.index.embed)."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS semantic_state (
            note_id   INTEGER PRIMARY KEY,      -- a note whose derived rows below are current
            note_hash TEXT NOT NULL,            -- notes.hash they were derived from
            version   TEXT NOT NULL             -- derivation version (tags + passage split)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS derived_tags (
            note_id  INTEGER NOT NULL,
            tag      TEXT NOT NULL,
            tag_key  TEXT NOT NULL,             -- case-folded, for matching
            origin   TEXT NOT NULL,             -- heuristic | llm
            position INTEGER NOT NULL,
            PRIMARY KEY (note_id, tag_key, origin)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS derived_tags_key ON derived_tags(tag_key);
        CREATE TABLE IF NOT EXISTS note_texts (
            note_id INTEGER NOT NULL,
            kind    TEXT NOT NULL,              -- summary | tags | passage
            seq     INTEGER NOT NULL,
            hash    TEXT NOT NULL,              -- sha256 of the text embedded
            start   INTEGER NOT NULL,           -- passage span in the body (chars); 0, 0 else
            "end"   INTEGER NOT NULL,
            heading TEXT,                       -- the heading a passage sits under
            PRIMARY KEY (note_id, kind, seq)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS note_texts_hash ON note_texts(hash);
        CREATE TABLE IF NOT EXISTS vec_texts (
            id       INTEGER PRIMARY KEY,       -- rowid of the vector in vec_items
            hash     TEXT NOT NULL,
            identity TEXT NOT NULL,             -- provider:model the vector came from
            space    TEXT NOT NULL,             -- doc (summary, passages) | tags
            UNIQUE (hash, identity, space)
        );
        CREATE TABLE IF NOT EXISTS llm_cache (
            key            TEXT PRIMARY KEY,    -- sha256 of (task, input hash, model, version)
            task           TEXT NOT NULL,       -- query_plan | tags | digest | note*
            model          TEXT NOT NULL,
            prompt_version TEXT NOT NULL,
            input_hash     TEXT NOT NULL,
            output         TEXT NOT NULL        -- the validated JSON answer
        ) WITHOUT ROWID;
        """
    )


def m002_memory(db: Any) -> None:
    """Agent memory (issue 3): entity cards, their aliases, relation edges, mentions and the
    entries of daily notes and of the core file. Every row is derived from one note (keyed
    by note_id) except mentions, which also depend on the vault's alias table."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS entity_defs (
            note_id     INTEGER NOT NULL,
            seq         INTEGER NOT NULL,       -- order within the note
            name        TEXT NOT NULL,
            name_key    TEXT NOT NULL,          -- folded, punctuation-free: the entity's key
            type        TEXT,
            kind        TEXT NOT NULL,          -- file (entities/X.md) | section (### X (Type))
            line        INTEGER NOT NULL,
            definition  TEXT NOT NULL,
            tags        TEXT NOT NULL,          -- JSON list
            last_activity     TEXT,             -- YYYY-MM-DD as written on the card
            last_activity_raw TEXT,             -- as written (kept when it is not a date)
            status      TEXT,
            pinned      INTEGER NOT NULL,
            events      TEXT NOT NULL,          -- JSON [[date or null, text, line], ...]
            problems    TEXT NOT NULL,          -- JSON list of one-line problems
            PRIMARY KEY (note_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entity_defs_name ON entity_defs(name_key);
        CREATE TABLE IF NOT EXISTS entity_aliases (
            note_id   INTEGER NOT NULL,
            seq       INTEGER NOT NULL,         -- the entity_defs row it belongs to
            alias     TEXT NOT NULL,            -- as written
            alias_key TEXT NOT NULL,
            is_name   INTEGER NOT NULL,
            position  INTEGER NOT NULL,         -- order as written
            PRIMARY KEY (note_id, seq, alias_key)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entity_aliases_key ON entity_aliases(alias_key);
        CREATE TABLE IF NOT EXISTS entity_edges (
            note_id    INTEGER NOT NULL,
            seq        INTEGER NOT NULL,
            source     TEXT NOT NULL,           -- entity name; '' when the note itself links
            relation   TEXT NOT NULL,
            target     TEXT NOT NULL,           -- as written
            target_key TEXT NOT NULL,
            line       INTEGER NOT NULL,
            kind       TEXT NOT NULL,           -- relation | wikilink
            PRIMARY KEY (note_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entity_edges_target ON entity_edges(target_key);
        CREATE TABLE IF NOT EXISTS entity_mentions (
            note_id    INTEGER NOT NULL,
            entity_key TEXT NOT NULL,
            count      INTEGER NOT NULL,
            line       INTEGER NOT NULL,        -- first mention
            PRIMARY KEY (note_id, entity_key)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS entity_mentions_entity ON entity_mentions(entity_key);
        CREATE TABLE IF NOT EXISTS memory_entries (
            note_id  INTEGER NOT NULL,
            seq      INTEGER NOT NULL,
            kind     TEXT NOT NULL,             -- remember | digest | section | item |
                                                -- conclusion | open | next
            anchor   TEXT NOT NULL,             -- '' when the entry has none
            heading  TEXT NOT NULL,
            line     INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            text_line INTEGER NOT NULL,         -- the line `text` starts on
            date     TEXT,
            time     TEXT,
            status   TEXT,                      -- claimed | verified | done | open | NULL
            trust    TEXT,                      -- confirmed | inferred | imported | NULL
            source   TEXT,
            target   TEXT,                      -- a core conclusion's pointer path#anchor
            entities TEXT NOT NULL,             -- JSON list
            text     TEXT NOT NULL,
            PRIMARY KEY (note_id, seq)
        ) WITHOUT ROWID;
        """
    )
    # An index upgraded from schema 1 already holds notes: the next sync derives their
    # memory rows in full (lore.memory.derive reads and clears this flag).
    db.execute(
        "INSERT OR REPLACE INTO meta (key, value) SELECT 'memory_stale', '1'"
        " WHERE EXISTS (SELECT 1 FROM notes)"
    )


def m004_interest(db: Any) -> None:
    """The interest map (issue 5): the last `lore clusters build`, kept whole so reports
    reuse it and the next build keeps cluster ids stable (see lore.store.interest). A
    snapshot: members keep the path, title and date they had when it was built."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS interest_clusters (
            id            INTEGER PRIMARY KEY,  -- stable across rebuilds, never reused
            rank          INTEGER NOT NULL,     -- order in the map: largest first
            label         TEXT NOT NULL,
            label_source  TEXT NOT NULL,        -- tags | titles | llm
            size          INTEGER NOT NULL,
            top_tags      TEXT NOT NULL,        -- JSON list
            weekly        TEXT NOT NULL,        -- JSON [[ISO week, notes], ...] oldest first
            trend         TEXT NOT NULL,        -- heating | cooling | steady | new
            recent_share  REAL NOT NULL,
            longrun_share REAL NOT NULL,
            centroid      BLOB NOT NULL         -- float32, L2-normalised, original space
        );
        CREATE TABLE IF NOT EXISTS interest_cluster_members (
            cluster_id INTEGER NOT NULL,
            rank       INTEGER NOT NULL,        -- most representative (closest) first
            note_id    INTEGER NOT NULL,
            path       TEXT NOT NULL,
            title      TEXT NOT NULL,
            date       TEXT,                    -- YYYY-MM-DD; NULL without a date of its own
            similarity REAL NOT NULL,           -- cosine to the centroid
            x          REAL NOT NULL,           -- 2-D map position (PCA)
            y          REAL NOT NULL,
            PRIMARY KEY (cluster_id, rank)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS interest_members_note ON interest_cluster_members(note_id);
        CREATE TABLE IF NOT EXISTS interest_meta (
            key   TEXT PRIMARY KEY,             -- params, fingerprint, built_at, next_id, ...
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        """
    )


def m005_tokens(db: Any) -> None:
    """Access tokens of `lore serve` (issue 16). Not derived from the vault: `lore rebuild`
    keeps them; deleting the index file forgets them. Only a hash of each secret is kept."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS tokens (
            name       TEXT PRIMARY KEY,        -- chosen by the owner: `lore token add NAME`
            hash       TEXT NOT NULL UNIQUE,    -- sha256 of the secret, hex
            principal  TEXT,                    -- [access] principal; NULL: sees everything
            can_write  INTEGER NOT NULL,        -- 1: may use the write endpoints and tools
            created    TEXT NOT NULL,           -- ISO time
            revoked    TEXT,                    -- ISO time; NULL while valid
            last_used  TEXT                     -- ISO time of the last request, to the minute
        );
        """
    )


def m007_note_llm(db: Any) -> None:
    """Note fields by the LLM (issue 19): a summary, key claims and a category per note,
    grounded in the note. Derived from the note's text by the model answers cached in
    `llm_cache`, so the rows can be dropped and made again without a call; never written
    into the note files. A row holds for the note's content hash it was made from."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS note_llm (
            note_id      INTEGER PRIMARY KEY,
            note_hash    TEXT NOT NULL,         -- notes.hash the fields were made from
            version      TEXT NOT NULL,         -- prompt version + the settings it was asked with
            model        TEXT NOT NULL,         -- provider:model that answered
            state        TEXT NOT NULL,         -- llm | failed (the heuristic fields are used)
            reason       TEXT,                  -- why it failed
            summary      TEXT,                  -- grounded summary; NULL: none (or the author's)
            claims       TEXT NOT NULL,         -- JSON [{"text", "evidence"}], grounded
            category     TEXT,                  -- one of [lore] categories, or NULL
            category_key TEXT,                  -- case-folded, for --category
            dropped      TEXT NOT NULL,         -- JSON [{"what", "text", "why"}]: not grounded
            calls        INTEGER NOT NULL       -- model answers it took (1, or parts + 1)
        );
        CREATE INDEX IF NOT EXISTS note_llm_category ON note_llm(category_key);
        """
    )


def m008_pinyin(db: Any) -> None:
    """Pinyin of note names and tags (issue 17; lore.derive.pinyin): one row per name with
    its units, and the candidate keys a query word is looked up by (as a prefix). Filled
    by the next sync, which re-derives an index of an older derivation version."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS name_pinyin (
            note_id INTEGER NOT NULL,
            seq     INTEGER NOT NULL,           -- order within the note
            kind    TEXT NOT NULL,              -- name (title, alias, file name, entity) | tag
            name    TEXT NOT NULL,              -- as written
            units   TEXT NOT NULL,              -- "zhang=张 san=三" (lore.derive.pinyin)
            PRIMARY KEY (note_id, seq)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS pinyin_keys (
            key     TEXT NOT NULL,              -- joined pinyin or initials of a name suffix
            note_id INTEGER NOT NULL,
            PRIMARY KEY (key, note_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS pinyin_keys_note ON pinyin_keys(note_id);
        """
    )


def m009_sections(db: Any) -> None:
    """Each note's body in parts (lore.derive.sections), ranked by BM25 on their own so a
    long note is found by the one part that holds the detail. Filled by the sync: the
    tokenizer version that came with this table makes the next sync re-derive every note."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS sections (
            id      INTEGER PRIMARY KEY,        -- rowid of the part in fts_sections
            note_id INTEGER NOT NULL,
            start   INTEGER NOT NULL,           -- span in the body (chars)
            "end"   INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS sections_note ON sections(note_id);
        CREATE VIRTUAL TABLE IF NOT EXISTS fts_sections USING fts5(
            body, content = '', contentless_delete = 1, tokenize = 'ascii'
        );
        """
    )


MIGRATIONS: list[tuple[str, Callable[[Any], None]]] = [
    ("m001_core", m001_core),
    ("m002_memory", m002_memory),
    ("m003_semantic", m003_semantic),
    ("m004_interest", m004_interest),
    ("m005_tokens", m005_tokens),
    # The names are labels only (m006 was never used): an index's schema version is how
    # many entries of this list it has had, so a new migration is appended at the end.
    ("m007_note_llm", m007_note_llm),
    ("m008_pinyin", m008_pinyin),
    ("m009_sections", m009_sections),
]
SCHEMA_VERSION = len(MIGRATIONS)
