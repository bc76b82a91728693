"""Vectors on PostgreSQL (pgvector, cosine distance, an HNSW index per space;
lore.store.vectors has the semantic layer's tables both backends share).

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

import struct
from contextlib import nullcontext
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .pg_base import PgBase
from .vectors import VectorSql

if TYPE_CHECKING:
    from .base import PlannedText

SPACES = ("doc", "tags")
MAX_EF_SEARCH = 1000  # pgvector's upper bound for hnsw.ef_search
MIN_EF_SEARCH = 100
_ASK_THE_OWNER = "ask the database owner to run CREATE EXTENSION vector"


def to_vector(blob: bytes) -> str:
    """float32 bytes as pgvector's text form (every float32 survives the round trip)."""
    values = struct.unpack(f"<{len(blob) // 4}f", blob)
    return "[" + ",".join(repr(v) for v in values) + "]"


def from_vector_send(data: bytes) -> bytes:
    """pgvector's binary form (dimension and a reserved int16, then big-endian float4s) as
    float32 bytes: a search reads thousands of them, and parsing their text took it 50 ms."""
    count = (len(data) - 4) // 4
    return struct.pack(f"<{count}f", *struct.unpack_from(f">{count}f", data, 4))


class PgVectors(VectorSql, PgBase):
    # -- pgvector ----------------------------------------------------------------------------

    def load_vec(self) -> None:
        """Make sure the server has pgvector in this database; a clear error when not."""
        cache = self.snapshot_cache()
        if cache is not None and cache.get("pgvector"):
            return  # a search's: this read snapshot's generation found it
        if self.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'"):
            if cache is not None:
                cache.put("pgvector", True)
            return
        if not self.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"):
            raise self._no_pgvector()
        try:
            self.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        except self.Error as exc:
            raise ConfigError(
                f"vectors need the pgvector extension in {self.url}: {exc}".splitlines()[0],
                hint=_ASK_THE_OWNER,
            ) from None

    def vectors_unavailable(self) -> str | None:
        """None when pgvector is in the database or this role may create it (what
        load_vec does); else why not."""
        rows = self.query(
            "SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'vector'),"
            " (SELECT bool_or(trusted) FROM pg_available_extension_versions"
            "  WHERE name = 'vector'),"
            " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),"
            " has_database_privilege(current_database(), 'CREATE'), current_user"
        )
        installed, trusted, superuser, may_create, user = rows[0]
        if installed:
            return None
        if trusted is None:
            return str(self._no_pgvector())
        if superuser or (trusted and may_create):
            return None
        return (
            f"pgvector is not installed in {self.url} and {user} may not install it"
            f" ({_ASK_THE_OWNER})"
        )

    def _no_pgvector(self) -> ConfigError:
        return ConfigError(
            f"vectors need the pgvector extension, which the server of {self.url} lacks",
            hint="install pgvector on the server (full-text search works without it)",
        )

    def _has_vector_table(self) -> bool:
        """(Made by a write transaction: a generation knows whether it has it.)"""
        cache = self.snapshot_cache()
        found = cache.get("vec_items") if cache is not None else None
        if found is None:
            found = bool(self._scalar("SELECT to_regclass('vec_items') IS NOT NULL"))
            if cache is not None:
                cache.put("vec_items", found)
        return bool(found)

    def knn(self, vector: bytes, k: int, space: str) -> list[tuple[int, float]]:
        """(vector id, cosine distance) of the `k` nearest vectors in `space`."""
        if space not in SPACES or k < 1 or not self._has_vector_table():
            return []
        with nullcontext() if self.in_transaction else self.snapshot():
            # One round trip: the settings (a read's, not counted as statements) and the
            # query, as one pipeline.
            ef_search = min(max(k, MIN_EF_SEARCH), MAX_EF_SEARCH)
            self._send_batch()
            with self._connected(), self.conn.pipeline():
                self.conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
                self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                cur = self.conn.execute(
                    "SELECT id, embedding <=> %(v)s::vector AS d FROM vec_items"
                    f" WHERE space = '{space}' ORDER BY embedding <=> %(v)s::vector LIMIT %(k)s",
                    {"v": to_vector(vector), "k": k},
                )
            rows = cur.fetchall()
        return sorted(((int(i), float(d)) for i, d in rows), key=lambda r: (r[1], r[0]))

    def vector(self, vector_id: int) -> bytes | None:
        return self.vectors([vector_id]).get(vector_id)

    def vectors(self, vector_ids: list[int]) -> dict[int, bytes]:
        if not vector_ids or not self._has_vector_table():
            return {}
        return {
            int(i): from_vector_send(bytes(e))
            for i, e in self.query(
                "SELECT id, vector_send(embedding) FROM vec_items WHERE id = ANY(?)",
                (list(vector_ids),),
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
            "INSERT INTO vec_texts(hash, identity, space) VALUES (?,?,?) RETURNING id",
            (text_hash, identity, space),
        )
        self.execute(
            "INSERT INTO vec_items(id, space, embedding) VALUES (?,?,?::vector)",
            (int(found[0][0]), space, to_vector(blob)),
        )
        self._vectors_unanalysed += 1

    def write_texts(self, note_id: int, texts: list[PlannedText]) -> None:
        super().write_texts(note_id, texts)
        self._notes_written += 1  # the texts of a note: a large refresh analyses at commit

    def _delete_vectors(self, vector_ids: list[int]) -> None:
        if vector_ids and self._has_vector_table():
            self.execute("DELETE FROM vec_items WHERE id = ANY(?)", (vector_ids,))
