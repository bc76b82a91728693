"""What the reads of one generation of a PostgreSQL index share (issue 15): values that
change only when a sync commits (the full-text statistics, a term's id and document
frequency, a long phrase's notes), read once and reused by every search until the next
sync, instead of a round trip each per search.

A read snapshot (lore.store.pg_base.snapshot) reads the vault's generation counter, which
every committed write transaction moves on, in the same statement that fixes what the
snapshot sees, and hands the reads the cache of that generation: a value kept from an
older generation is never served, and a write transaction (whose statistics change under
it) gets no cache at all.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

MAX_ENTRIES = 20_000  # past this, the cache starts again (a long-running server's bound)
# Postings kept (lore.store.pg_lexical), decoded: 48 bytes a note's (its id, length and
# four counts as 8-byte numbers), 24 a part's, so up to about 100 MB; a term holding more
# than a quarter of this is read each time it is wanted, never kept.
MAX_SIZE = 2_000_000


class ReadCache:
    """Values keyed by what they were read for, all from one generation of the index."""

    def __init__(self) -> None:
        self.generation: int | None = None
        self._values: dict[Hashable, Any] = {}
        self._size = 0

    def at(self, generation: int) -> ReadCache:
        """This cache for reads of `generation` (emptied when that is another one)."""
        if (
            generation != self.generation
            or len(self._values) > MAX_ENTRIES
            or self._size > MAX_SIZE
        ):
            self._values = {}
            self._size = 0
            self.generation = generation
        return self

    def get(self, key: Hashable) -> Any:
        """The value kept under `key`, or None."""
        return self._values.get(key)

    def put(self, key: Hashable, value: Any, size: int = 0) -> None:
        """Keep `value`; `size`: what it weighs against MAX_SIZE (a value that would weigh
        more than a quarter of it is not kept)."""
        if size > MAX_SIZE // 4:
            return
        self._values[key] = value
        self._size += size
