"""Open files of an untrusted tree for reading: never block on a special file, never follow
a link that was planted or swapped in after the scan looked.

- Every open is non-blocking (`O_NONBLOCK`), so a FIFO named like a note cannot stop a
  sync, and the file is checked with `fstat` on the descriptor that was opened (not on the
  name, which can change in between): anything but a regular file is refused with a
  reason (`is a FIFO (named pipe), not a regular file`).
- `open_in_vault` walks from the vault root one folder at a time with `O_NOFOLLOW` and
  `dir_fd`, so a note or folder replaced by a symbolic link between the scan and the read
  is refused rather than followed out of the vault. A link the scan accepted (to a note
  inside the vault) is resolved once, checked to stay inside, and its target is opened by
  the same walk.

On a platform without `O_NOFOLLOW`/`dir_fd` support the same checks run on resolved paths.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0) | _NONBLOCK
_WALK = bool(_NOFOLLOW) and os.open in os.supports_dir_fd


class FileRefused(Exception):
    """A file that is not read; the message is the one-line reason."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def kind_of(mode: int) -> str | None:
    """What a non-regular file is ('a FIFO (named pipe)', ...); None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _checked(fd: int) -> tuple[int, os.stat_result]:
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    kind = kind_of(st.st_mode)
    if kind is not None:
        os.close(fd)
        raise FileRefused(f"is {kind}, not a regular file; skipped")
    return fd, st


def open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """(descriptor, its stat) of a regular file the user named (links followed); FileRefused
    for anything else, OSError when it cannot be opened. The caller closes the descriptor."""
    return _checked(os.open(path, _FLAGS))


def _refused_link(exc: OSError, what: str) -> FileRefused | None:
    # ELOOP: the name is a symbolic link (O_NOFOLLOW); ENOTDIR: a folder became a file/link.
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return FileRefused(
            f"{what} became a symbolic link or changed during the sync; not followed"
        )
    return None


def _walk_open(root: Path, parts: list[str]) -> int:
    """Open root/parts... with no link followed at any step."""
    dir_fd = os.open(root, os.O_RDONLY | _DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for part in parts[:-1]:
            try:
                next_fd = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=dir_fd)
            except OSError as exc:
                raise _refused_link(exc, "a folder on its path") or exc from None
            os.close(dir_fd)
            dir_fd = next_fd
        return os.open(parts[-1], _FLAGS | _NOFOLLOW, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def _inside(root: Path, rel: str) -> str | None:
    """The vault-relative path `rel` really names (links resolved), or None if outside."""
    real = Path(os.path.realpath(root / rel))
    if real == root or root not in real.parents:
        return None
    return real.relative_to(root).as_posix()


def open_in_vault(root: Path, rel: str) -> tuple[int, os.stat_result]:
    """(descriptor, its stat) of the note `rel` (POSIX, relative to the resolved `root`),
    opened without following a link that leaves the vault or appeared after the scan."""
    parts = rel.split("/")
    if not _WALK:  # no O_NOFOLLOW/dir_fd: check the resolved path instead
        target = _inside(root, rel)
        if target is None:
            raise FileRefused("is a symbolic link out of the vault; not followed")
        return open_regular(root / target)
    try:
        fd = _walk_open(root, parts)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        # The note itself is a link: follow it once, to a note inside the vault only.
        target = _inside(root, rel)
        if target is None:
            raise FileRefused("is a symbolic link out of the vault; not followed") from None
        try:
            fd = _walk_open(root, target.split("/"))
        except OSError as again:
            raise _refused_link(again, "its link target") or again from None
    return _checked(fd)


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the descriptor (fewer at the end of the file)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
