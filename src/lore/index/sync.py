"""scan → diff → derive → one BEGIN IMMEDIATE transaction.

A sync first compares (mtime, size) with what the index holds, reads only the files whose
stat changed, compares their content hash, and derives and writes only notes whose content
changed. If nothing changed it opens no write transaction at all. Everything it writes goes
into one transaction: the index is either fully updated or untouched.

Files that cannot be read (invalid UTF-8, binary, vanished, unreadable) are reported and
their previously indexed version is kept: a broken file never costs the index a note.
"""

from __future__ import annotations

import codecs
import datetime as dt
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..derive.summary import long_summary
from ..derive.tokenize import index_text
from ..ingest.parse import parse_note
from ..ingest.scan import FileStat, scan_vault
from ..model import Skipped, SyncReport
from ..store.sqlite import NoteRow, SqliteStore, StoredStat

Progress = Callable[[int, int, str], None]
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
_BINARY_PROBE = 8192


class UnreadableNote(Exception):
    """A note file whose content cannot be taken in; the message is the one-line reason."""


@dataclass(frozen=True)
class NoteBytes:
    data: bytes
    mtime_ns: int
    size: int
    truncated: bool


def read_note_bytes(path: Path, max_bytes: int) -> NoteBytes:
    """Read a note, at most `max_bytes`, making sure it did not change while being read."""
    for _attempt in range(2):
        try:
            with open(path, "rb") as handle:
                before = os.fstat(handle.fileno())
                data = handle.read(max_bytes)
                after = os.fstat(handle.fileno())
        except FileNotFoundError:
            raise UnreadableNote("vanished during the sync; will be removed next time") from None
        except IsADirectoryError:
            raise UnreadableNote("is a folder, not a file") from None
        except OSError as exc:
            raise UnreadableNote(f"cannot read: {exc.strerror or exc}") from None
        stable = (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
        if stable and (len(data) == after.st_size or len(data) == max_bytes):
            return NoteBytes(data, after.st_mtime_ns, after.st_size, after.st_size > len(data))
    raise UnreadableNote("changed while being read; will be indexed by the next sync")


def decode_note(raw: NoteBytes) -> str:
    if b"\x00" in raw.data[:_BINARY_PROBE]:
        raise UnreadableNote("binary file (contains NUL bytes), not a Markdown note")
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        # A truncated file may end inside a character: leave that partial character out.
        return decoder.decode(raw.data, final=not raw.truncated)
    except UnicodeDecodeError as exc:
        raise UnreadableNote(
            f"not valid UTF-8 (byte {exc.start}); convert it to UTF-8 to index it"
        ) from None


def derive_row(rel_path: str, raw: NoteBytes, text: str, digest: str) -> tuple[NoteRow, list[str]]:
    mtime_date = dt.datetime.fromtimestamp(raw.mtime_ns / 1e9).date().isoformat()
    note = parse_note(text, rel_path, mtime_date)
    fm = note.frontmatter
    summary = long_summary(note.body)
    aliases = fm.get("aliases")
    alias_text = " ".join(str(a) for a in aliases) if isinstance(aliases, list) else ""
    if isinstance(aliases, str):
        alias_text = aliases
    all_tags = [(t, "frontmatter") for t in note.tags] + [(t, "inline") for t in note.inline_tags]
    priority = fm.get("priority")
    status = fm.get("status")
    problems = list(note.problems)
    if raw.truncated:
        problems.append(
            f"larger than {len(raw.data) // (1024 * 1024) or 1} MB; only its head is indexed"
        )
    if not text.strip():
        problems.append("empty note; indexed by its file name")
    row = NoteRow(
        path=rel_path,
        title=note.title,
        title_source=note.title_source,
        date=note.date,
        date_source=note.date_source,
        mtime_ns=raw.mtime_ns,
        size=raw.size,
        hash=digest,
        frontmatter=fm,
        headings=[[h.level, h.text, h.offset, h.line] for h in note.headings],
        summary=summary,
        body=note.body,
        body_line=note.body_line,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
        status=str(status) if isinstance(status, str | int | float) else None,
        truncated=raw.truncated,
        tags=all_tags,
        links=note.links,
        fts=(
            index_text(f"{note.title} {alias_text}"),
            index_text(" ".join(t for t, _origin in all_tags)),
            index_text(summary),
            index_text(note.body),
        ),
    )
    return row, problems


def _stat_changed(stat: FileStat, stored: StoredStat | None) -> bool:
    return stored is None or (stored.mtime_ns, stored.size) != (stat.mtime_ns, stat.size)


def sync(
    store: SqliteStore,
    root: Path,
    *,
    rebuild: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: Progress | None = None,
) -> SyncReport:
    started = time.perf_counter()
    skipped: list[Skipped] = []
    files = list(scan_vault(root, skipped))
    seen = {f.path for f in files}

    # A read-only look first: when no stat changed and nothing vanished, take no lock.
    stored = store.stored_stats()
    if (
        not rebuild
        and not any(_stat_changed(f, stored.get(f.path)) for f in files)
        and all(path in seen for path in stored)
    ):
        return SyncReport(
            unchanged=len(files), skipped=skipped, seconds=time.perf_counter() - started
        )

    added: list[str] = []
    changed: list[str] = []
    deleted: list[str] = []
    warnings: list[Skipped] = []
    unchanged = 0
    with store.transaction():
        stored = {} if rebuild else store.stored_stats()  # re-read under the write lock
        if rebuild:
            store.clear()
        candidates = [f for f in files if _stat_changed(f, stored.get(f.path))]
        unchanged = len(files) - len(candidates)
        for done, stat in enumerate(candidates, 1):
            if progress is not None:
                progress(done, len(candidates), stat.path)
            previous = stored.get(stat.path)
            try:
                raw = read_note_bytes(root / stat.path, max_file_bytes)
                digest = hashlib.sha256(raw.data).hexdigest()
                if raw.truncated:
                    digest = f"{digest}+{raw.size}"
                if previous is not None and previous.hash == digest:
                    store.update_stat(previous.id, raw.mtime_ns, raw.size)
                    unchanged += 1
                    continue
                text = decode_note(raw)
            except UnreadableNote as exc:
                kept = "; the indexed version is kept" if previous is not None else ""
                skipped.append(Skipped(stat.path, f"{exc}{kept}"))
                continue
            row, problems = derive_row(stat.path, raw, text, digest)
            store.upsert_note(row, previous.id if previous else None)
            (changed if previous else added).append(stat.path)
            warnings.extend(Skipped(stat.path, problem) for problem in problems)
        for path, previous in sorted(stored.items()):
            if path not in seen:
                store.delete_note(previous.id)
                deleted.append(path)
        if added or changed or deleted:
            store.set_meta("last_sync", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    return SyncReport(
        added=sorted(added),
        changed=sorted(changed),
        deleted=deleted,
        unchanged=unchanged,
        skipped=sorted(skipped, key=lambda s: s.path),
        warnings=sorted(warnings, key=lambda s: s.path),
        seconds=time.perf_counter() - started,
    )
