"""Walk a vault and list its Markdown notes, honouring the ignore rules and the symlink guard.

Nothing here reads a note's content: the scan is a cheap stat pass, so a sync with nothing
changed costs one `stat` per file.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import overload

from ..model.sync import Skipped
from .ignore import IgnoreRules, Ignores, is_virtualenv
from .safe_read import FileRefused, kind_of, open_in_vault, read_at_most

NOTE_SUFFIXES = (".md", ".markdown")
ALWAYS_IGNORED_DIRS = frozenset({".lore", ".git", ".obsidian", ".trash", ".hg", ".svn"})
IGNORE_FILE = ".loreignore"
MAX_IGNORE_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileStat:
    path: str  # relative to the vault, POSIX separators
    mtime_ns: int
    size: int


class ScannedFiles(Sequence[FileStat]):
    """Files of a scan held compactly: their paths, and their stats in one array of 64-bit
    integers (clamp_stat keeps them in range). A list of FileStat costs about 120 bytes a
    file more (the object and its two integers): some 120 MB for a million notes, which a
    sync holds while it compares and the files it reads while it reads them. Each file read
    from it is a FileStat made on the way."""

    __slots__ = ("paths", "_stats", "in_order")

    def __init__(self, files: Iterable[FileStat] = ()) -> None:
        self.paths: list[str] = []
        self._stats = array("q")  # mtime_ns, size of each file in turn
        # Each path after the one before it, as a scan lists them (lore.index.compare
        # walks the index beside them): told as they come, not by another pass.
        self.in_order = True
        for stat in files:
            self.append(stat)

    def append(self, stat: FileStat) -> None:
        if self.in_order and self.paths and stat.path <= self.paths[-1]:
            self.in_order = False
        self.paths.append(stat.path)
        self._stats.extend((stat.mtime_ns, stat.size))

    def stat(self, index: int) -> tuple[int, int]:
        """(mtime_ns, size) of the file at `index`."""
        return self._stats[2 * index], self._stats[2 * index + 1]

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, index: int) -> FileStat: ...
    @overload
    def __getitem__(self, index: slice) -> ScannedFiles: ...
    def __getitem__(self, index: int | slice) -> FileStat | ScannedFiles:
        if isinstance(index, slice):
            return ScannedFiles(self[i] for i in range(*index.indices(len(self))))
        index = range(len(self))[index]  # negative indexes, and IndexError past the end
        return FileStat(self.paths[index], *self.stat(index))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScannedFiles):
            return NotImplemented
        return self.paths == other.paths and self._stats == other._stats

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __iter__(self) -> Iterator[FileStat]:
        stats = iter(self._stats)
        for path, mtime_ns, size in zip(self.paths, stats, stats, strict=True):
            yield FileStat(path, mtime_ns, size)


_INT64 = (-(2**63), 2**63 - 1)


def clamp_stat(value: int) -> int:
    """A stat value (mtime in ns, size) as SQLite can store it: a file dated after 2262 or
    before 1677 has an mtime in ns past 64 bits, and must not stop the sync."""
    return min(max(value, _INT64[0]), _INT64[1])


def load_ignore(root: Path, skipped: list[Skipped] | None = None) -> IgnoreRules:
    """The vault's .loreignore (its first MAX_IGNORE_BYTES); lines that cannot be used
    are reported to `skipped`, the rest apply."""
    problems: list[str] = []
    try:
        fd, _stat = open_in_vault(root, IGNORE_FILE)
        try:
            data = read_at_most(fd, MAX_IGNORE_BYTES + 1)
        finally:
            os.close(fd)
    except FileNotFoundError:
        data = b""
    except (FileRefused, OSError) as exc:
        data = b""
        problems.append(f"not read: {exc}")
    if len(data) > MAX_IGNORE_BYTES:
        data = data[:MAX_IGNORE_BYTES]
        problems.append(f"larger than {MAX_IGNORE_BYTES:,} bytes; only its head is used")
    lines = data.decode("utf-8", errors="replace").splitlines()
    rules = IgnoreRules.from_lines(lines)
    if skipped is not None:
        skipped.extend(Skipped(IGNORE_FILE, p) for p in problems + rules.problems)
    return rules


def _inside(root: Path, target: str) -> bool:
    try:
        resolved = Path(os.path.realpath(target))
    except (OSError, RuntimeError):
        return False
    return resolved == root or root in resolved.parents


_BAD_NAME = "{} name is not valid UTF-8; rename it to index it"


def _undecodable(name: str) -> bool:
    """A name with bytes that are not UTF-8 (os.scandir gives them as lone surrogates):
    it cannot be stored, printed or searched as text."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _printable(rel: str) -> str:
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def scan_vault(root: Path, skipped: list[Skipped], *, gitignore: bool = True) -> Iterator[FileStat]:
    """Yield every note file under `root` (resolved), in the order of their paths as strings
    (code points: the order of SQLite's BINARY and PostgreSQL's "C" collation), so a sync
    can walk the index's stamps beside the scan (lore.index.compare) without a map of every
    path.

    Files that are not taken are appended to `skipped` with a reason when the user would
    want to know (a symlink leaving the vault, an unreadable folder, a name that is not
    UTF-8); plain ignores are silent (lore.ingest.ignore: tool folders, `.gitignore`
    unless `gitignore` is off, `.loreignore`).
    """
    top = Ignores.for_vault(root, load_ignore(root, skipped), gitignore=gitignore)
    # What is left to yield, last first: files, and folders to list when their turn comes.
    stack: list[FileStat | tuple[Path, str, Ignores]] = [(root, "", top)]
    while stack:
        item = stack.pop()
        if isinstance(item, FileStat):
            yield item
            continue
        folder, rel_folder, rules = item
        if rel_folder:
            rules = rules.enter(rel_folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            skipped.append(Skipped(rel_folder or ".", f"cannot read folder: {exc.strerror}"))
            continue
        # By the name each gives its paths: "b/" sorts after "b.md" and before "b0.md".
        found: list[tuple[str, FileStat | tuple[Path, str, Ignores]]] = []
        for entry in entries:
            rel = f"{rel_folder}{entry.name}"
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in ALWAYS_IGNORED_DIRS or rules.ignored(rel, folder=True):
                    continue
                if is_virtualenv(entry.path):
                    continue
                if _undecodable(entry.name):
                    skipped.append(Skipped(_printable(rel + "/"), _BAD_NAME.format("folder")))
                    continue
                found.append((entry.name + "/", (Path(entry.path), rel + "/", rules)))
                continue
            if is_link and os.path.isdir(entry.path):
                if entry.name not in ALWAYS_IGNORED_DIRS and not rules.ignored(rel, folder=True):
                    where = "inside" if _inside(root, entry.path) else "outside"
                    skipped.append(
                        Skipped(rel, f"symlink to a folder {where} the vault; not followed")
                    )
                continue
            if not entry.name.lower().endswith(NOTE_SUFFIXES) or rules.ignored(rel, folder=False):
                continue
            if not entry.name.isascii() and _undecodable(entry.name):
                skipped.append(Skipped(_printable(rel), _BAD_NAME.format("file")))
                continue
            if is_link:
                if not _inside(root, entry.path):
                    skipped.append(Skipped(rel, "symlink points outside the vault; not followed"))
                    continue
            try:
                st = os.stat(entry.path)
            except OSError as exc:
                skipped.append(Skipped(rel, f"cannot stat: {exc.strerror}"))
                continue
            kind = kind_of(st.st_mode)
            if kind is not None:  # a FIFO, socket or device named like a note
                skipped.append(Skipped(rel, f"is {kind}, not a regular file; skipped"))
                continue
            found.append((entry.name, FileStat(rel, clamp_stat(st.st_mtime_ns), st.st_size)))
        found.sort(key=itemgetter(0), reverse=True)  # met by name, last first: nearly sorted
        stack.extend(item for _name, item in found)
