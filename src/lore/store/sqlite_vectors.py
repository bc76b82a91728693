"""Vectors in SQLite (sqlite-vec; lore.store.vectors has the semantic layer's tables both
backends share). Vectors are float32, L2-normalised, in the vec0 table `vec_items` (cosine
distance; rowid = vec_texts.id; partition key `space`), made on first use once the
dimension is known; sqlite-vec answers a KNN query exactly."""

from __future__ import annotations

import apsw

from ..errors import ConfigError, install_hint
from .sqlite_base import SqliteBase, marks
from .vectors import VectorSql


class SqliteVectors(VectorSql, SqliteBase):
    def load_vec(self) -> None:
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

    def vectors_unavailable(self) -> str | None:
        return None  # sqlite-vec is a dependency: load_vec names the rare failure

    def knn(self, vector: bytes, k: int, space: str) -> list[tuple[int, float]]:
        rows = self.query(
            "SELECT rowid, distance FROM vec_items WHERE embedding MATCH ? AND k = ? AND space = ?",
            [vector, k, space],
        )
        return [(int(r), float(d)) for r, d in rows]

    def vector(self, vector_id: int) -> bytes | None:
        row = self.query("SELECT embedding FROM vec_items WHERE rowid = ?", [vector_id])
        return bytes(row[0][0]) if row else None

    def vectors(self, vector_ids: list[int]) -> dict[int, bytes]:
        out: dict[int, bytes] = {}
        for chunk in self.chunks(vector_ids):
            for rowid, blob in self.query(
                f"SELECT rowid, embedding FROM vec_items WHERE rowid IN ({marks(chunk)})", chunk
            ):
                out[int(rowid)] = bytes(blob)
        return out

    def drop_vectors(self) -> None:
        self.load_vec()  # dropping a vec0 table needs its module
        super().drop_vectors()

    def ensure_vector_table(self, dim: int) -> None:
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS vec_items USING vec0("
            f"embedding float[{dim}] distance_metric=cosine, space text partition key)"
        )

    def add_vector(self, text_hash: str, identity: str, space: str, blob: bytes) -> None:
        self.db.execute(
            "INSERT INTO vec_texts(hash, identity, space) VALUES (?,?,?)",
            (text_hash, identity, space),
        )
        rowid = self.db.last_insert_rowid()
        self.db.execute(
            "INSERT INTO vec_items(rowid, embedding, space) VALUES (?,?,?)", (rowid, blob, space)
        )

    def _delete_vectors(self, vector_ids: list[int]) -> None:
        self.db.execute(f"DELETE FROM vec_items WHERE rowid IN ({marks(vector_ids)})", vector_ids)
