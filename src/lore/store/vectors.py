"""The semantic layer's tables on both backends (lore.store.sql_base): derived tags, the
texts each note wants embedded, their vectors' keys (`vec_texts`), and the cache of model
answers. The vectors themselves are each backend's: `vec_items`, one float32 vector per
vec_texts.id in a space (doc for summaries and passages, tags for tag texts), made on first
use once the dimension is known (sqlite_vectors: sqlite-vec; pg_vectors: pgvector).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .rows import Headings
from .sql_base import SqlBase

if TYPE_CHECKING:
    from .base import PlannedText
    from .vector_rows import NoteSource, TextSpan

_UNUSED = (
    "SELECT v.id FROM vec_texts v WHERE NOT EXISTS (SELECT 1 FROM note_texts t"
    " WHERE t.hash = v.hash AND (t.kind = 'tags') = (v.space = 'tags'))"
)


def text_kinds(space: str) -> list[str]:
    """The kinds of note text whose vectors are in `space`."""
    return ["tags"] if space == "tags" else ["summary", "llm_summary", "passage"]


class VectorSql(SqlBase):
    def _delete_vectors(self, vector_ids: list[int]) -> None:
        """Drop these rows of `vec_items` (inside a transaction)."""
        raise NotImplementedError

    def embed_identity(self) -> tuple[str | None, int | None]:
        """(provider identity, dimension) of the stored vectors, as recorded in meta."""
        identity = self.get_meta("embed_identity")
        dim = self.get_meta("embed_dim")
        return identity, int(dim) if dim else None

    def text_spans(self, vector_ids: Iterable[int], space: str) -> list[TextSpan]:
        """The note texts these vectors belong to, by note, kind (passages first), seq."""
        from .vector_rows import TextSpan

        among, params = self.in_ids("v.id", list(vector_ids))
        kinds, kind_params = self.in_list("t.kind", text_kinds(space))
        return [
            TextSpan(int(v), int(n), str(k), int(s), int(e), h)
            for v, n, k, s, e, h in self.query(
                'SELECT v.id, t.note_id, t.kind, t.start, t."end", t.heading FROM vec_texts v'
                f" JOIN note_texts t ON t.hash = v.hash WHERE {among}"
                f" AND {kinds} ORDER BY t.note_id, t.kind DESC, t.seq",
                [*params, *kind_params],
            )
        ]

    def vector_ids_of(self, note_ids: list[int], identity: str, space: str) -> list[int]:
        among, params = self.in_ids("t.note_id", note_ids)
        kinds, kind_params = self.in_list("t.kind", text_kinds(space))
        return [
            int(r[0])
            for r in self.query(
                "SELECT DISTINCT v.id FROM note_texts t JOIN vec_texts v ON v.hash = t.hash"
                f" AND v.identity = ? AND v.space = ? WHERE {among} AND {kinds}",
                [identity, space, *params, *kind_params],
            )
        ]

    def note_vectors(self, identity: str) -> list[tuple[int, str, int, str]]:
        """(note id, kind, vector id, text hash) of every summary (the LLM's too) and tag
        text with a vector of `identity`."""
        return [
            (int(n), str(k), int(v), str(h))
            for n, k, v, h in self.query(
                "SELECT t.note_id, t.kind, v.id, t.hash FROM note_texts t JOIN vec_texts v"
                " ON v.hash = t.hash AND v.identity = ?"
                " AND v.space = CASE t.kind WHEN 'tags' THEN 'tags' ELSE 'doc' END"
                " WHERE t.kind IN ('summary', 'llm_summary', 'tags') ORDER BY t.note_id, t.kind",
                [identity],
            )
        ]

    # -- vector bookkeeping (lore.index.embed) -----------------------------------------------

    def has_vectors(self) -> bool:
        return bool(self.query("SELECT 1 FROM vec_texts LIMIT 1"))

    def vector_count(self) -> int:
        return int(self._scalar("SELECT count(*) FROM vec_texts"))

    def drop_vectors(self) -> None:
        """Forget every vector and the recorded identity (in one transaction)."""
        with self.transaction():
            self.execute("DROP TABLE IF EXISTS vec_items")
            self.execute("DELETE FROM vec_texts")
            self.delete_meta("embed_identity", "embed_dim", "vec_layout")

    def missing_vectors(self, identity: str) -> list[tuple[int, str]]:
        """(note id, path) of notes with a text that has no vector for `identity`."""
        return [
            (int(nid), str(path))
            for nid, path in self.query(
                "SELECT DISTINCT t.note_id, n.path FROM note_texts t JOIN notes n"
                " ON n.id = t.note_id LEFT JOIN vec_texts v ON v.hash = t.hash AND v.identity = ?"
                " AND v.space = CASE t.kind WHEN 'tags' THEN 'tags' ELSE 'doc' END"
                " WHERE v.id IS NULL ORDER BY n.path",
                [identity],
            )
        ]

    def embedded_keys(self, identity: str, hashes: list[str]) -> set[tuple[str, str]]:
        """(hash, space) of these texts that have a vector of `identity`."""
        if not hashes:
            return set()
        out: set[tuple[str, str]] = set()
        for chunk in self.chunks(hashes):
            among, params = self.in_list("hash", chunk)
            out.update(
                (str(h), str(s))
                for h, s in self.query(
                    f"SELECT hash, space FROM vec_texts WHERE identity = ? AND {among}",
                    [identity, *params],
                )
            )
        return out

    def planned_keys(self, note_id: int) -> set[tuple[str, str]]:
        """(hash, kind) of the texts planned for a note."""
        return {
            (str(h), str(k))
            for h, k in self.query("SELECT hash, kind FROM note_texts WHERE note_id = ?", [note_id])
        }

    def has_unused_vectors(self) -> bool:
        return bool(self.query(_UNUSED + " LIMIT 1"))

    def drop_unused_vectors(self) -> int:
        """Drop vectors whose text no note uses any more (inside a transaction)."""
        ids = [int(r[0]) for r in self.query(_UNUSED)]
        for chunk in self.chunks(ids):
            self._delete_vectors(list(chunk))
            among, params = self.in_ids("id", chunk)
            self.execute(f"DELETE FROM vec_texts WHERE {among}", params)
        return len(ids)

    # -- the semantic layer's tables (lore.index.semantic) -----------------------------------

    def note_sources(self, ids: list[int]) -> dict[int, NoteSource]:
        """The stored fields of these notes, with all their tags."""
        from .vector_rows import NoteSource

        out: dict[int, NoteSource] = {}
        for chunk in self.chunks(ids):
            tags: dict[int, list[str]] = {}
            among, params = self.in_ids("note_id", chunk)
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM tags WHERE {among} ORDER BY note_id, position", params
            ):
                tags.setdefault(int(nid), []).append(str(tag))
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM derived_tags WHERE {among}"
                " ORDER BY note_id, origin DESC, position",  # llm before heuristic
                params,
            ):
                tags.setdefault(int(nid), []).append(str(tag))
            among, params = self.in_ids("n.id", chunk)
            for nid, path, title, body, headings, summary, fm, by_llm in self.query(
                "SELECT n.id, n.path, n.title, n.body, n.headings, n.summary, n.frontmatter,"
                " EXISTS (SELECT 1 FROM note_llm l WHERE l.note_id = n.id"
                " AND l.note_hash = n.hash AND l.summary IS NOT NULL)"
                f" FROM notes n WHERE {among}",
                params,
            ):
                heads: Headings = [
                    (int(h[0]), str(h[1]), int(h[2]), int(h[3])) for h in json.loads(headings)
                ]
                unique = list(dict.fromkeys(tags.get(int(nid), [])))
                out[int(nid)] = NoteSource(
                    int(nid),
                    str(path),
                    str(title),
                    str(body),
                    heads,
                    str(summary),
                    unique,
                    json.loads(fm),
                    bool(by_llm),
                )
        return out

    def author_tags(self, ids: list[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for chunk in self.chunks(ids):
            among, params = self.in_ids("note_id", chunk)
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM tags WHERE {among} ORDER BY position", params
            ):
                out.setdefault(int(nid), []).append(str(tag))
        return out

    def semantic_stale(self, version: str) -> list[tuple[int, str]]:
        """(id, hash) of notes whose derived rows are not of this hash and version."""
        return [
            (int(nid), str(digest))
            for nid, digest in self.query(
                "SELECT n.id, n.hash FROM notes n LEFT JOIN semantic_state s ON s.note_id = n.id"
                " WHERE s.note_hash IS DISTINCT FROM n.hash OR s.version IS DISTINCT FROM ?"
                " ORDER BY n.id",
                [version],
            )
        ]

    def semantic_orphans(self) -> bool:
        return bool(
            self.query(
                "SELECT 1 FROM semantic_state WHERE note_id NOT IN (SELECT id FROM notes) LIMIT 1"
            )
        )

    def drop_semantic_orphans(self, *, everything: bool = False) -> None:
        """Drop derived rows of deleted notes (`everything`: forget every note's state)."""
        for table in ("semantic_state", "derived_tags", "note_texts"):
            self.execute(f"DELETE FROM {table} WHERE note_id NOT IN (SELECT id FROM notes)")
        if everything:
            self.execute("DELETE FROM semantic_state")

    def replace_derived_tags(
        self, note_id: int, tags: list[tuple[str, str, int]], origin: str, *, drop: tuple[str, ...]
    ) -> None:
        """Drop the note's derived tags of the origins `drop`, then add `tags` ((tag, key,
        position) triples) with `origin`."""
        if drop:
            origins, params = self.in_list("origin", drop)
            self.execute(
                f"DELETE FROM derived_tags WHERE note_id = ? AND {origins}", [note_id, *params]
            )
        self.executemany(
            "INSERT INTO derived_tags(note_id, tag, tag_key, origin, position)"
            " VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
            [(note_id, t, key, origin, i) for t, key, i in tags],
        )

    def write_texts(self, note_id: int, texts: list[PlannedText]) -> None:
        self.execute("DELETE FROM note_texts WHERE note_id = ?", (note_id,))
        self.executemany(
            'INSERT INTO note_texts(note_id, kind, seq, hash, start, "end", heading)'
            " VALUES (?,?,?,?,?,?,?)",
            [(note_id, *t) for t in texts],
        )

    def mark_derived(self, note_id: int, note_hash: str, version: str) -> None:
        self.execute(
            "INSERT INTO semantic_state(note_id, note_hash, version) VALUES (?,?,?)"
            " ON CONFLICT(note_id) DO UPDATE SET note_hash = excluded.note_hash,"
            " version = excluded.version",
            (note_id, note_hash, version),
        )

    def notes_without_llm_tags(self) -> list[tuple[int, str, str]]:
        """(id, title, body) of notes the LLM has not tagged yet, by path."""
        return [
            (int(n), str(t), str(s))
            for n, t, s in self.query(
                "SELECT n.id, n.title, n.body FROM notes n WHERE NOT EXISTS (SELECT 1 FROM"
                " derived_tags d WHERE d.note_id = n.id AND d.origin = 'llm') ORDER BY n.path"
            )
        ]

    # -- model answers (lore.index.llm_cache) ------------------------------------------------

    def cached_answer(self, key: str) -> Any | None:
        rows = self.query("SELECT output FROM llm_cache WHERE key = ?", [key])
        return json.loads(rows[0][0]) if rows else None

    def cache_answer(
        self, key: str, task: str, model: str, version: str, digest: str, answer: Any
    ) -> None:
        with self.transaction():
            self.execute(
                "INSERT INTO llm_cache(key, task, model, prompt_version, input_hash, output)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET task = excluded.task,"
                " model = excluded.model, prompt_version = excluded.prompt_version,"
                " input_hash = excluded.input_hash, output = excluded.output",
                (key, task, model, version, digest, json.dumps(answer, ensure_ascii=False)),
            )
