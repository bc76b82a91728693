"""`lore watch`: keep the index in step with the vault while its files change.

Changes are noticed by the file system's own events (watchdog, the `watch` extra: inotify,
FSEvents, ReadDirectoryChangesW) or, without it, by a stat pass every `interval` seconds
(the same cheap pass a no-op sync makes). A burst of changes is synced once it has settled:
no new change for `debounce` seconds, or `max_wait` seconds after the burst began, whichever
comes first, so a file written continuously still gets indexed.

Each sync is the ordinary incremental sync: it reads the index without a lock, and takes
the write lock only for the short transaction that writes what changed. Readers are never
blocked (WAL). Nothing here prints: each sync is handed to a callback as a WatchBatch.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import LoreError
from .ingest.scan import ALWAYS_IGNORED_DIRS, IGNORE_FILE, scan_vault
from .model.sync import Skipped, SyncReport
from .safe_write import TEMP_PREFIX

if TYPE_CHECKING:
    from .vault import Vault

DEFAULT_DEBOUNCE = 0.5
DEFAULT_INTERVAL = 1.0
DEFAULT_MAX_WAIT = 10.0
RETRY_DELAY = 2.0  # seconds before a sync that could not run is tried again
BACKENDS = ("auto", "events", "poll")


@dataclass(frozen=True)
class WatchBatch:
    """One sync made by the watcher. `renamed` pairs a deleted path with an added one that
    has exactly the same content; `skipped`/`warnings` list only problems not reported by an
    earlier batch. `error` is set when the sync could not run (it is retried)."""

    time: str
    initial: bool
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def eventful(self) -> bool:
        """Did anything happen worth telling (a change, a new problem, an error)?"""
        return bool(
            self.added
            or self.changed
            or self.deleted
            or self.renamed
            or self.skipped
            or self.warnings
            or self.error
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["renamed"] = [{"from": a, "to": b} for a, b in self.renamed]
        data["seconds"] = round(self.seconds, 4)
        return data


class Debouncer:
    """When to sync: after `debounce` seconds without a change, or `max_wait` seconds after
    the first unsynced change. Pure: the caller passes the time."""

    def __init__(self, debounce: float, max_wait: float) -> None:
        self.debounce = debounce
        self.max_wait = max(max_wait, debounce)
        self.first: float | None = None
        self.last: float | None = None

    def change(self, now: float) -> None:
        if self.first is None:
            self.first = now
        self.last = now

    @property
    def pending(self) -> bool:
        return self.last is not None

    def due(self, now: float) -> bool:
        if self.first is None or self.last is None:
            return False
        return now - self.last >= self.debounce or now - self.first >= self.max_wait

    def wait_time(self, now: float, idle: float) -> float:
        """How long to sleep before the next look (`idle` when nothing is pending)."""
        if self.first is None or self.last is None:
            return idle
        until = min(self.last + self.debounce, self.first + self.max_wait)
        return max(0.0, min(idle, until - now))

    def reset(self) -> None:
        self.first = self.last = None


class ChangeSource(Protocol):
    name: str

    def poll(self) -> bool:
        """True when something changed since the last call."""
        ...

    def close(self) -> None: ...


class PollingSource:
    """A stat pass over the vault's notes (and its .loreignore) compared with the last one."""

    name = "polling"

    def __init__(self, root: Path, *, gitignore: bool = True) -> None:
        self.root = root
        self.gitignore = gitignore
        self.last = self._snapshot()

    def _snapshot(self) -> tuple[frozenset[tuple[str, int, int]], tuple[int, int] | None]:
        notes = frozenset(
            (f.path, f.mtime_ns, f.size)
            for f in scan_vault(self.root, [], gitignore=self.gitignore)
        )
        try:
            st = os.stat(self.root / IGNORE_FILE)
            ignore: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            ignore = None
        return notes, ignore

    def poll(self) -> bool:
        current = self._snapshot()
        changed = current != self.last
        self.last = current
        return changed

    def close(self) -> None:
        pass


def _relevant(root: Path, path: str) -> bool:
    """Is a file-system event on `path` possibly a change to the notes?"""
    try:
        rel = Path(os.path.relpath(path, root))
    except ValueError:
        return False
    parts = rel.parts
    if not parts or parts[0] == "..":
        return False
    if any(part in ALWAYS_IGNORED_DIRS for part in parts[:-1]) or parts[0] in ALWAYS_IGNORED_DIRS:
        return False
    return not parts[-1].startswith(TEMP_PREFIX)  # lore's own temporary files


class EventSource:
    """File-system events through watchdog; raises ImportError/OSError when unavailable."""

    name = "events"
    _WRITES = frozenset({"created", "modified", "deleted", "moved", "closed"})

    def __init__(self, root: Path, wake: threading.Event) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        self._dirty = threading.Event()
        dirty = self._dirty

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                # Reading a note (as the sync does) raises "opened"/"closed_no_write": not
                # a change, and counting it would make every sync trigger the next one.
                if event.event_type not in EventSource._WRITES:
                    return
                paths = [event.src_path, getattr(event, "dest_path", "") or ""]
                if any(p and _relevant(root, os.fsdecode(p)) for p in paths):
                    dirty.set()
                    wake.set()

        self._observer = Observer()
        self._observer.schedule(Handler(), str(root), recursive=True)
        self._observer.daemon = True
        self._observer.start()

    def poll(self) -> bool:
        if self._dirty.is_set():
            self._dirty.clear()
            return True
        return False

    def close(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=2.0)


