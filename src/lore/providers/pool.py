"""Embedding on every core: worker processes, each with its own copy of a model.

`WorkerPool.embed` cuts one batch into one shard per worker, balanced by length (the
model's cost grows with the tokens), runs the shards at once and returns the rows in the
caller's order. The vectors are the model's, whatever the split: a text's vector does not
depend on the texts it was batched with. Workers are started lazily with "spawn" (nothing of
the parent's open index is inherited) and build their model from `factory`, a picklable
callable. A worker that dies (killed, out of memory, a crash in the C engine) fails the
call with one ProviderError line; the caller keeps every batch committed before it. A
worker whose parent dies exits on its own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from .base import Kind, ProviderError

if TYPE_CHECKING:
    from .base import EmbeddingProvider, Matrix

_WORKER: Any = None  # the model of this worker process


def _start(factory: Callable[[], EmbeddingProvider], parent: int) -> None:
    global _WORKER
    import threading

    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    _WORKER = factory()


def _exit_with(parent: int) -> None:
    """A worker whose parent was killed (SIGKILL, OOM) would idle forever holding its
    model: it leaves as soon as it is orphaned."""
    import os
    import time

    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def _embed(texts: list[str], kind: Kind) -> Matrix:
    rows: Matrix = _WORKER.embed(texts, kind)
    return rows


def shards(sizes: list[int], count: int) -> list[list[int]]:
    """Indexes of `sizes` cut into at most `count` groups of near-equal total size (longest
    first onto the lightest group), each group in ascending order: deterministic."""
    groups: list[list[int]] = [[] for _ in range(max(1, min(count, len(sizes))))]
    loads = [0] * len(groups)
    for index in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        lightest = loads.index(min(loads))
        groups[lightest].append(index)
        loads[lightest] += sizes[index]
    return [sorted(group) for group in groups if group]


class WorkerPool:
    """`workers` processes embedding shards of each batch at once."""

    def __init__(self, factory: Callable[[], EmbeddingProvider], workers: int, label: str):
        self.factory = factory
        self.workers = max(1, workers)
        self.label = label  # names the model in errors
        self._executor: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            import multiprocessing

            self._executor = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start,
                initargs=(self.factory, os.getpid()),
            )
        return self._executor

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        import numpy as np

        groups = shards([len(t) for t in texts], self.workers)
        pool = self._pool()
        try:
            futures = [pool.submit(_embed, [texts[i] for i in group], kind) for group in groups]
            parts = [future.result() for future in futures]
        except BrokenProcessPool:
            self.close()
            raise ProviderError(
                f"{self.label}: an embedding worker process died (killed or crashed); "
                "the vectors stored so far are kept, run `lore embed` again to resume"
            ) from None
        except ProviderError:
            raise
        except BaseException:  # interrupted: stop the workers, keep what was committed
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None
            raise
        dim = next((p.shape[1] for p in parts if p.ndim == 2 and p.shape[0]), 0)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for group, part in zip(groups, parts, strict=True):
            out[group] = part
        return out

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
