"""Vaults for request threads, and the index kept in step with the files.

A Vault holds one SQLite connection, which is not to be used by two threads at once. The
pool opens up to `size` vaults of the same folder and lends each to one worker thread at a
time (requests run library calls in worker threads, never on the event loop). Readers
never block each other: the index is in WAL mode.

Freshness: one background thread owns its own vault and runs lore.watch's Watcher (file
system events, or a stat pass each second), which syncs after each settled burst of
changes. Readers never wait for it; a write made through the server syncs at once on its
own vault, so its answer and every later read already see it.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from ..vault import Vault

T = TypeVar("T")
log = logging.getLogger("lore.serve")


class VaultPool:
    def __init__(self, opener: Callable[[], Vault], size: int) -> None:
        self._open = opener
        self._idle: queue.LifoQueue[Vault] = queue.LifoQueue()
        self._made = 0
        self._size = size
        self._lock = threading.Lock()
        self._all: list[Vault] = []

    @contextlib.contextmanager
    def vault(self) -> Iterator[Vault]:
        """A vault for this thread alone until the block ends (blocks while all are lent)."""
        try:
            vault = self._idle.get_nowait()
        except queue.Empty:
            vault = self._new_or_wait()
        try:
            yield vault
        finally:
            self._idle.put(vault)

    def _new_or_wait(self) -> Vault:
        with self._lock:
            if self._made < self._size:
                self._made += 1
                try:
                    vault = self._open()
                except BaseException:
                    self._made -= 1
                    raise
                self._all.append(vault)
                return vault
        return self._idle.get()

    def run(self, work: Callable[[Vault], T]) -> T:
        with self.vault() as vault:
            return work(vault)

    def close(self) -> None:
        for vault in self._all:
            vault.close()
        self._all.clear()


@dataclass
class SyncState:
    """What the status page says about freshness."""

    source: str = "none"  # events | polling | none (watching off)
    last: str | None = None  # ISO time of the last sync that ran
    error: str | None = None
    batches: int = 0
    changes: list[str] = field(default_factory=list)  # the last few changed paths


class Freshness:
    """The watcher thread (see the module docstring)."""

    def __init__(self, opener: Callable[[], Vault], backend: str) -> None:
        self._open = opener
        self.backend = backend
        self.state = SyncState()
        self._watcher: object | None = None
        self._thread: threading.Thread | None = None
        self.ready = threading.Event()  # set after the first sync

    def start(self) -> None:
        if self.backend == "off":
            self.ready.set()
            return
        self._thread = threading.Thread(target=self._run, name="lore-serve-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from ..watch import WatchBatch, Watcher

        backend = "auto" if self.backend == "auto" else self.backend
        with self._open() as vault:
            watcher = Watcher(vault, backend=backend)
            self._watcher = watcher

            def on_batch(batch: WatchBatch) -> None:
                self.state.last = batch.time
                self.state.error = batch.error
                self.state.batches += 1
                moved = [f"{a} → {b}" for a, b in batch.renamed]
                changed = [*batch.added, *batch.changed, *batch.deleted, *moved]
                self.state.changes = (changed + self.state.changes)[:20]
                if batch.error:
                    log.warning("sync: %s", batch.error)
                self.ready.set()

            def on_start(source: str) -> None:
                self.state.source = source

            try:
                watcher.run(on_batch, on_start=on_start)
            except Exception:  # the server keeps answering from the index as it is
                log.exception("the watcher stopped; the index no longer follows the files")
                self.state.error = "the watcher stopped; restart the server to follow the files"
            finally:
                self.ready.set()

    def stop(self) -> None:
        from ..watch import Watcher

        if isinstance(self._watcher, Watcher):
            self._watcher.stop()
        if self._thread is not None:
            self._thread.join(timeout=10)
