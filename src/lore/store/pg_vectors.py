"""Vectors on PostgreSQL (pgvector, cosine distance, an HNSW index per space) and the
semantic layer's tables: derived tags, the texts each note wants embedded, their vectors'
keys, and the cache of model answers (lore.store.sqlite_vectors in PostgreSQL's dialect).

The layout is sqlite-vec's: one row of `vec_items` per embedded text, `id` = vec_texts.id,
`space` = doc (summaries and passages) or tags, a float32 vector, L2-normalised by the
caller. Vectors arrive and leave as float32 bytes, as on SQLite. Each space has a partial
HNSW index of its own, so a KNN query of one space never walks the other's graph.

sqlite-vec answers a KNN query exactly (a full scan); HNSW is approximate. `knn` asks the
graph for at least `k` candidates (`hnsw.ef_search`, at most pgvector's 1,000) and lets it
keep walking past a filtered-out row (`hnsw.iterative_scan`); how often it returns the
exact neighbours is measured in bench/pg_parity.py, not assumed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

from ..errors import ConfigError
from .pg_base import PgBase
from .rows import Headings, NoteSource, TextSpan

SPACES = ("doc", "tags")
MAX_EF_SEARCH = 1000  # pgvector's upper bound for hnsw.ef_search
MIN_EF_SEARCH = 100
_UNUSED = (
    "SELECT v.id FROM vec_texts v WHERE NOT EXISTS (SELECT 1 FROM note_texts t"
    " WHERE t.hash = v.hash AND (t.kind = 'tags') = (v.space = 'tags'))"
)
# (kind, seq, hash, start, end, heading) of one text to embed
PlannedText = tuple[str, int, str, int, int, str | None]


def _kinds(space: str) -> list[str]:
    return ["tags"] if space == "tags" else ["summary", "passage"]


def to_vector(blob: bytes) -> str:
    """float32 bytes as pgvector's text form (every float32 survives the round trip)."""
    values = struct.unpack(f"<{len(blob) // 4}f", blob)
    return "[" + ",".join(repr(v) for v in values) + "]"


def from_vector(text: str) -> bytes:
    values = [float(v) for v in text.strip("[]").split(",")] if text.strip("[]") else []
    return struct.pack(f"<{len(values)}f", *values)


