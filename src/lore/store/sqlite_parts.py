"""The notes' parts ranked in SQLite (fts_sections, lore.retrieve.sections), in two steps:
every part the query matches is scored into a temporary table, then the best parts and
those of the other channels' candidates are read from it.

The first step does not depend on the whole notes' ranking, and both are FTS5 passes that
hold a core each: a search starts it on a second, read-only connection to the same file
(`PartReader`, a thread of its own; apsw leaves Python's lock while SQLite works) and
ranks the whole notes meanwhile. Every write transaction counts itself in meta.commits
(lore.store.sqlite_base), so the second connection's rows are used only when it saw the
state the search's own snapshot sees; otherwise the search ranks the parts itself. The two
threads would queue on the one mutex of SQLite's memory statistic: `unshared_allocator`
turns it off.
"""

from __future__ import annotations

import threading
from typing import Any

import apsw

from .sqlite_base import BUSY_TIMEOUT_MS, COMMITS

BestParts = dict[int, tuple[float, int, int]]  # note id -> (score, the part's start, end)
Clause = tuple[str, list[Any]]  # an SQL condition and its parameters

PART_HITS = "temp.part_hits"


def match_parts(db: apsw.Connection, match: str) -> None:
    """Step one: every part the MATCH expression matches, with its bm25, into PART_HITS
    (the connection's own temporary table; a search before leaves its rows there)."""
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {PART_HITS} (id INTEGER PRIMARY KEY, b REAL NOT NULL);"
        f" DELETE FROM {PART_HITS}"
    )
    db.execute(
        f"INSERT INTO {PART_HITS} SELECT rowid, bm25(fts_sections) FROM fts_sections"
        " WHERE fts_sections MATCH ?",
        (match,),
    )


def best_parts(db: apsw.Connection, filters: Clause, limit: int, among: Clause) -> BestParts:
    """Step two: each note's best part, over the best `limit` parts in PART_HITS that pass
    the `filters` (a condition on the part's note `n`, ANDed; ties by part id) and every
    part of the notes `among` (a condition on `note_id`). A part's note and span are read
    for those parts only: at 100k notes, reading them for every matching part was a third
    of the ranking."""
    where, params = filters
    top = f"SELECT id FROM {PART_HITS} ORDER BY b, id LIMIT ?"
    if where:
        top = (
            f"SELECT h.id FROM {PART_HITS} h JOIN sections s ON s.id = h.id JOIN notes n"
            f" ON n.id = s.note_id WHERE 1{where} ORDER BY h.b, h.id LIMIT ?"
        )
    rows = db.execute(
        f'SELECT s.note_id, h.b, s.start, s."end" FROM {PART_HITS} h JOIN sections s'
        f" ON s.id = h.id WHERE h.id IN ({top}) OR h.id IN (SELECT id FROM sections"
        f" WHERE {among[0]}) ORDER BY h.id",
        [*params, limit, *among[1]],
    )
    best: BestParts = {}
    for nid, score, start, end in rows:  # in part order: the first best part wins
        found = (round(-float(score), 6), int(start), int(end))
        if int(nid) not in best or found[0] > best[int(nid)][0]:
            best[int(nid)] = found
    return best


def commits_seen(db: apsw.Connection) -> int:
    """The write transactions committed in the state the connection reads."""
    return int(db.execute(COMMITS).get or 0)


class _Once:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False


_ALLOCATOR = _Once()


def unshared_allocator() -> None:
    """Turn SQLite's process-wide memory statistic (SQLITE_CONFIG_MEMSTATUS) off, once,
    before the process's first connection. SQLite counts every allocation in it under one
    mutex, and the two connections of a search allocate on two threads: beside the parts'
    first step, bench.scale's 200 queries searched in one process on its 100k-note vault
    ranked the whole notes in 17 ms (median) with it off, 33 ms with it on (alone: 21 ms).
    Left on when a connection is open already (SQLite is configured only while none is) or
    a heap limit, which needs the statistic, is set."""
    with _ALLOCATOR.lock:
        if _ALLOCATOR.done:
            return
        _ALLOCATOR.done = True
        if apsw.connections() or apsw.soft_heap_limit(-1) or apsw.hard_heap_limit(-1):
            return
        apsw.shutdown()
        try:
            apsw.config(apsw.SQLITE_CONFIG_MEMSTATUS, 0)
        finally:
            apsw.initialize()


class PartReader:
    """A second, read-only connection to the index; step one runs on a thread of its own
    (a plain thread, one per search: concurrent.futures would cost a search process the
    import of logging), step two on the caller's, after it."""

    def __init__(self, name: str, flags: int) -> None:
        self.db = apsw.Connection(name, flags=flags)
        self.db.setbusytimeout(BUSY_TIMEOUT_MS)
        self._step: threading.Thread | None = None
        self._seen: int | BaseException = 0

    def match(self, match: str) -> None:
        """Begin step one; `best` waits for it."""
        self._wait()  # one statement at a time on this connection
        self._step = threading.Thread(target=self._match, args=(match,), name="lore-parts")
        self._step.start()

    def _match(self, match: str) -> None:
        try:
            with self.db:  # one read transaction: the commits it counts are those it matched
                commits = commits_seen(self.db)
                match_parts(self.db, match)
            self._seen = commits
        except BaseException as exc:  # handed to the caller's thread by best()
            self._seen = exc

    def _wait(self) -> None:
        if self._step is not None:
            self._step.join()
            self._step = None

    def best(self, commits: int, filters: Clause, limit: int, among: Clause) -> BestParts | None:
        """Step two, or None when step one did not see `commits` (the state of the
        caller's snapshot) or this connection no longer does (a write transaction
        committed since). Raises what step one raised."""
        self._wait()
        if isinstance(self._seen, BaseException):
            raise self._seen
        if self._seen != commits:
            return None
        best = None
        with self.db:
            if commits_seen(self.db) == commits:
                best = best_parts(self.db, filters, limit, among)
        return best

    def close(self) -> None:
        self._wait()
        self.db.close()
