"""Vectors in SQLite (sqlite-vec) and the semantic layer's tables: derived tags, the texts
each note wants embedded, their vectors' keys, and the cache of model answers.

Vectors are float32, L2-normalised, in the vec0 table `vec_items` (cosine distance; rowid =
vec_texts.id; partition key `space`: doc for summaries and passages, tags for tag texts),
made on first use once the dimension is known.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import apsw

from ..errors import ConfigError, install_hint
from .rows import Headings, NoteSource, TextSpan
from .sqlite_base import SqliteBase, chunks, marks

_UNUSED = (
    "SELECT v.id FROM vec_texts v WHERE NOT EXISTS (SELECT 1 FROM note_texts t"
    " WHERE t.hash = v.hash AND (t.kind = 'tags') = (v.space = 'tags'))"
)
# (kind, seq, hash, start, end, heading) of one text to embed
PlannedText = tuple[str, int, str, int, int, str | None]


def _kinds(space: str) -> str:
    return "('tags')" if space == "tags" else "('summary', 'passage')"


def _ids(ids: Iterable[int]) -> str:
    return ",".join(str(int(i)) for i in ids)


class VectorSql(SqliteBase):
    # -- sqlite-vec --------------------------------------------------------------------------

    def load_vec(self) -> None:
        """Load sqlite-vec into this connection (once); a clear error when it is missing."""
        db = self.db
        try:
            db.execute("SELECT vec_version()").fetchone()
            return
        except apsw.SQLError:
            pass
        try:
            import sqlite_vec
        except ImportError:
            raise ConfigError(
                "vectors need the sqlite-vec package", hint=install_hint("vec")
            ) from None
        db.enable_load_extension(True)
        try:
            db.load_extension(sqlite_vec.loadable_path())
        finally:
            db.enable_load_extension(False)

    def embed_identity(self) -> tuple[str | None, int | None]:
        """(provider identity, dimension) of the stored vectors, as recorded in meta."""
        identity = self.get_meta("embed_identity")
        dim = self.get_meta("embed_dim")
        return identity, int(dim) if dim else None

    def knn(self, vector: bytes, k: int, space: str) -> list[tuple[int, float]]:
        """(vector id, cosine distance) of the `k` nearest vectors in `space`."""
        rows = self.query(
            "SELECT rowid, distance FROM vec_items WHERE embedding MATCH ? AND k = ? AND space = ?",
            [vector, k, space],
        )
        return [(int(r), float(d)) for r, d in rows]

    def text_spans(self, vector_ids: Iterable[int], space: str) -> list[TextSpan]:
        """The note texts these vectors belong to, by note, kind (passages first), seq."""
        return [
            TextSpan(int(v), int(n), str(k), int(s), int(e), h)
            for v, n, k, s, e, h in self.query(
                f'SELECT v.id, t.note_id, t.kind, t.start, t."end", t.heading FROM vec_texts v'
                f" JOIN note_texts t ON t.hash = v.hash WHERE v.id IN ({_ids(vector_ids)})"
                f" AND t.kind IN {_kinds(space)} ORDER BY t.note_id, t.kind DESC, t.seq",
                [],
            )
        ]

    def vector_ids_of(self, note_ids: list[int], identity: str, space: str) -> list[int]:
        return [
            int(r[0])
            for r in self.query(
                "SELECT DISTINCT v.id FROM note_texts t JOIN vec_texts v ON v.hash = t.hash"
                f" AND v.identity = ? AND v.space = ? WHERE t.note_id IN ({_ids(note_ids)})"
                f" AND t.kind IN {_kinds(space)}",
                [identity, space],
            )
        ]

    def vector(self, vector_id: int) -> bytes | None:
        row = self.query("SELECT embedding FROM vec_items WHERE rowid = ?", [vector_id])
        return bytes(row[0][0]) if row else None

    def vectors(self, vector_ids: list[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        for chunk in chunks(vector_ids):
            for rowid, blob in self.query(
                f"SELECT rowid, embedding FROM vec_items WHERE rowid IN ({marks(chunk)})", chunk
            ):
                out[int(rowid)] = bytes(blob)
        return out

    def note_vectors(self, identity: str) -> list[tuple[int, str, int, str]]:
        """(note id, kind, vector id, text hash) of every summary and tag text with a
        vector of `identity`."""
        return [
            (int(n), str(k), int(v), str(h))
            for n, k, v, h in self.query(
                "SELECT t.note_id, t.kind, v.id, t.hash FROM note_texts t JOIN vec_texts v"
                " ON v.hash = t.hash AND v.identity = ?"
                " AND v.space = CASE t.kind WHEN 'tags' THEN 'tags' ELSE 'doc' END"
                " WHERE t.kind IN ('summary', 'tags') ORDER BY t.note_id, t.kind",
                [identity],
            )
        ]

    # -- vector bookkeeping (lore.index.embed) -----------------------------------------------

    def has_vectors(self) -> bool:
        return bool(self.query("SELECT 1 FROM vec_texts LIMIT 1"))

    def vector_count(self) -> int:
        return int(self.query("SELECT count(*) FROM vec_texts")[0][0])

    def drop_vectors(self) -> None:
        """Forget every vector and the recorded identity (in one transaction)."""
        self.load_vec()
        with self.transaction():
            self.db.execute("DROP TABLE IF EXISTS vec_items")
            self.db.execute("DELETE FROM vec_texts")
            self.db.execute(
                "DELETE FROM meta WHERE key IN ('embed_identity', 'embed_dim', 'vec_layout')"
            )

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
        return {
            (str(h), str(s))
            for h, s in self.query(
                "SELECT hash, space FROM vec_texts WHERE identity = ?"
                f" AND hash IN ({marks(hashes)})",
                [identity, *hashes],
            )
        }

    def planned_keys(self, note_id: int) -> set[tuple[str, str]]:
        """(hash, kind) of the texts planned for a note."""
        return {
            (str(h), str(k))
            for h, k in self.query("SELECT hash, kind FROM note_texts WHERE note_id = ?", [note_id])
        }

    def ensure_vector_table(self, dim: int) -> None:
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS vec_items USING vec0("
            f"embedding float[{dim}] distance_metric=cosine, space text partition key)"
        )

    def add_vector(self, text_hash: str, identity: str, space: str, blob: bytes) -> None:
        """Store one vector (inside a transaction)."""
        self.db.execute(
            "INSERT INTO vec_texts(hash, identity, space) VALUES (?,?,?)",
            (text_hash, identity, space),
        )
        rowid = self.db.last_insert_rowid()
        self.db.execute(
            "INSERT INTO vec_items(rowid, embedding, space) VALUES (?,?,?)", (rowid, blob, space)
        )

    def has_unused_vectors(self) -> bool:
        return bool(self.query(_UNUSED + " LIMIT 1"))

    def drop_unused_vectors(self) -> int:
        """Drop vectors whose text no note uses any more (inside a transaction)."""
        ids = [int(r[0]) for r in self.query(_UNUSED)]
        for chunk in chunks(ids):
            self.db.execute(f"DELETE FROM vec_items WHERE rowid IN ({marks(chunk)})", chunk)
            self.db.execute(f"DELETE FROM vec_texts WHERE id IN ({marks(chunk)})", chunk)
        return len(ids)

    # -- the semantic layer's tables (lore.index.semantic) -----------------------------------

    def note_sources(self, ids: list[int]) -> dict[int, NoteSource]:
        """The stored fields of these notes, with all their tags."""
        out: dict[int, NoteSource] = {}
        for chunk in chunks(ids):
            tags: dict[int, list[str]] = {}
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM tags WHERE note_id IN ({marks(chunk)})"
                " ORDER BY note_id, position",
                chunk,
            ):
                tags.setdefault(int(nid), []).append(str(tag))
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM derived_tags WHERE note_id IN ({marks(chunk)})"
                " ORDER BY note_id, origin DESC, position",  # llm before heuristic
                chunk,
            ):
                tags.setdefault(int(nid), []).append(str(tag))
            for nid, path, title, body, headings, summary in self.query(
                "SELECT id, path, title, body, headings, summary FROM notes"
                f" WHERE id IN ({marks(chunk)})",
                chunk,
            ):
                heads: Headings = [
                    (int(h[0]), str(h[1]), int(h[2]), int(h[3])) for h in json.loads(headings)
                ]
                unique = list(dict.fromkeys(tags.get(int(nid), [])))
                out[int(nid)] = NoteSource(
                    int(nid), str(path), str(title), str(body), heads, str(summary), unique
                )
        return out

    def author_tags(self, ids: list[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for chunk in chunks(ids):
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM tags WHERE note_id IN ({marks(chunk)})"
                " ORDER BY position",
                chunk,
            ):
                out.setdefault(int(nid), []).append(str(tag))
        return out

    def semantic_stale(self, version: str) -> list[tuple[int, str]]:
        """(id, hash) of notes whose derived rows are not of this hash and version."""
        return [
            (int(nid), str(digest))
            for nid, digest in self.query(
                "SELECT n.id, n.hash FROM notes n LEFT JOIN semantic_state s ON s.note_id = n.id"
                " WHERE s.note_hash IS NOT n.hash OR s.version IS NOT ? ORDER BY n.id",
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
            self.db.execute(f"DELETE FROM {table} WHERE note_id NOT IN (SELECT id FROM notes)")
        if everything:
            self.db.execute("DELETE FROM semantic_state")

    def replace_derived_tags(
        self, note_id: int, tags: list[tuple[str, str, int]], origin: str, *, drop: tuple[str, ...]
    ) -> None:
        """Drop the note's derived tags of the origins `drop`, then add `tags` ((tag, key,
        position) triples) with `origin`."""
        for old in drop:
            self.db.execute(
                "DELETE FROM derived_tags WHERE note_id = ? AND origin = ?", (note_id, old)
            )
        self.db.executemany(
            "INSERT OR IGNORE INTO derived_tags(note_id, tag, tag_key, origin, position)"
            " VALUES (?,?,?,?,?)",
            [(note_id, t, key, origin, i) for t, key, i in tags],
        )

    def write_texts(self, note_id: int, texts: list[PlannedText]) -> None:
        self.db.execute("DELETE FROM note_texts WHERE note_id = ?", (note_id,))
        self.db.executemany(
            'INSERT INTO note_texts(note_id, kind, seq, hash, start, "end", heading)'
            " VALUES (?,?,?,?,?,?,?)",
            [(note_id, *t) for t in texts],
        )

    def mark_derived(self, note_id: int, note_hash: str, version: str) -> None:
        self.db.execute(
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
            self.db.execute(
                "INSERT OR REPLACE INTO llm_cache(key, task, model, prompt_version, input_hash,"
                " output) VALUES (?,?,?,?,?,?)",
                (key, task, model, version, digest, json.dumps(answer, ensure_ascii=False)),
            )
