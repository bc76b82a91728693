"""Appending to a daily note safely: an exclusive lock, then a new version of the whole file
written beside it and renamed over it.

Two `remember` calls at the same moment (two processes, two threads) take turns on the
lock; each reads the note as it is under the lock (so an edit made by hand in between is
seen and kept) and writes it back with its own entry at the end. Nothing is lost and
nothing is written twice: the decision to write is made under the lock. A crash at any
point leaves either the old note or the new one, never a torn write: the new text is
flushed to a temporary file before the rename (a SIGKILL can cut a large write() short).

The lock is held on a hidden sidecar file (`.NAME.lock`, never indexed: not Markdown), not
on the note itself, because the rename replaces the note's inode: a writer waiting on the
old inode's lock would otherwise write into a file that is no longer there.
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


def _replace(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, flush it, rename it over `path`."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        data = text.encode("utf-8")
        written = 0
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable (POSIX)
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def append_locked(path: Path, build: Callable[[str], str | None]) -> tuple[str, str | None]:
    """Under an exclusive lock for `path` (created when missing), call `build(current text)`
    and write the note back with what it returns at the end (None: write nothing).
    Returns (text before, text appended)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise PathError(f"{path}: the daily note is not a regular file; not written")
    lock_fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        with _locked(lock_fd):
            raw = path.read_bytes() if path.exists() else b""
            try:
                current = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise PathError(
                    f"{path}: not valid UTF-8 (byte {exc.start}); not written, fix the file first"
                ) from None
            addition = build(current)
            if addition or not path.exists():
                _replace(path, current + (addition or ""))
            return current, addition
    finally:
        os.close(lock_fd)
