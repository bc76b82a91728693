"""SQL for the note fields by the LLM (schema m007_note_llm): a summary, key claims and a
category per note, made by lore.index.note_llm and grounded in the note.

A row holds for the note's content hash it was made from (`note_hash`): rows of a note
that changed are kept but not used until they are made again, and rows of deleted notes
are dropped. Writes run inside a transaction the caller opens; reads return plain values.

A note's category is the author's (`category:` in its front matter, a text) when it has
one, else the one the model chose: the same rule for the filter and the facet.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .sqlite import SqliteStore

_CHUNK = 500
_AUTHOR_CATEGORY = (
    "CASE WHEN json_type(n.frontmatter, '$.category') = 'text'"
    " THEN trim(json_extract(n.frontmatter, '$.category')) END"
)
_CURRENT = "l.note_id = n.id AND l.note_hash = n.hash"
# The text the index reads as the summary of a note the model summarised: its summary, then
# each key claim on a line of its own (indexed_summary below, in Python). A 300-character
# summary alone covers less of a long note than head and tail (bench.llm_summary); the
# claims are the model's reading of the rest, grounded in the note like the summary.
_INDEXED = (
    "l.summary || coalesce((SELECT group_concat(char(10) || json_extract(claim.value, '$.text'),"
    " '' ORDER BY claim.key) FROM json_each(l.claims) claim), '')"
)


@dataclass(frozen=True)
class LlmRow:
    """One note's fields as stored."""

    note_id: int
    note_hash: str
    version: str
    model: str
    state: str  # llm | failed
    reason: str | None = None
    summary: str | None = None
    claims: list[dict[str, str]] = field(default_factory=list)
    category: str | None = None
    dropped: list[dict[str, str]] = field(default_factory=list)
    calls: int = 0


def indexed_summary(summary: str, claims: Sequence[dict[str, str]]) -> str:
    """What `_INDEXED` computes in SQL, for a row about to be written."""
    return "".join([summary, *("\n" + claim["text"] for claim in claims)])


@dataclass(frozen=True)
class NoteSource:
    """What the model is given of a note, and what decides its summary."""

    id: int
    path: str
    hash: str
    title: str
    frontmatter: dict[str, Any]
    headings: list[tuple[int, str, int, int]]
    body: str
    summary: str  # notes.summary as it stands


def category_filter_sql() -> str:
    """A WHERE clause (over `notes n`, one parameter: the case-folded category) for the
    notes of one category."""
    return (
        f"lower(coalesce({_AUTHOR_CATEGORY}, (SELECT l.category_key FROM note_llm l"
        f" WHERE {_CURRENT}))) = ?"
    )


# -- reads -------------------------------------------------------------------------------


def pending(store: SqliteStore, version: str, model: str) -> list[int]:
    """Ids (by path) of the notes with text whose fields are missing, were made from
    another content or with another prompt or settings, or failed with another model."""
    return [
        int(nid)
        for (nid,) in store.query(
            "SELECT n.id FROM notes n LEFT JOIN note_llm l ON l.note_id = n.id"
            " WHERE trim(n.body) != '' AND (l.note_id IS NULL OR l.note_hash IS NOT n.hash"
            " OR l.version IS NOT ? OR (l.state = 'failed' AND l.model IS NOT ?))"
            " ORDER BY n.path",
            [version, model],
        )
    ]


def sources(store: SqliteStore, ids: Sequence[int]) -> dict[int, NoteSource]:
    out: dict[int, NoteSource] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        for nid, path, digest, title, fm, headings, body, summary in store.query(
            "SELECT id, path, hash, title, frontmatter, headings, body, summary FROM notes"
            f" WHERE id IN ({marks})",
            chunk,
        ):
            heads = [(int(h[0]), str(h[1]), int(h[2]), int(h[3])) for h in json.loads(headings)]
            out[int(nid)] = NoteSource(
                int(nid), str(path), str(digest), str(title), json.loads(fm), heads, str(body),
                str(summary),
            )  # fmt: skip
    return out


def _row(values: tuple[Any, ...]) -> LlmRow:
    nid, digest, version, model, state, reason, summary, claims, category, dropped, calls = values
    return LlmRow(
        int(nid), str(digest), str(version), str(model), str(state), reason, summary,
        json.loads(claims), category, json.loads(dropped), int(calls),
    )  # fmt: skip


_COLUMNS = (
    "l.note_id, l.note_hash, l.version, l.model, l.state, l.reason, l.summary, l.claims,"
    " l.category, l.dropped, l.calls"
)


def current(store: SqliteStore, ids: Sequence[int]) -> dict[int, LlmRow]:
    """The rows that hold for these notes' content as indexed now."""
    out: dict[int, LlmRow] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        for values in store.query(
            f"SELECT {_COLUMNS} FROM note_llm l JOIN notes n ON {_CURRENT}"
            f" WHERE l.note_id IN ({marks})",
            chunk,
        ):
            row = _row(values)
            out[row.note_id] = row
    return out


@dataclass(frozen=True)
class Shown:
    """What hits, `lore show` and MCP show of a note's fields."""

    claims: list[dict[str, str]]  # text, evidence
    category: str | None  # the author's, else the model's
    llm_summary: str | None  # the model's summary of it, when the index holds it
    model: str | None


