"""SQL for the note fields by the LLM (schema m007_note_llm): a summary, key claims and a
category per note, made by lore.index.note_llm and grounded in the note.

A row holds for the note's content hash it was made from (`note_hash`): rows of a note
that changed are kept but not used until they are made again, and rows of deleted notes
are dropped. Writes run inside a transaction the caller opens; reads return plain values.

A note's category is the author's (`category:` in its front matter, a text) when it has
one, else the one the model chose: the same rule for the filter and the facet
(lore.store.sql_base.SqlBase.category_match). The statements are shared by both backends;
what reads JSON is the backend's own fragment (AUTHOR_CATEGORY, CLAIM_LINES, JSON_LENGTH).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .sql_base import SqlBase, path_glob

if TYPE_CHECKING:  # the sync's rows, made where they are read (lore.store.rows)
    from .note_llm_rows import LlmRow, NoteSource

_CURRENT = "l.note_id = n.id AND l.note_hash = n.hash"


# The text the index reads as the summary of a note the model summarised: its summary, then
# each key claim on a line of its own (indexed_summary below, in Python). A 300-character
# summary alone covers less of a long note than head and tail (bench.llm_summary); the
# claims are the model's reading of the rest, grounded in the note like the summary.
def _indexed(store: SqlBase) -> str:
    return f"l.summary || {store.CLAIM_LINES}"


def indexed_summary(summary: str, claims: Sequence[dict[str, str]]) -> str:
    """What `_indexed` computes in SQL, for a row about to be written."""
    return "".join([summary, *("\n" + claim["text"] for claim in claims)])


# -- reads -------------------------------------------------------------------------------


def pending(store: SqlBase, version: str, model: str) -> list[int]:
    """Ids (by path) of the notes with text whose fields are missing, were made from
    another content or with another prompt or settings, or failed with another model."""
    return [
        int(nid)
        for (nid,) in store.query(
            "SELECT n.id FROM notes n LEFT JOIN note_llm l ON l.note_id = n.id"
            " WHERE trim(n.body) != '' AND (l.note_id IS NULL"
            " OR l.note_hash IS DISTINCT FROM n.hash OR l.version IS DISTINCT FROM ?"
            " OR (l.state = 'failed' AND l.model IS DISTINCT FROM ?))"
            " ORDER BY n.path",
            [version, model],
        )
    ]


def sources(store: SqlBase, ids: Sequence[int]) -> dict[int, NoteSource]:
    from .note_llm_rows import NoteSource

    out: dict[int, NoteSource] = {}
    for chunk in store.chunks(ids):
        among, params = store.in_ids("id", chunk)
        for nid, path, digest, title, fm, headings, body, summary in store.query(
            f"SELECT id, path, hash, title, frontmatter, headings, body, summary FROM notes"
            f" WHERE {among}",
            params,
        ):
            heads = [(int(h[0]), str(h[1]), int(h[2]), int(h[3])) for h in json.loads(headings)]
            out[int(nid)] = NoteSource(
                int(nid), str(path), str(digest), str(title), json.loads(fm), heads, str(body),
                str(summary),
            )  # fmt: skip
    return out


def _row(values: tuple[Any, ...]) -> LlmRow:
    from .note_llm_rows import LlmRow

    nid, digest, version, model, state, reason, summary, claims, category, dropped, calls = values
    return LlmRow(
        int(nid), str(digest), str(version), str(model), str(state), reason, summary,
        json.loads(claims), category, json.loads(dropped), int(calls),
    )  # fmt: skip


_COLUMNS = (
    "l.note_id, l.note_hash, l.version, l.model, l.state, l.reason, l.summary, l.claims,"
    " l.category, l.dropped, l.calls"
)


def current(store: SqlBase, ids: Sequence[int]) -> dict[int, LlmRow]:
    """The rows that hold for these notes' content as indexed now."""
    out: dict[int, LlmRow] = {}
    for chunk in store.chunks(ids):
        among, params = store.in_ids("l.note_id", chunk)
        for values in store.query(
            f"SELECT {_COLUMNS} FROM note_llm l JOIN notes n ON {_CURRENT} WHERE {among}",
            params,
        ):
            row = _row(values)
            out[row.note_id] = row
    return out


class Shown(NamedTuple):
    """What hits, `lore show` and MCP show of a note's fields (a NamedTuple: every search
    reads these, and the class costs a cold process less than a dataclass: lore.store.rows)."""

    claims: list[dict[str, str]]  # text, evidence
    category: str | None  # the author's, else the model's
    llm_summary: str | None  # the model's summary of it, when the index holds it
    model: str | None


def fields_of(store: SqlBase, ids: Sequence[int]) -> dict[int, Shown]:
    """Fields of these notes that hold for their content now (notes without any are
    left out unless the author gave them a category)."""
    out: dict[int, Shown] = {}
    author = store.AUTHOR_CATEGORY
    for chunk in store.chunks(ids):
        among, params = store.in_ids("n.id", chunk)
        for nid, claims, category, applied, model in store.query(
            f"SELECT n.id, l.claims, coalesce({author}, l.category), CASE WHEN l.summary"
            f" IS NOT NULL AND {_indexed(store)} = n.summary THEN l.summary END, l.model"
            f" FROM notes n LEFT JOIN note_llm l ON {_CURRENT} WHERE {among}"
            f" AND (l.note_id IS NOT NULL OR {author} IS NOT NULL)",
            params,
        ):
            out[int(nid)] = Shown(
                json.loads(claims) if claims else [], category or None, applied,
                str(model) if model else None,
            )  # fmt: skip
    return out


