"""What the reads of one generation of a PostgreSQL index share (issue 15): values that
change only when a sync commits (the full-text statistics, a term's id and document
frequency, a long phrase's notes, a term's postings), read once and reused by every
search until the next sync, instead of a round trip each per search.

A read snapshot (lore.store.pg_base.snapshot) reads the vault's generation counter, which
every committed write transaction moves on, in the same statement that fixes what the
snapshot sees, and hands the reads the cache of that generation: a value kept from an
older generation is never served, and a write transaction (whose statistics change under
it) gets no cache at all.

Within a generation the cache holds values up to MAX_BYTES, the least recently used let
go first. (It used to start again when it held two million postings: at a million notes
that was every few questions, the common words' postings read and decoded again each
time. Keeping the values asked for most instead was tried, refusing a newcomer asked for
less often: it refused a term's postings on their first read, so a search read them again
for its count of notes, and read more from the server than this.) A write lets it all go
as it begins, and the memory with it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

MAX_ENTRIES = 50_000  # values kept at most (a term's id is one)
# Bytes of values kept (postings, mostly: 12 bytes a note's, 9 a part's, as
# lore.store.pg_packs decodes them).
MAX_BYTES = 128 * 2**20
# Past this many bytes let go, the C library is asked to hand its free memory back.
TRIM_BYTES = 8 * 2**20


def _give_back_memory() -> None:
    """Return the process's free heap memory to the system where the C library can
    (glibc's malloc_trim; elsewhere nothing). glibc keeps what numpy frees for the process:
    at a million notes, a sync after 100 searches grew the client 140 MB past them, the
    postings they kept let go but not returned (10 ms, once per write)."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # no such C library (macOS, Windows)
        return
    trim(0)


class ReadCache:
    """Values keyed by what they were read for, all from one generation of the index. Safe
    to share between threads (a search ranks the notes and their parts on two)."""

    def __init__(self) -> None:
        self.generation: int | None = None
        self._values: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()  # oldest first
        # Those of them that weigh something, the least recently used first: room is made
        # without a pass over every value kept (term ids, mostly, in a long-running server).
        self._weighing: OrderedDict[Hashable, None] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def at(self, generation: int) -> ReadCache:
        """This cache for reads of `generation` (emptied when that is another one)."""
        if generation != self.generation:
            self.clear()
            self.generation = generation
        return self

    def clear(self) -> None:
        """Let every value go, and the memory they took with them."""
        with self._lock:
            held = self._bytes
            self._values.clear()
            self._weighing.clear()
            self._bytes = 0
        if held >= TRIM_BYTES:
            _give_back_memory()

    def get(self, key: Hashable) -> Any:
        """The value kept under `key`, or None."""
        with self._lock:
            found = self._values.get(key)
            if found is None:
                return None
            self._values.move_to_end(key)
            if found[1]:
                self._weighing.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, size: int = 0) -> None:
        """Keep `value`; `size`: its bytes. The least recently used values are let go to
        make room; a value over a quarter of MAX_BYTES is never kept."""
        with self._lock:
            self._forget(key)
            if size > MAX_BYTES // 4:
                return
            while self._bytes + size > MAX_BYTES:
                self._forget(next(iter(self._weighing)))
            self._values[key] = (value, size)
            self._bytes += size
            if size:
                self._weighing[key] = None
            if len(self._values) > MAX_ENTRIES:
                self._forget(next(iter(self._values)))

    def _forget(self, key: Hashable) -> None:
        """Let the value under `key` go, if one is kept."""
        found = self._values.pop(key, None)
        if found is not None:
            self._bytes -= found[1]
            if found[1]:
                del self._weighing[key]

    @property
    def size(self) -> int:
        """The bytes kept."""
        return self._bytes
