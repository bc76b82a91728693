"""Reads for `lore migrate` (lore.index.transfer): what an index holds that its notes do not
give back cheaply — the model answers, the vectors, the interest map's centroids. The
statements are the same on both backends, so they live here once, over each backend's
`query`; what is written into the target goes through the ordinary write methods
(`cache_answer`, `add_vector`, `write_map`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .transfer_rows import CachedAnswer, VectorKey


class _Queries(Protocol):
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


class TransferSql:
    """Mixed into both stores (SqliteStore, PostgresStore)."""

    def cached_answers(self: _Queries) -> list[CachedAnswer]:
        """Every cached model answer, by key."""
        from .transfer_rows import CachedAnswer  # made when an index is copied

        rows = self.query(
            "SELECT key, task, model, prompt_version, input_hash, output FROM llm_cache"
            " ORDER BY key"
        )
        return [CachedAnswer(*(str(v) for v in row)) for row in rows]

    def vector_keys(self: _Queries) -> list[VectorKey]:
        """Every stored vector's key, by id (none before the first `lore embed`)."""
        from .transfer_rows import VectorKey

        rows = self.query("SELECT id, hash, identity, space FROM vec_texts ORDER BY id")
        return [VectorKey(int(i), str(h), str(m), str(s)) for i, h, m, s in rows]

    def map_centroids(self: _Queries) -> dict[int, bytes]:
        """cluster id → its centroid (float32 bytes) in the stored interest map."""
        return {
            int(cid): bytes(blob)
            for cid, blob in self.query("SELECT id, centroid FROM interest_clusters")
        }