def summaries_behind(store: SqlBase) -> list[int]:
    """Notes whose current row has a summary the index does not hold yet (after a rebuild
    re-derived the notes from their files)."""
    return [
        int(nid)
        for (nid,) in store.query(
            f"SELECT n.id FROM notes n JOIN note_llm l ON {_CURRENT}"
            " WHERE l.summary IS NOT NULL"
            f" AND n.summary IS DISTINCT FROM {_indexed(store)} ORDER BY n.id"
        )
    ]


def summarised(store: SqlBase) -> list[int]:
    """Notes whose current row has a summary by the LLM."""
    return [
        int(nid)
        for (nid,) in store.query(
            f"SELECT n.id FROM notes n JOIN note_llm l ON {_CURRENT}"
            " WHERE l.summary IS NOT NULL ORDER BY n.id"
        )
    ]


def has_orphans(store: SqlBase) -> bool:
    return bool(
        store.query("SELECT 1 FROM note_llm WHERE note_id NOT IN (SELECT id FROM notes) LIMIT 1")
    )


def has_texts(store: SqlBase, note_id: int) -> bool:
    """Does the semantic layer plan texts to embed for this note (lore.index.semantic)?"""
    return bool(store.query("SELECT 1 FROM note_texts WHERE note_id = ? LIMIT 1", [note_id]))


def stats(store: SqlBase, allow: Sequence[str] | None = None) -> dict[str, Any]:
    """How many notes have fields (by model), failed, or hold fields of an older content
    (of the notes `allow` lets through; None: all)."""
    where, params = store.allow_sql(allow)
    by_state: dict[str, int] = {}
    models: dict[str, int] = {}
    claims = dropped = 0
    length = store.JSON_LENGTH
    for state, model, n, kept, lost in store.query(
        f"SELECT l.state, l.model, count(*), sum({length.format('l.claims')}),"
        f" sum({length.format('l.dropped')}) FROM note_llm l JOIN notes n ON {_CURRENT}"
        f" WHERE {store.TRUE}{where} GROUP BY l.state, l.model ORDER BY l.state, l.model",
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
            f" WHERE l.note_hash IS DISTINCT FROM n.hash{where}",
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


def cache_stats(store: SqlBase) -> dict[str, Any]:
    """Entries and bytes of the model-answer cache (every task), and per task."""
    tasks = {
        str(task): {"entries": int(n), "bytes": int(size or 0)}
        for task, n, size in store.query(
            f"SELECT task, count(*), sum({store.BYTE_LENGTH.format('output')}) FROM llm_cache"
            " GROUP BY task ORDER BY task"
        )
    }
    return {
        "entries": sum(t["entries"] for t in tasks.values()),
        "bytes": sum(t["bytes"] for t in tasks.values()),
        "tasks": tasks,
    }


def category_counts(store: SqlBase, allow: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """Every category (as first written, case aside) with its notes, most first (of the
    notes `allow` lets through; None: all)."""
    where, params = store.allow_sql(allow)
    rows = store.query(
        f"SELECT min(c), count(*) AS k FROM (SELECT coalesce({store.AUTHOR_CATEGORY},"
        f" l.category) AS c FROM notes n LEFT JOIN note_llm l ON {_CURRENT}"
        f" WHERE {store.TRUE}{where}) AS categories"
        " WHERE c IS NOT NULL AND c != '' GROUP BY lower(c) ORDER BY k DESC, lower(c)",
        params,
    )
    return [(str(c), int(k)) for c, k in rows]


# -- writes (inside a transaction) -------------------------------------------------------

_WRITTEN = (
    "note_id, note_hash, version, model, state, reason, summary, claims, category,"
    " category_key, dropped, calls"
)


def write(store: SqlBase, row: LlmRow) -> None:
    store.execute(
        f"INSERT INTO note_llm({_WRITTEN}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(note_id) DO UPDATE SET "
        + ", ".join(f"{c} = excluded.{c}" for c in _WRITTEN.split(", ")[1:]),
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


def states_of(store: SqlBase, paths: Sequence[str]) -> dict[str, str]:
    """path → the state of its fields ("llm", "failed", or "pending": none yet)."""
    out: dict[str, str] = {}
    for chunk in store.chunks(list(paths)):
        clause, params = store.in_list("n.path", chunk)
        rows = store.query(
            "SELECT n.path, l.state FROM notes n LEFT JOIN note_llm l ON l.note_id = n.id"
            f" WHERE {clause}",
            params,
        )
        out.update({str(p): str(state or "pending") for p, state in rows})
    return out


def forget_failures(store: SqlBase, path: str | None = None) -> list[str]:
    """Drop the rows of the notes whose fields failed (under `path`, a glob or a folder,
    when given), so the next sync asks the model again; their paths, sorted."""
    where, params = store.TRUE, []
    if path:
        clause, param = store.glob_match("n.path", path_glob(path))
        where, params = clause, [param]
    failed = f"SELECT n.id FROM notes n WHERE {where}"
    paths = [
        str(p)
        for (p,) in store.query(
            f"SELECT n.path FROM note_llm l JOIN notes n ON n.id = l.note_id"
            f" WHERE l.state = 'failed' AND n.id IN ({failed}) ORDER BY n.path",
            params,
        )
    ]
    if paths:
        store.execute(
            f"DELETE FROM note_llm WHERE state = 'failed' AND note_id IN ({failed})", params
        )
    return paths


def delete_orphans(store: SqlBase) -> None:
    store.execute("DELETE FROM note_llm WHERE note_id NOT IN (SELECT id FROM notes)")


def set_summary(store: SqlBase, note_id: int, summary: str) -> None:
    store.execute("UPDATE notes SET summary = ? WHERE id = ?", (summary, note_id))