class PgVectors(PgBase):
    # -- pgvector ----------------------------------------------------------------------------

    def load_vec(self) -> None:
        """Make sure the server has pgvector in this database; a clear error when not."""
        if self.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'"):
            return
        if not self.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"):
            raise ConfigError(
                f"vectors need the pgvector extension, which the server of {self.url} lacks",
                hint="install pgvector on the server (full-text search works without it)",
            )
        try:
            self.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        except self.Error as exc:
            raise ConfigError(
                f"vectors need the pgvector extension in {self.url}: {exc}".splitlines()[0],
                hint="ask the database owner to run CREATE EXTENSION vector",
            ) from None

    def embed_identity(self) -> tuple[str | None, int | None]:
        """(provider identity, dimension) of the stored vectors, as recorded in meta."""
        identity = self.get_meta("embed_identity")
        dim = self.get_meta("embed_dim")
        return identity, int(dim) if dim else None

    def _has_vector_table(self) -> bool:
        return bool(self._scalar("SELECT to_regclass('vec_items') IS NOT NULL"))

    def knn(self, vector: bytes, k: int, space: str) -> list[tuple[int, float]]:
        """(vector id, cosine distance) of the `k` nearest vectors in `space`."""
        if space not in SPACES or k < 1 or not self._has_vector_table():
            return []
        with nullcontext() if self.in_transaction else self.snapshot():
            self.execute(f"SET LOCAL hnsw.ef_search = {min(max(k, MIN_EF_SEARCH), MAX_EF_SEARCH)}")
            self.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            rows = self.query(
                "SELECT id, embedding <=> %(v)s::vector AS d FROM vec_items"
                f" WHERE space = '{space}' ORDER BY embedding <=> %(v)s::vector LIMIT %(k)s",
                {"v": to_vector(vector), "k": k},
            )
        return sorted(((int(i), float(d)) for i, d in rows), key=lambda r: (r[1], r[0]))

    def text_spans(self, vector_ids: Iterable[int], space: str) -> list[TextSpan]:
        """The note texts these vectors belong to, by note, kind (passages first), seq."""
        return [
            TextSpan(int(v), int(n), str(k), int(s), int(e), h)
            for v, n, k, s, e, h in self.query(
                'SELECT v.id, t.note_id, t.kind, t.start, t."end", t.heading FROM vec_texts v'
                " JOIN note_texts t ON t.hash = v.hash WHERE v.id = ANY(%s)"
                " AND t.kind = ANY(%s) ORDER BY t.note_id, t.kind DESC, t.seq",
                (list(vector_ids), _kinds(space)),
            )
        ]

    def vector_ids_of(self, note_ids: list[int], identity: str, space: str) -> list[int]:
        return [
            int(r[0])
            for r in self.query(
                "SELECT DISTINCT v.id FROM note_texts t JOIN vec_texts v ON v.hash = t.hash"
                " AND v.identity = %s AND v.space = %s WHERE t.note_id = ANY(%s)"
                " AND t.kind = ANY(%s)",
                (identity, space, list(note_ids), _kinds(space)),
            )
        ]

    def vector(self, vector_id: int) -> bytes | None:
        return self.vectors([vector_id]).get(vector_id)

    def vectors(self, vector_ids: list[int]) -> dict[int, bytes]:
        if not vector_ids or not self._has_vector_table():
            return {}
        return {
            int(i): from_vector(str(e))
            for i, e in self.query(
                "SELECT id, embedding::text FROM vec_items WHERE id = ANY(%s)", (list(vector_ids),)
            )
        }

    def note_vectors(self, identity: str) -> list[tuple[int, str, int, str]]:
        """(note id, kind, vector id, text hash) of every summary and tag text with a
        vector of `identity`."""
        return [
            (int(n), str(k), int(v), str(h))
            for n, k, v, h in self.query(
                "SELECT t.note_id, t.kind, v.id, t.hash FROM note_texts t JOIN vec_texts v"
                " ON v.hash = t.hash AND v.identity = %s"
                " AND v.space = CASE t.kind WHEN 'tags' THEN 'tags' ELSE 'doc' END"
                " WHERE t.kind IN ('summary', 'tags') ORDER BY t.note_id, t.kind",
                (identity,),
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
                " ON n.id = t.note_id LEFT JOIN vec_texts v ON v.hash = t.hash"
                " AND v.identity = %s"
                " AND v.space = CASE t.kind WHEN 'tags' THEN 'tags' ELSE 'doc' END"
                " WHERE v.id IS NULL ORDER BY n.path",
                (identity,),
            )
        ]

    def embedded_keys(self, identity: str, hashes: list[str]) -> set[tuple[str, str]]:
        """(hash, space) of these texts that have a vector of `identity`."""
        if not hashes:
            return set()
        return {
            (str(h), str(s))
            for h, s in self.query(
                "SELECT hash, space FROM vec_texts WHERE identity = %s AND hash = ANY(%s)",
                (identity, list(hashes)),
            )
        }

    def planned_keys(self, note_id: int) -> set[tuple[str, str]]:
        """(hash, kind) of the texts planned for a note."""
        return {
            (str(h), str(k))
            for h, k in self.query(
                "SELECT hash, kind FROM note_texts WHERE note_id = %s", (note_id,)
            )
        }

    def ensure_vector_table(self, dim: int) -> None:
        """The vector table and its per-space HNSW indexes, made once the dimension is known."""
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"a vector dimension must be a positive integer, not {dim!r}")
        self.load_vec()
        self.execute(
            "CREATE TABLE IF NOT EXISTS vec_items (id bigint PRIMARY KEY,"
            f" space text NOT NULL, embedding vector({dim}) NOT NULL)"
        )
        for space in SPACES:
            self.execute(
                f"CREATE INDEX IF NOT EXISTS vec_items_{space} ON vec_items"
                f" USING hnsw (embedding vector_cosine_ops) WHERE space = '{space}'"
            )

    def add_vector(self, text_hash: str, identity: str, space: str, blob: bytes) -> None:
        """Store one vector (inside a transaction)."""
        found = self.query(
            "INSERT INTO vec_texts(hash, identity, space) VALUES (%s,%s,%s) RETURNING id",
            (text_hash, identity, space),
        )
        self.execute(
            "INSERT INTO vec_items(id, space, embedding) VALUES (%s,%s,%s::vector)",
            (int(found[0][0]), space, to_vector(blob)),
        )

    def has_unused_vectors(self) -> bool:
        return bool(self.query(_UNUSED + " LIMIT 1"))

    def drop_unused_vectors(self) -> int:
        """Drop vectors whose text no note uses any more (inside a transaction)."""
        ids = [int(r[0]) for r in self.query(_UNUSED)]
        if ids and self._has_vector_table():
            self.execute("DELETE FROM vec_items WHERE id = ANY(%s)", (ids,))
        self.execute("DELETE FROM vec_texts WHERE id = ANY(%s)", (ids,))
        return len(ids)

    # -- the semantic layer's tables (lore.index.semantic) -----------------------------------

    def note_sources(self, ids: list[int]) -> dict[int, NoteSource]:
        """The stored fields of these notes, with all their tags."""
        tags: dict[int, list[str]] = {}
        for nid, tag in self.query(
            "SELECT note_id, tag FROM tags WHERE note_id = ANY(%s) ORDER BY note_id, position",
            (list(ids),),
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        for nid, tag in self.query(
            "SELECT note_id, tag FROM derived_tags WHERE note_id = ANY(%s)"
            " ORDER BY note_id, origin DESC, position",  # llm before heuristic
            (list(ids),),
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        out: dict[int, NoteSource] = {}
        for nid, path, title, body, headings, summary in self.query(
            "SELECT id, path, title, body, headings, summary FROM notes WHERE id = ANY(%s)",
            (list(ids),),
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
        for nid, tag in self.query(
            "SELECT note_id, tag FROM tags WHERE note_id = ANY(%s) ORDER BY position",
            (list(ids),),
        ):
            out.setdefault(int(nid), []).append(str(tag))
        return out

    def semantic_stale(self, version: str) -> list[tuple[int, str]]:
        """(id, hash) of notes whose derived rows are not of this hash and version."""
        return [
            (int(nid), str(digest))
            for nid, digest in self.query(
                "SELECT n.id, n.hash FROM notes n LEFT JOIN semantic_state s ON s.note_id = n.id"
                " WHERE s.note_hash IS DISTINCT FROM n.hash OR s.version IS DISTINCT FROM %s"
                " ORDER BY n.id",
                (version,),
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
            self.execute(
                "DELETE FROM derived_tags WHERE note_id = %s AND origin = ANY(%s)",
                (note_id, list(drop)),
            )
        self.executemany(
            "INSERT INTO derived_tags(note_id, tag, tag_key, origin, position)"
            " VALUES (%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
            [(note_id, t, key, origin, i) for t, key, i in tags],
        )

    def write_texts(self, note_id: int, texts: list[PlannedText]) -> None:
        self.execute("DELETE FROM note_texts WHERE note_id = %s", (note_id,))
        self.executemany(
            'INSERT INTO note_texts(note_id, kind, seq, hash, start, "end", heading)'
            " VALUES (%s,%s,%s,%s,%s,%s,%s)",
            [(note_id, *t) for t in texts],
        )

    def mark_derived(self, note_id: int, note_hash: str, version: str) -> None:
        self.execute(
            "INSERT INTO semantic_state(note_id, note_hash, version) VALUES (%s,%s,%s)"
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
        rows = self.query("SELECT output FROM llm_cache WHERE key = %s", (key,))
        return json.loads(rows[0][0]) if rows else None

    def cache_answer(
        self, key: str, task: str, model: str, version: str, digest: str, answer: Any
    ) -> None:
        with self.transaction():
            self.execute(
                "INSERT INTO llm_cache(key, task, model, prompt_version, input_hash, output)"
                " VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT(key) DO UPDATE SET task = excluded.task,"
                " model = excluded.model, prompt_version = excluded.prompt_version,"
                " input_hash = excluded.input_hash, output = excluded.output",
                (key, task, model, version, digest, json.dumps(answer, ensure_ascii=False)),
            )
