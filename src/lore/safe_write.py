"""Every write lore makes inside a vault (or a folder it was given), in one place, so that
each refuses the same tricks.

A vault may come from someone else: a shared team folder, a cloned repository, an
archive. It can ship symlinks at the names lore writes (a daily note, its lock, a
temporary file, a folder such as `memory/`) pointing at files of yours outside it. So:

- folders are walked from the root one name at a time, each opened with O_NOFOLLOW relative
  to the one before (and created the same way when missing): a folder reached through a
  symlink is refused, and no link can be swapped in between the check and the write;
- a file is written whole: a temporary file is created with O_CREAT|O_EXCL|O_NOFOLLOW under
  an unpredictable name that does not end in `.md` (`.lore-tmp-<random>.tmp`: never indexed,
  and `lore watch` ignores it), written, flushed to disk, renamed over the target, and the
  folder flushed; a target that is a symlink or not a regular file is refused (a rename
  would replace the link, not follow it, but the vault's author did not mean that either);
- a lock is a sidecar `.NAME.lock` opened with O_NOFOLLOW (never created through a link)
  and checked to be a regular file: the note itself cannot carry it, because each write
  replaces its inode;
- the reads done for a write (the daily note under its lock, a card to fix) open the file
  the same way, non-blocking, and refuse anything but a regular file.

Failures are PathError with one line naming the file, relative to the root.

    with open_folder(vault.root, "memory") as folder:
        folder.write("2026-11-22.md", data)
    append_locked(vault.root, "memory/2026-11-22.md", build)
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from types import TracebackType

from .errors import PathError, shown

TEMP_PREFIX = ".lore-tmp-"  # `lore watch` ignores files named so (lore.watch)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_AT_FD = os.open in os.supports_dir_fd  # POSIX; elsewhere paths, checked with lstat


def _parts(rel: str | PurePosixPath) -> list[str]:
    text = str(rel).replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise PathError(f"{shown(text)}: must be a path inside the folder, not an absolute one")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathError(f"{shown(text)}: must not leave the folder ('..')")
    return parts


def _refusal(rel: str, reason: str) -> PathError:
    hint = None
    if "symlink" in reason or "outside" in reason:
        hint = (
            "lore never writes through a symlink in a vault: remove the link or replace it"
            " with a real file or folder"
        )
    return PathError(f"{shown(rel)}: {reason}; not written", hint=hint)


def _os_error(rel: str, exc: OSError) -> PathError:
    return PathError(f"{shown(rel)}: cannot write: {exc.strerror or exc}")


class Folder:
    """A folder inside `root`, opened without following links (a file descriptor on POSIX).
    Names given to its methods are plain file names in it."""

    def __init__(self, root: Path, rel: str, fd: int | None) -> None:
        self.root = root
        self.rel = rel  # relative to root, POSIX separators; "" for the root itself
        self.path = root.joinpath(*rel.split("/")) if rel else root
        self._fd = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Folder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- names relative to the folder ---------------------------------------------------------
    def shown(self, name: str) -> str:
        return f"{self.rel}/{name}" if self.rel else name

    def _at(self, name: str) -> tuple[str, dict[str, int]]:
        """(what to pass os.* for `name`, the dir_fd keyword if any)."""
        if self._fd is None:
            return str(self.path / name), {}
        return name, {"dir_fd": self._fd}

    def lstat(self, name: str) -> os.stat_result | None:
        target, at = self._at(name)
        try:
            return os.stat(target, follow_symlinks=False, **at)
        except FileNotFoundError:
            return None

    def _open(self, name: str, flags: int, mode: int = 0o666) -> int:
        target, at = self._at(name)
        if self._fd is None:
            found = self.lstat(name)
            if found is not None and stat.S_ISLNK(found.st_mode):
                raise _refusal(self.shown(name), "is a symlink")
        try:
            fd = os.open(target, flags | _NOFOLLOW | _CLOEXEC | _BINARY, mode, **at)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a link
                raise _refusal(self.shown(name), "is a symlink") from None
            raise
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise _refusal(self.shown(name), "is not a regular file")
        return fd

    # -- reading ------------------------------------------------------------------------------
    def read(self, name: str) -> bytes | None:
        """The bytes of a regular file in the folder (None when there is none); a symlink,
        a FIFO or a device is refused without being opened for long (non-blocking)."""
        try:
            fd = self._open(name, os.O_RDONLY | _NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise PathError(f"{shown(self.shown(name))}: cannot read: {exc.strerror}") from None
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError as exc:
            raise PathError(f"{shown(self.shown(name))}: cannot read: {exc.strerror}") from None
        finally:
            os.close(fd)

    # -- writing ------------------------------------------------------------------------------
    def check_target(self, name: str) -> os.stat_result | None:
        """The lstat of an existing target (None when missing); refuses a symlink or
        anything but a regular file."""
        found = self.lstat(name)
        if found is not None and not stat.S_ISREG(found.st_mode):
            kind = "is a symlink" if stat.S_ISLNK(found.st_mode) else "is not a regular file"
            raise _refusal(self.shown(name), kind)
        return found

    def write(self, name: str, data: bytes) -> None:
        """Write `data` as `name`, whole or not at all (see the module docstring). The mode
        of a file replaced is kept; a new file gets the umask's."""
        rel = self.shown(name)
        existing = self.check_target(name)
        temp = self._staged(rel, data, None if existing is None else existing.st_mode)
        try:
            (source, _), (target, _) = self._at(temp), self._at(name)
            os.replace(source, target, src_dir_fd=self._fd, dst_dir_fd=self._fd)
            self.sync()
        except OSError as exc:
            raise _os_error(rel, exc) from None
        finally:
            self._unlink_quietly(temp)

    def create(self, names: Iterable[str], data: bytes) -> str:
        """Write `data` under the first of `names` that is free, never replacing anything
        (a name taken by a file, a link or a folder is passed over); the name used."""
        temp = self._staged(self.rel or ".", data, None)
        try:
            for name in names:
                if self._link(temp, name):
                    self.sync()
                    return name
        except OSError as exc:
            raise _os_error(self.rel or ".", exc) from None
        finally:
            self._unlink_quietly(temp)
        raise PathError(f"{shown(self.rel or '.')}: every name tried is taken; not written")

    def _staged(self, rel: str, data: bytes, mode: int | None) -> str:
        """A new temporary file in the folder holding `data`, flushed to disk; its name."""
        import secrets  # deferred: opening an index checks its folder here, writing nothing

        temp = f"{TEMP_PREFIX}{secrets.token_hex(8)}.tmp"
        try:
            fd = self._open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except OSError as exc:
            raise _os_error(rel, exc) from None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.fchmod(fd, stat.S_IMODE(mode))
            os.fsync(fd)
        except OSError as exc:
            self._unlink_quietly(temp)
            raise _os_error(rel, exc) from None
        finally:
            os.close(fd)
        return temp

    def _link(self, temp: str, name: str) -> bool:
        """Give the temporary file the name `name` unless it is taken; True if given."""
        if self.lstat(name) is not None:
            return False
        (source, _), (target, _) = self._at(temp), self._at(name)
        try:  # a hard link is atomic and fails when the name is taken
            os.link(source, target, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: checked above, then rename
            os.replace(source, target, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        return True

    def _unlink_quietly(self, name: str) -> None:
        target, at = self._at(name)
        try:
            os.unlink(target, **at)
        except OSError:
            pass

    def remove(self, name: str) -> None:
        """Remove `name` if it is there (a symlink is removed, never followed)."""
        target, at = self._at(name)
        try:
            os.unlink(target, **at)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise _os_error(self.shown(name), exc) from None

    def remove_empty_folder(self, name: str) -> bool:
        """Remove the subfolder `name` if it is empty (never following a link); True if
        removed. A folder that is not empty, or not there, is left as it is."""
        target, at = self._at(name)
        try:
            os.rmdir(target, **at)
        except OSError:
            return False
        return True

    def sync(self) -> None:
        """Flush the folder itself, so that a rename in it survives a power cut (POSIX)."""
        if self._fd is None:
            return
        try:
            os.fsync(self._fd)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
                raise

    # -- locking ------------------------------------------------------------------------------
    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Hold an exclusive lock for `name` (on `.NAME.lock`, created when missing)."""
        lock_name = f".{name}.lock"
        try:
            fd = self._open(lock_name, os.O_RDWR | os.O_CREAT | _NONBLOCK, 0o644)
        except OSError as exc:
            raise _os_error(self.shown(lock_name), exc) from None
        try:
            with _exclusive(fd):
                yield
        finally:
            os.close(fd)


@contextmanager
def _exclusive(fd: int) -> Iterator[None]:
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


def open_folder(root: Path, rel: str | PurePosixPath = "", *, create: bool = True) -> Folder:
    """Open the folder `rel` under `root` (creating missing folders when `create`), one
    name at a time and never through a symlink; refuses a folder whose real path is not
    under the real `root`. `root` itself is the caller's (the resolved vault, a --out
    folder): it may be reached through links."""
    parts = _parts(rel)
    shown_rel = "/".join(parts)
    fd: int | None = None
    if _AT_FD:
        try:
            fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise PathError(f"{shown(str(root))}: cannot open: {exc.strerror or exc}") from None
    for depth in range(len(parts)):
        parent, fd = fd, None  # _enter closes the parent, whatever happens
        fd = _enter(root, parent, parts[depth], "/".join(parts[: depth + 1]), create)
    folder = Folder(root, shown_rel, fd)
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(folder.path))
    if real != real_root and real_root not in real.parents:
        folder.close()
        raise _refusal(shown_rel, f"resolves outside {root}")
    return folder


def _enter(root: Path, fd: int | None, part: str, rel: str, create: bool) -> int | None:
    """Step from the folder `fd` into its subfolder `part`; the new descriptor (the old
    one is closed)."""
    if fd is None:  # no dir_fd: check the path with lstat, then use it
        path = root.joinpath(*rel.split("/"))
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            if not create:
                raise PathError(f"{shown(rel)}: no such folder") from None
            try:
                os.mkdir(path)
            except FileExistsError:
                pass
            except OSError as exc:
                raise _os_error(rel, exc) from None
            found = os.lstat(path)
        if not stat.S_ISDIR(found.st_mode):
            raise _refusal(rel, "is a symlink" if stat.S_ISLNK(found.st_mode) else "not a folder")
        return None
    try:
        for _attempt in range(2):
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
                break
            except FileNotFoundError:
                if not create:
                    raise PathError(f"{shown(rel)}: no such folder") from None
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile by another writer: open it
        else:  # pragma: no cover - created and removed again between two calls
            raise PathError(f"{shown(rel)}: vanished while being created")
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            found = os.stat(part, dir_fd=fd, follow_symlinks=False)
            reason = "is a symlink" if stat.S_ISLNK(found.st_mode) else "is not a folder"
            raise _refusal(rel, reason) from None
        raise _os_error(rel, exc) from None
    finally:
        os.close(fd)
    return child


def _split(rel: str) -> tuple[str, str]:
    parts = _parts(rel)
    if not parts:
        raise PathError(f"{shown(rel)}: not a file name")
    return "/".join(parts[:-1]), parts[-1]


def append_locked(
    root: Path, rel: str, build: Callable[[str], str | None]
) -> tuple[str, str | None]:
    """Under an exclusive lock for the note `rel` (created when missing), call
    `build(current text)` and write the note back with what it returns at the end (None:
    write nothing). Returns (text before, text appended).

    Two writers at the same moment (processes, threads) take turns on the lock; each reads
    the note as it is under the lock (an edit made by hand meanwhile is kept), so nothing
    is lost and nothing is written twice. A crash leaves the old note or the new one."""
    folder_rel, name = _split(rel)
    with open_folder(root, folder_rel) as folder:
        folder.check_target(name)
        with folder.lock(name):
            raw = folder.read(name)
            try:
                current = (raw or b"").decode("utf-8")
            except UnicodeDecodeError as exc:
                raise PathError(
                    f"{shown(rel)}: not valid UTF-8 (byte {exc.start}); not written,"
                    " fix the file first"
                ) from None
            addition = build(current)
            if addition or raw is None:
                folder.write(name, (current + (addition or "")).encode("utf-8"))
            return current, addition
