"""Vectors keyed by (text hash, provider identity), stored in sqlite-vec.

`note_texts` (written by index.semantic) says which texts each note wants embedded; this
module embeds the ones that have no vector for the current provider yet, in batches, each
batch committed on its own, so an interrupted run resumes where it stopped and a second run
embeds nothing and calls nothing. Vectors are float32, L2-normalised on write, in the vec0
table `vec_items` (cosine distance; rowid = vec_texts.id; metadata column `space`: doc for
summaries and passages, tags for tag texts). The index records the identity and dimension
in `meta` (embed_identity, embed_dim); vectors of another identity are never mixed in: a
different provider is refused until `lore embed --rebuild`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import apsw

from ..errors import ConfigError, install_hint
from ..providers.base import PartialEmbedding, ProviderError
from ..store.sqlite import SqliteStore
from .semantic import load_sources, texts_of, write_texts

if TYPE_CHECKING:
    from ..providers.base import EmbeddingProvider

Progress = Callable[[int, int, str], None]
BATCH = 16
VEC_LAYOUT = "2"  # vec0 with `space` as a partition key


class IdentityMismatch(ConfigError):
    """The index holds vectors of another provider/model."""


@dataclass
class EmbedReport:
    identity: str
    embedded: int = 0  # texts sent to the provider
    notes: int = 0  # notes that got at least one new vector
    removed: int = 0  # vectors no note uses any more
    pending: int = 0  # texts still without a vector (after a failure)
    seconds: float = 0.0
    error: str | None = None
    paths: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "embedded": self.embedded,
            "notes": self.notes,
            "removed": self.removed,
            "pending": self.pending,
            "seconds": round(self.seconds, 3),
            "error": self.error,
        }


def load_vec(store: SqliteStore) -> None:
    """Load sqlite-vec into this connection (once); a clear error when it is missing."""
    db = store.db
    try:
        db.execute("SELECT vec_version()").fetchone()
        return
    except apsw.SQLError:
        pass
    try:
        import sqlite_vec
    except ImportError:
        raise ConfigError("vectors need the sqlite-vec package", hint=install_hint("vec")) from None
    db.enable_load_extension(True)
    try:
        db.load_extension(sqlite_vec.loadable_path())
    finally:
        db.enable_load_extension(False)


def check_layout(store: SqliteStore) -> None:
    """Vectors stored in an older table layout are dropped (they are re-embedded)."""
    if store.get_meta("embed_identity") is not None and store.get_meta("vec_layout") != VEC_LAYOUT:
        drop_vectors(store)


def stored_identity(store: SqliteStore) -> tuple[str | None, int | None]:
    identity = store.get_meta("embed_identity")
    dim = store.get_meta("embed_dim")
    return identity, int(dim) if dim else None


def has_vectors(store: SqliteStore) -> bool:
    return bool(store.query("SELECT 1 FROM vec_texts LIMIT 1"))


def vector_count(store: SqliteStore) -> int:
    return int(store.query("SELECT count(*) FROM vec_texts")[0][0])


def check_identity(store: SqliteStore, identity: str) -> None:
    recorded, _dim = stored_identity(store)
    if recorded is not None and recorded != identity and vector_count(store):
        raise IdentityMismatch(
            f"the index holds vectors from {recorded}, not from the configured {identity}",
            hint="run `lore embed --rebuild` to re-embed with the new model",
        )


def drop_vectors(store: SqliteStore) -> None:
    """Forget every vector and the recorded identity (for --rebuild)."""
    load_vec(store)
    with store.transaction():
        store.db.execute("DROP TABLE IF EXISTS vec_items")
        store.db.execute("DELETE FROM vec_texts")
        store.db.execute(
            "DELETE FROM meta WHERE key IN ('embed_identity', 'embed_dim', 'vec_layout')"
        )


def _missing(store: SqliteStore, identity: str) -> list[tuple[int, str]]:
    """(note id, path) of notes with a text that has no vector for `identity`."""
    return [
        (int(nid), str(path))
        for nid, path in store.query(
            "SELECT DISTINCT t.note_id, n.path FROM note_texts t JOIN notes n ON n.id = t.note_id"
            " LEFT JOIN vec_texts v ON v.hash = t.hash AND v.identity = ?"
            " AND v.space = CASE t.kind WHEN 'tags' THEN 'tags' ELSE 'doc' END"
            " WHERE v.id IS NULL ORDER BY n.path",
            [identity],
        )
    ]


def pending_count(store: SqliteStore, identity: str) -> int:
    return len(_missing(store, identity))


def _ensure_table(store: SqliteStore, identity: str, dim: int) -> None:
    recorded, recorded_dim = stored_identity(store)
    if recorded_dim is not None and recorded_dim != dim:
        raise ProviderError(
            f"{identity} returned {dim}-dimensional vectors; the index holds {recorded_dim}",
            hint="run `lore embed --rebuild` if the model really changed",
        )
    store.db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS vec_items USING vec0("
        f"embedding float[{dim}] distance_metric=cosine, space text partition key)"
    )
    if recorded is None:
        store.set_meta("embed_identity", identity)
        store.set_meta("embed_dim", str(dim))
        store.set_meta("vec_layout", VEC_LAYOUT)


_UNUSED = (
    "SELECT v.id FROM vec_texts v WHERE NOT EXISTS (SELECT 1 FROM note_texts t"
    " WHERE t.hash = v.hash AND (t.kind = 'tags') = (v.space = 'tags'))"
)


def _unused(store: SqliteStore) -> bool:
    return bool(store.query(_UNUSED + " LIMIT 1"))


def garbage_collect(store: SqliteStore) -> int:
    """Drop vectors whose text no note uses any more (inside a transaction)."""
    rows = store.query(_UNUSED)
    ids = [int(r[0]) for r in rows]
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        store.db.execute(f"DELETE FROM vec_items WHERE rowid IN ({marks})", chunk)
        store.db.execute(f"DELETE FROM vec_texts WHERE id IN ({marks})", chunk)
    return len(ids)


def embed_missing(
    store: SqliteStore,
    provider: EmbeddingProvider,
    *,
    progress: Progress | None = None,
    batch: int = BATCH,
) -> EmbedReport:
    """Embed every planned text that has no vector for this provider. Raises ProviderError
    (after committing every batch that succeeded) or IdentityMismatch."""
    started = time.perf_counter()
    # Commit as often as the provider answers a round of requests (one per worker or
    # request in flight), so an interruption loses at most one round.
    batch = int(getattr(provider, "batch_size", batch)) * int(getattr(provider, "concurrency", 1))
    identity = provider.identity
    load_vec(store)
    check_layout(store)
    check_identity(store, identity)
    recorded, _dim = stored_identity(store)
    if recorded is not None and recorded != identity:
        drop_vectors(store)  # no vector of the old model is left: start afresh
    report = EmbedReport(identity)
    todo = _missing(store, identity)
    known: set[tuple[str, str]] = set()
    queue: list[tuple[str, str, str]] = []  # (hash, space, text)
    total = len(todo)
    try:
        _prepare(store, provider, todo, identity, progress)
        if progress is not None and todo:
            progress(0, total, "")  # the stage's clock starts here
        for done, (nid, path) in enumerate(todo, 1):
            source = load_sources(store, [nid]).get(nid)
            if source is None:
                continue
            texts = texts_of(source)
            have = _stored(store, identity, [t.hash for t in texts])
            planned = {
                (str(h), str(k))
                for h, k in store.query(
                    "SELECT hash, kind FROM note_texts WHERE note_id = ?", [nid]
                )
            }
            if planned != {(t.hash, t.kind) for t in texts}:
                with store.transaction():  # tags changed since planning: plan again
                    write_texts(store.db, nid, texts)
            for text in texts:
                key = (text.hash, text.space)
                if key not in have and key not in known:
                    known.add(key)
                    queue.append((text.hash, text.space, text.text))
            report.paths.append(path)
            if len(queue) >= batch or done == total:
                report.embedded += _flush(store, provider, queue)
                report.notes = done
                queue = []
            if progress is not None:
                progress(done, total, path)
        if queue:
            report.embedded += _flush(store, provider, queue)
        if _unused(store):
            with store.transaction():
                report.removed = garbage_collect(store)
    except ProviderError as exc:
        report.error = str(exc)
        report.pending = pending_count(store, identity)
        report.seconds = time.perf_counter() - started
        raise
    report.seconds = time.perf_counter() - started
    return report


def _prepare(
    store: SqliteStore,
    provider: EmbeddingProvider,
    todo: list[tuple[int, str]],
    identity: str,
    progress: Progress | None,
) -> None:
    """A provider with a `prepare` step (local-fast: embed every new word once) is shown
    the texts still to embed before the first batch, so its cost is paid, and shown as
    progress, in one measured stage."""
    prepare = getattr(provider, "prepare", None)
    if prepare is None or not todo:
        return

    def pending() -> Iterator[str]:
        ids = [nid for nid, _path in todo]
        for start in range(0, len(ids), 500):
            sources = load_sources(store, ids[start : start + 500])
            for source in sources.values():
                texts = texts_of(source)
                have = _stored(store, identity, [t.hash for t in texts])
                yield from (t.text for t in texts if (t.hash, t.space) not in have)

    prepare(pending(), progress)


def _stored(store: SqliteStore, identity: str, hashes: list[str]) -> set[tuple[str, str]]:
    if not hashes:
        return set()
    return {
        (str(h), str(s))
        for h, s in store.query(
            "SELECT hash, space FROM vec_texts WHERE identity = ? AND hash IN"
            f" ({','.join('?' * len(hashes))})",
            [identity, *hashes],
        )
    }


def _flush(
    store: SqliteStore, provider: EmbeddingProvider, queue: list[tuple[str, str, str]]
) -> int:
    if not queue:
        return 0
    from ..providers.base import normalise

    try:
        vectors = normalise(provider.embed([text for _h, _s, text in queue], "passage"))
    except PartialEmbedding as exc:  # keep what the requests that succeeded returned
        _flush_vectors(store, provider, [queue[i] for i in exc.rows], normalise(exc.vectors))
        raise
    return _flush_vectors(store, provider, queue, vectors)


def _flush_vectors(
    store: SqliteStore, provider: EmbeddingProvider, queue: list[tuple[str, str, str]], vectors: Any
) -> int:
    import numpy as np

    if vectors.ndim != 2 or vectors.shape[0] != len(queue) or vectors.shape[1] == 0:
        raise ProviderError(
            f"{provider.identity} returned {vectors.shape[0] if vectors.ndim else 0} vectors "
            f"for {len(queue)} texts"
        )
    if not np.all(np.isfinite(vectors)):
        raise ProviderError(f"{provider.identity} returned vectors with NaN or infinity")
    with store.transaction():
        _ensure_table(store, provider.identity, int(vectors.shape[1]))
        for (digest, space, _text), vector in zip(queue, vectors, strict=True):
            store.db.execute(
                "INSERT INTO vec_texts(hash, identity, space) VALUES (?,?,?)",
                (digest, provider.identity, space),
            )
            rowid = store.db.last_insert_rowid()
            store.db.execute(
                "INSERT INTO vec_items(rowid, embedding, space) VALUES (?,?,?)",
                (rowid, np.asarray(vector, dtype=np.float32).tobytes(), space),
            )
    return len(queue)
