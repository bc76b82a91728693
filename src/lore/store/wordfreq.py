"""The segmenter's dictionary compiled into a SQLite file: word → frequency, read by key.

jieba's dictionary is a 5 MB text of 349,046 lines; parsing it is most of what a one-shot
Chinese `lore search` would spend. Compiled once into a table keyed by the word, a query
reads only the words that occur in its own text (a few hundred keyed lookups) plus the
total frequency. The file is derived data: it lives in the user's cache folder, carries the
stamp of the dictionary it was compiled from, and is rebuilt when that changes or when it
cannot be read; deleting it loses nothing but time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import apsw

FORMAT = 1  # bump when the table layout changes: older files are rebuilt
_CHUNK = 500  # words per lookup statement (well under SQLite's bound-parameter limit)


class WordFreq:
    """An open compiled dictionary (read-only)."""

    def __init__(self, conn: apsw.Connection, total: int, max_len: int, agrees: bool) -> None:
        self._conn = conn
        self.total = total
        self.max_len = max_len
        self.agrees = agrees  # what the writer found when it checked its cuts

    def lookup(self, words: Iterable[str]) -> dict[str, int]:
        """{word: frequency} for those of `words` that the dictionary holds."""
        wanted = sorted(set(words))
        found: dict[str, int] = {}
        for i in range(0, len(wanted), _CHUNK):
            chunk = wanted[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT word, freq FROM words WHERE word IN ({marks})"  # noqa: S608
            for word, freq in self._conn.execute(sql, chunk):
                found[str(word)] = int(freq)
        return found

    def close(self) -> None:
        self._conn.close()


def open_wordfreq(path: Path, stamp: str) -> WordFreq | None:
    """The compiled dictionary at `path` if it was compiled from the dictionary `stamp`
    names and is complete; None when it is missing, stale or unreadable."""
    if not path.is_file():
        return None
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return None
    try:
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        if meta.get("format") != str(FORMAT) or meta.get("stamp") != stamp:
            conn.close()
            return None
        return WordFreq(conn, int(meta["total"]), int(meta["max_len"]), meta.get("agrees") == "1")
    except (apsw.Error, KeyError, ValueError):
        conn.close()
        return None


def write_wordfreq(
    path: Path, stamp: str, freqs: Mapping[str, int], total: int, *, agrees: bool
) -> None:
    """Compile `freqs` into `path`, with what checking its cuts found (`agrees`). Written
    beside it under a temporary name and renamed into place: a reader never sees half a
    file, and two writers never mix theirs."""
    import tempfile  # deferred: a search only reads

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        conn = apsw.Connection(tmp)
        try:
            with conn:
                conn.execute(
                    "CREATE TABLE words(word TEXT PRIMARY KEY, freq INTEGER NOT NULL) WITHOUT ROWID"
                )
                conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.executemany("INSERT INTO words VALUES (?, ?)", sorted(freqs.items()))
                meta = {
                    "format": str(FORMAT),
                    "stamp": stamp,
                    "total": str(total),
                    "max_len": str(max(map(len, freqs), default=0)),
                    "agrees": "1" if agrees else "0",
                }
                conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        finally:
            conn.close()
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
