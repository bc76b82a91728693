"""The scan against the index: which files a sync reads, which notes it deletes, and how
many it leaves as they are, from each note's stamp (path, mtime, size) alone.

The index's stamps are read a page at a time in path order (Store.note_stamps) and walked
beside the scan, which lists files in the same order (lore.ingest.scan), so a sync holds no
row object per indexed note, nor a map of every path: a no-op sync of a million notes held
every note's id, stat, hash and date source (about 460 bytes a note) to find that nothing
changed, and then a dict of every path (63 MB for a million). Only the notes the sync
re-derives or deletes are read whole (Store.stored_notes_of).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain

from ..ingest.scan import ScannedFiles
from ..store.note_rows import Unreadable

INDEXED, CHANGED = 1, 2  # what a note says of a scanned file: it has it; with another stat


@dataclass
class Comparison:
    """What a sync has to do, found by `compare`."""

    pending: ScannedFiles = field(default_factory=ScannedFiles)  # files to read, scan order
    indexed: set[str] = field(default_factory=set)  # those of them a note has
    gone: list[str] = field(default_factory=list)  # notes no file has, sorted
    unreadable: list[tuple[str, bool]] = field(default_factory=list)  # (path, indexed) left
    unreadable_gone: list[str] = field(default_factory=list)  # known unreadable, file gone
    unchanged: int = 0  # notes whose file's stat matches

    @property
    def nothing_to_do(self) -> bool:
        return not (self.pending or self.gone or self.unreadable_gone)


def compare(
    files: ScannedFiles,
    stamps: Iterable[tuple[str, int, int]],
    bad: Mapping[str, Unreadable],
    *,
    rebuild: bool = False,
) -> Comparison:
    """The scan's `files` against the index's `stamps` ((path, mtime_ns, size) of each
    note) and the files known to be unreadable (`bad`). A file is read when no note has its
    path or its stat differs from its note's (every file, on a rebuild), unless its stat is
    the one it had when it was found unreadable; such a file is left (and told again)."""
    out = Comparison()
    seen = bytearray(len(files))  # of each scanned file: 0, or INDEXED or CHANGED
    unplaced = iter(stamps)
    # Files in a scan's order (lore.ingest.scan) are walked beside the stamps.
    rest = _merge(files, unplaced, seen, out.gone) if files.in_order else unplaced
    if rest is not None:
        # Stamps the walk could not place (a database whose order of paths is not Python's,
        # files in another order): matched through a map of the files no note has yet.
        unseen = {path: i for i, path in enumerate(files.paths) if not seen[i]}
        for path, mtime_ns, size in rest:
            index = unseen.pop(path, None)
            if index is None:
                out.gone.append(path)
            else:
                seen[index] = _state(files, index, mtime_ns, size)
    out.gone.sort()  # the database's order of paths may be another collation's
    bad_present: set[str] = set()
    for index, stat in enumerate(files):
        indexed = seen[index] != 0
        known = bad.get(stat.path)
        if known is not None:
            bad_present.add(stat.path)
        as_found = known is not None and (known.mtime_ns, known.size) == (stat.mtime_ns, stat.size)
        if rebuild or (not as_found and (not indexed or seen[index] == CHANGED)):
            out.pending.append(stat)
            if indexed:
                out.indexed.add(stat.path)
        elif known is not None:
            out.unreadable.append((stat.path, indexed))
        else:
            out.unchanged += 1
    out.unreadable_gone = sorted(path for path in bad if path not in bad_present)
    return out


def _state(files: ScannedFiles, index: int, mtime_ns: int, size: int) -> int:
    return INDEXED if files.stat(index) == (mtime_ns, size) else CHANGED


def _merge(
    files: ScannedFiles,
    stamps: Iterator[tuple[str, int, int]],
    seen: bytearray,
    gone: list[str],
) -> Iterator[tuple[str, int, int]] | None:
    """Match stamps in path order with the files (in path order) in one walk. None when
    every stamp is placed; else, at the first stamp out of order, the stamps not placed
    (that one first)."""
    paths = files.paths
    at, last = 0, None
    for stamp in stamps:
        path = stamp[0]
        if last is not None and path <= last:
            return chain([stamp], stamps)
        last = path
        while at < len(paths) and paths[at] < path:
            at += 1
        if at < len(paths) and paths[at] == path:
            seen[at] = _state(files, at, stamp[1], stamp[2])
            at += 1
        else:  # every file before it in order is passed: none has its path
            gone.append(path)
    return None
