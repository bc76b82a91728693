"""Walk a vault and list its Markdown notes, honouring the ignore rules and the symlink guard.

Nothing here reads a note's content: the scan is a cheap stat pass, so a sync with nothing
changed costs one `stat` per file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
    """Yield every note file under `root` (resolved), in sorted path order.

    Files that are not taken are appended to `skipped` with a reason when the user would
    want to know (a symlink leaving the vault, an unreadable folder, a name that is not
    UTF-8); plain ignores are silent (lore.ingest.ignore: tool folders, `.gitignore`
    unless `gitignore` is off, `.loreignore`).
    """
    top = Ignores.for_vault(root, load_ignore(root, skipped), gitignore=gitignore)
    stack: list[tuple[Path, str, Ignores]] = [(root, "", top)]
    while stack:
        folder, rel_folder, rules = stack.pop()
        if rel_folder:
            rules = rules.enter(rel_folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            skipped.append(Skipped(rel_folder or ".", f"cannot read folder: {exc.strerror}"))
            continue
        subfolders: list[tuple[Path, str, Ignores]] = []
        files: list[FileStat] = []
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
                subfolders.append((Path(entry.path), rel + "/", rules))
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
            if _undecodable(entry.name):
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
            files.append(FileStat(rel, clamp_stat(st.st_mtime_ns), st.st_size))
        yield from sorted(files, key=lambda f: f.path)
        stack.extend(sorted(subfolders, key=lambda s: s[1], reverse=True))
