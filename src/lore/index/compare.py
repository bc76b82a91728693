"""The scan against the index: which files a sync reads, which notes it deletes, and how
many it leaves as they are, from each note's stamp (path, mtime, size) alone.

The index's stamps are read a page at a time in path order (Store.note_stamps) and each is
matched with the scanned file of its path, so a sync holds no row object per indexed note:
a no-op sync of a million notes held every note's id, stat, hash and date source (about
460 bytes a note) to find that nothing changed. Only the notes the sync re-derives or
deletes are read whole (Store.stored_notes_of).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..ingest.scan import ScannedFiles
from ..store.note_rows import Unreadable


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
    # The files no note has, once the stamps are read (by their place in the scan).
    unseen = {path: index for index, path in enumerate(files.paths)}
    changed: set[str] = set()
    for path, mtime_ns, size in stamps:
        index = unseen.pop(path, None)
        if index is None:
            out.gone.append(path)
        elif files.stat(index) != (mtime_ns, size):
            changed.add(path)
    out.gone.sort()  # the database's order of paths may be another collation's
    bad_present: set[str] = set()
    for stat in files:
        indexed = stat.path not in unseen
        known = bad.get(stat.path)
        if known is not None:
            bad_present.add(stat.path)
        as_found = known is not None and (known.mtime_ns, known.size) == (stat.mtime_ns, stat.size)
        if rebuild or (not as_found and (not indexed or stat.path in changed)):
            out.pending.append(stat)
            if indexed:
                out.indexed.add(stat.path)
        elif known is not None:
            out.unreadable.append((stat.path, indexed))
        else:
            out.unchanged += 1
    out.unreadable_gone = sorted(path for path in bad if path not in bad_present)
    return out
