"""Vectors keyed by (text hash, provider identity), kept by the store (sqlite-vec in the
SQLite backend: lore.store.sqlite_vectors).

The texts each note wants embedded (written by index.semantic) are embedded here when they
have no vector for the current provider yet, in batches, each batch committed on its own,
so an interrupted run resumes where it stopped and a second run embeds nothing and calls
nothing. Vectors are float32, L2-normalised on write. The index records the identity and
dimension in `meta` (embed_identity, embed_dim); vectors of another identity are never mixed in: a
different provider is refused until `lore embed --rebuild`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..providers.base import PartialEmbedding, ProviderError
from ..store.base import Store
from .semantic import load_sources, planned, texts_of

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


def load_vec(store: Store) -> None:
    """Load the vector extension (once); a clear error when it is missing."""
    store.load_vec()


def check_layout(store: Store) -> None:
    """Vectors stored in an older table layout are dropped (they are re-embedded)."""
    if store.get_meta("embed_identity") is not None and store.get_meta("vec_layout") != VEC_LAYOUT:
        drop_vectors(store)


def stored_identity(store: Store) -> tuple[str | None, int | None]:
    return store.embed_identity()


def has_vectors(store: Store) -> bool:
    return store.has_vectors()


def vector_count(store: Store) -> int:
    return store.vector_count()


def check_identity(store: Store, identity: str) -> None:
    recorded, _dim = stored_identity(store)
    if recorded is not None and recorded != identity and vector_count(store):
        raise IdentityMismatch(
            f"the index holds vectors from {recorded}, not from the configured {identity}",
            hint="run `lore embed --rebuild` to re-embed with the new model",
        )


def drop_vectors(store: Store) -> None:
    """Forget every vector and the recorded identity (for --rebuild)."""
    store.drop_vectors()


def _missing(store: Store, identity: str) -> list[tuple[int, str]]:
    """(note id, path) of notes with a text that has no vector for `identity`."""
    return store.missing_vectors(identity)


def pending_count(store: Store, identity: str) -> int:
    return len(_missing(store, identity))


def ensure_vector_table(store: Store, identity: str, dim: int) -> None:
    """The vector table for `dim`, with the identity recorded on first use (inside a
    transaction); a dimension other than the recorded one is refused."""
    recorded, recorded_dim = stored_identity(store)
    if recorded_dim is not None and recorded_dim != dim:
        raise ProviderError(
            f"{identity} returned {dim}-dimensional vectors; the index holds {recorded_dim}",
            hint="run `lore embed --rebuild` if the model really changed",
        )
    store.ensure_vector_table(dim)
    if recorded is None:
        store.set_meta("embed_identity", identity)
        store.set_meta("embed_dim", str(dim))
        store.set_meta("vec_layout", VEC_LAYOUT)


def garbage_collect(store: Store) -> int:
    """Drop vectors whose text no note uses any more (inside a transaction)."""
    return store.drop_unused_vectors()


def embed_missing(
    store: Store,
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
            have = store.embedded_keys(identity, [t.hash for t in texts])
            if store.planned_keys(nid) != {(t.hash, t.kind) for t in texts}:
                with store.transaction():  # tags changed since planning: plan again
                    store.write_texts(nid, planned(texts))
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
        if store.has_unused_vectors():
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
    store: Store,
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
                have = store.embedded_keys(identity, [t.hash for t in texts])
                yield from (t.text for t in texts if (t.hash, t.space) not in have)

    prepare(pending(), progress)


def _flush(store: Store, provider: EmbeddingProvider, queue: list[tuple[str, str, str]]) -> int:
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
    store: Store, provider: EmbeddingProvider, queue: list[tuple[str, str, str]], vectors: Any
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
        ensure_vector_table(store, provider.identity, int(vectors.shape[1]))
        for (digest, space, _text), vector in zip(queue, vectors, strict=True):
            blob = np.asarray(vector, dtype=np.float32).tobytes()
            store.add_vector(digest, provider.identity, space, blob)
    return len(queue)