def fields_of(store: SqliteStore, ids: Sequence[int]) -> dict[int, Shown]:
    """Fields of these notes that hold for their content now (notes without any are
    left out unless the author gave them a category)."""
    out: dict[int, Shown] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        for nid, claims, category, applied, model in store.query(
            f"SELECT n.id, l.claims, coalesce({_AUTHOR_CATEGORY}, l.category),"
            f" CASE WHEN l.summary IS NOT NULL AND {_INDEXED} = n.summary THEN l.summary END,"
            " l.model"
            f" FROM notes n LEFT JOIN note_llm l ON {_CURRENT} WHERE n.id IN ({marks})"
            f" AND (l.note_id IS NOT NULL OR {_AUTHOR_CATEGORY} IS NOT NULL)",
            chunk,
        ):
            out[int(nid)] = Shown(
                json.loads(claims) if claims else [], category or None, applied,
                str(model) if model else None,
            )  # fmt: skip
    return out


def summaries_behind(store: SqliteStore) -> list[int]:
    """Notes whose current row has a summary the index does not hold yet (after a rebuild
    re-derived the notes from their files)."""
    return [
        int(nid)
        for (nid,) in store.query(
            f"SELECT n.id FROM notes n JOIN note_llm l ON {_CURRENT}"
            f" WHERE l.summary IS NOT NULL AND n.summary IS NOT {_INDEXED} ORDER BY n.id"
        )
    ]


def has_orphans(store: SqliteStore) -> bool:
    return bool(
        store.query("SELECT 1 FROM note_llm WHERE note_id NOT IN (SELECT id FROM notes) LIMIT 1")
    )


def has_texts(store: SqliteStore, note_id: int) -> bool:
    """Does the semantic layer plan texts to embed for this note (lore.index.semantic)?"""
    return bool(store.query("SELECT 1 FROM note_texts WHERE note_id = ? LIMIT 1", [note_id]))


def stats(store: SqliteStore, allow: Sequence[str] | None = None) -> dict[str, Any]:
    """How many notes have fields (by model), failed, or hold fields of an older content
    (of the notes `allow` lets through; None: all)."""
    where, params = store.allow_sql(allow)
    by_state: dict[str, int] = {}
    models: dict[str, int] = {}
    claims = dropped = 0
    for state, model, n, kept, lost in store.query(
        "SELECT l.state, l.model, count(*), sum(json_array_length(l.claims)),"
        f" sum(json_array_length(l.dropped)) FROM note_llm l JOIN notes n ON {_CURRENT}"
        f" WHERE 1{where} GROUP BY l.state, l.model ORDER BY l.state, l.model",
        params,
    ):
        by_state[str(state)] = by_state.get(str(state), 0) + int(n)
        if state == "llm":
            models[str(model)] = int(n)
        claims += int(kept or 0)
        dropped += int(lost or 0)
    stale = int(
        store.query(
            "SELECT count(*) FROM note_llm l JOIN notes n ON n.id = l.note_id"
            f" WHERE l.note_hash IS NOT n.hash{where}",
            params,
        )[0][0]
    )
    return {
        "notes": by_state.get("llm", 0),
        "failed": by_state.get("failed", 0),
        "outdated": stale,
        "claims": claims,
        "dropped": dropped,
        "models": models,
    }


def cache_stats(store: SqliteStore) -> dict[str, Any]:
    """Entries and bytes of the model-answer cache (every task), and per task."""
    tasks = {
        str(task): {"entries": int(n), "bytes": int(size or 0)}
        for task, n, size in store.query(
            "SELECT task, count(*), sum(length(CAST(output AS BLOB))) FROM llm_cache"
            " GROUP BY task ORDER BY task"
        )
    }
    return {
        "entries": sum(t["entries"] for t in tasks.values()),
        "bytes": sum(t["bytes"] for t in tasks.values()),
        "tasks": tasks,
    }


def category_counts(
    store: SqliteStore, allow: Sequence[str] | None = None
) -> list[tuple[str, int]]:
    """Every category (as first written, case aside) with its notes, most first (of the
    notes `allow` lets through; None: all)."""
    where, params = store.allow_sql(allow)
    rows = store.query(
        f"SELECT min(c), count(*) AS k FROM (SELECT coalesce({_AUTHOR_CATEGORY}, l.category)"
        f" AS c FROM notes n LEFT JOIN note_llm l ON {_CURRENT} WHERE 1{where})"
        " WHERE c IS NOT NULL AND c != '' GROUP BY lower(c) ORDER BY k DESC, lower(c)",
        params,
    )
    return [(str(c), int(k)) for c, k in rows]


# -- writes (inside a transaction) -------------------------------------------------------


def write(store: SqliteStore, row: LlmRow) -> None:
    store.db.execute(
        "INSERT OR REPLACE INTO note_llm(note_id, note_hash, version, model, state, reason,"
        " summary, claims, category, category_key, dropped, calls)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            row.note_id,
            row.note_hash,
            row.version,
            row.model,
            row.state,
            row.reason,
            row.summary,
            json.dumps(row.claims, ensure_ascii=False),
            row.category,
            row.category.casefold() if row.category else None,
            json.dumps(row.dropped, ensure_ascii=False),
            row.calls,
        ),
    )


def delete_orphans(store: SqliteStore) -> None:
    store.db.execute("DELETE FROM note_llm WHERE note_id NOT IN (SELECT id FROM notes)")


def set_summary(store: SqliteStore, note_id: int, summary: str) -> None:
    store.db.execute("UPDATE notes SET summary = ? WHERE id = ?", (summary, note_id))


def replace_fts(store: SqliteStore, note_id: int, fields: tuple[str, str, str, str]) -> None:
    store.db.execute("DELETE FROM fts WHERE rowid = ?", (note_id,))
    store.reinsert_fts(note_id, fields)