class Watcher:
    """Watch one open vault. `run()` blocks until `stop()` (safe from a signal handler),
    the timeout, or (with `once`) the first batch of changes has been synced."""

    def __init__(
        self,
        vault: Vault,
        *,
        debounce: float = DEFAULT_DEBOUNCE,
        interval: float = DEFAULT_INTERVAL,
        max_wait: float = DEFAULT_MAX_WAIT,
        backend: str = "auto",
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}")
        self.vault = vault
        self.debouncer = Debouncer(debounce, max_wait)
        self.interval = interval
        self.backend = backend
        self.source_name = "none"
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._reported: set[tuple[str, str]] = set()
        self._last_error: str | None = None

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _source(self) -> ChangeSource:
        if self.backend in ("auto", "events"):
            try:
                return EventSource(self.vault.root, self._wake)
            except (ImportError, OSError):
                if self.backend == "events":
                    raise
        return PollingSource(self.vault.root, gitignore=self.vault.settings.gitignore)

    def run(
        self,
        on_batch: Callable[[WatchBatch], None],
        *,
        once: bool = False,
        timeout: float | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> int:
        """Sync now, then after every settled burst of changes; returns the batches synced
        after the first one. `on_start` gets the name of the change source once watching."""
        end = None if timeout is None else time.monotonic() + timeout
        # Watch first, then sync: a change made during the first sync is not missed.
        source = self._source()
        self.source_name = source.name
        synced = 0
        try:
            if on_start is not None:
                on_start(source.name)
            on_batch(self._sync(initial=True))
            if self._last_error is not None:
                self.debouncer.change(time.monotonic() + RETRY_DELAY)
            while not self._stop.is_set():
                now = time.monotonic()
                if end is not None and now >= end:
                    break
                idle = self.interval if source.name == "polling" else max(self.interval, 1.0)
                pause = self.debouncer.wait_time(now, idle)
                if end is not None:
                    pause = min(pause, max(0.0, end - now))
                self._wake.wait(pause)
                self._wake.clear()
                if self._stop.is_set():
                    break
                now = time.monotonic()
                if source.poll():
                    self.debouncer.change(now)
                if not self.debouncer.due(now):
                    continue
                self.debouncer.reset()
                batch = self._sync(initial=False)
                if self._last_error is not None:
                    # Not synced: try again a little later (as if a change came then).
                    self.debouncer.change(time.monotonic() + RETRY_DELAY)
                if batch.eventful:
                    on_batch(batch)
                if batch.added or batch.changed or batch.deleted or batch.renamed:
                    synced += 1
                    if once:
                        break
        finally:
            source.close()
        return synced

    def _sync(self, *, initial: bool) -> WatchBatch:
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        store = self.vault.store
        if not self.vault.root.is_dir():
            # An unmounted or deleted vault would look like "every note deleted".
            return self._failed(stamp, initial, f"vault {self.vault.root} is not there; not synced")
        try:
            before = {p: s.hash for p, s in store.stored_notes().items()}
            report = self.vault.sync()
        except LoreError as exc:  # busy index, a provider down, ...: retried later
            return self._failed(stamp, initial, str(exc))
        self._last_error = None
        renamed = self._renames(report, before)
        gone = {a for a, _ in renamed}
        came = {b for _, b in renamed}
        problems = {(s.path, s.reason) for s in report.skipped + report.warnings}
        fresh = problems - self._reported
        # Forget problems that went away, so that they are told again if they come back.
        self._reported = (self._reported & problems) | fresh
        return WatchBatch(
            time=stamp,
            initial=initial,
            added=[p for p in report.added if p not in came],
            changed=list(report.changed),
            deleted=[p for p in report.deleted if p not in gone],
            renamed=renamed,
            unchanged=report.unchanged,
            skipped=[s for s in report.skipped if (s.path, s.reason) in fresh],
            warnings=[w for w in report.warnings if (w.path, w.reason) in fresh],
            seconds=report.seconds,
        )

    def _failed(self, stamp: str, initial: bool, message: str) -> WatchBatch:
        """A sync that could not run; the same error twice in a row is told once."""
        repeated = message == self._last_error
        self._last_error = message
        return WatchBatch(time=stamp, initial=initial, error=None if repeated else message)

    def _renames(self, report: SyncReport, before: dict[str, str]) -> list[tuple[str, str]]:
        if not (report.added and report.deleted):
            return []
        after = {p: s.hash for p, s in self.vault.store.stored_notes().items()}
        by_hash: dict[str, list[str]] = {}
        for path in report.deleted:
            if path in before:
                by_hash.setdefault(before[path], []).append(path)
        pairs = []
        for path in report.added:
            candidates = by_hash.get(after.get(path, ""), [])
            if candidates:
                pairs.append((candidates.pop(0), path))
        return pairs
