"""Appending to a daily note safely: an exclusive lock on the file, then one O_APPEND write.

Two `remember` calls at the same moment (two processes, two threads) take turns on the
lock; each reads the note as it is under the lock (so an edit made by hand in between is
seen, kept, and never rewritten) and appends its own bytes at the end. Nothing is lost and
nothing is written twice: the decision to write is made under the lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import PathError


@contextmanager
def _locked(fd: int) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: lock the first byte instead
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
        try:
            yield
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def append_locked(path: Path, build: Callable[[str], str | None]) -> tuple[str, str | None]:
    """Under an exclusive lock on `path` (created when missing), call `build(current text)`;
    append what it returns (None: append nothing). Returns (text before, text appended)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise PathError(f"{path}: the daily note is not a regular file; not written")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        with _locked(fd):
            raw = _read_all(fd)
            try:
                current = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise PathError(
                    f"{path}: not valid UTF-8 (byte {exc.start}); not written, fix the file first"
                ) from None
            addition = build(current)
            if addition:
                data = addition.encode("utf-8")
                written = 0
                while written < len(data):
                    written += os.write(fd, data[written:])
                os.fsync(fd)
            return current, addition
    finally:
        os.close(fd)
