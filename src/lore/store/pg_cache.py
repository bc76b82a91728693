"""What the reads of one generation of a PostgreSQL index share (issue 15): values that
change only when a sync commits (the full-text statistics, a term's id and document
frequency, a long phrase's notes, a term's postings), read once and reused by every
search until the next sync, instead of a round trip each per search.

A read snapshot (lore.store.pg_base.snapshot) reads the vault's generation counter, which
every committed write transaction moves on, in the same statement that fixes what the
snapshot sees, and hands the reads the cache of that generation: a value kept from an
older generation is never served, and a write transaction (whose statistics change under
it) gets no cache at all.

Within a generation the cache holds the values asked for most, up to MAX_BYTES: the
postings of the words many questions hold ("the", "what", 什么) stay; a rarer word's are
kept while there is room, and make way for a value asked for as often or more. (It used to
start again when full: at a million notes it was full after a few questions, and every
question read the common words' postings from the server and decoded them again. Letting
the least recently used go instead kept almost nothing either: a question's rare words
push out the common ones before the next question wants them.) A write lets it all go as
it begins, and the memory with it.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
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
        self._asked: Counter[Hashable] = Counter()  # times each key was asked for
        # The values that weigh something, by the times they were asked for, each group
        # the least recently used first: what makes room is found without a pass over all.
        self._weighing: dict[int, OrderedDict[Hashable, None]] = {}
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
            self._asked.clear()
            self._weighing.clear()
            self._bytes = 0
        if held >= TRIM_BYTES:
            _give_back_memory()

    def get(self, key: Hashable) -> Any:
        """The value kept under `key`, or None."""
        with self._lock:
            asked = self._asked[key] = self._asked[key] + 1
            if len(self._asked) > 4 * MAX_ENTRIES:  # keys asked once and never kept
                self._asked = Counter({k: self._asked[k] for k in self._values})
            found = self._values.get(key)
            if found is None:
                return None
            self._values.move_to_end(key)
            if found[1]:
                self._ungroup(key, asked - 1)
                self._weighing.setdefault(asked, OrderedDict())[key] = None
            return found[0]

    def put(self, key: Hashable, value: Any, size: int = 0) -> None:
        """Keep `value`; `size`: its bytes. Room is made by letting go of the values asked
        for least, the least recently used first, none asked for more often than this one
        (if that is not enough, this one is not kept); a value over a quarter of MAX_BYTES
        is never kept."""
        with self._lock:
            self._forget(key)
            asked = self._asked[key]
            if size > MAX_BYTES // 4 or not self._make_room(size, asked):
                return
            self._values[key] = (value, size)
            self._bytes += size
            if size:
                self._weighing.setdefault(asked, OrderedDict())[key] = None
            if len(self._values) > MAX_ENTRIES:
                self._forget(next(iter(self._values)))

    def _make_room(self, size: int, asked: int) -> bool:
        """Let values go, as `put` says, until `size` more bytes fit (False: they cannot)."""
        over = self._bytes + size - MAX_BYTES
        if over <= 0:
            return True
        chosen, freed = [], 0
        for times in sorted(t for t in self._weighing if t <= asked):
            for k in self._weighing[times]:
                if freed >= over:
                    break
                chosen.append(k)
                freed += self._values[k][1]
        if freed < over:
            return False
        for k in chosen:
            self._forget(k)
        return True

    def _forget(self, key: Hashable) -> None:
        """Let the value under `key` go, if one is kept."""
        found = self._values.pop(key, None)
        if found is not None:
            self._bytes -= found[1]
            if found[1]:
                self._ungroup(key, self._asked[key])

    def _ungroup(self, key: Hashable, asked: int) -> None:
        group = self._weighing[asked]
        del group[key]
        if not group:
            del self._weighing[asked]

    @property
    def size(self) -> int:
        """The bytes kept."""
        return self._bytes
