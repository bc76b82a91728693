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
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from ..derive.fields import distinct_terms, note_fts_fields
from ..derive.sections import body_terms, note_sections, section_streams, split_sections
from ..derive.summary import base_summary
from ..ingest.parse import Problem, parse_note
from ..ingest.safe_read import FileRefused, open_in_vault, read_at_most
from ..ingest.scan import FileStat, ScannedFiles, clamp_stat, scan_vault
from ..model.sync import Skipped, SyncReport
from ..store.base import Store
from ..store.note_rows import NoteRow, StoredNote, Unreadable
from ..store.sqlite import TOKENIZER_VERSION
from .compare import compare
from .parallel import jobs_for, ordered_map, requested_jobs
from .pinyin import derive_pinyin

Progress = Callable[[int, int, str], None]
DEFAULT_MAX_FILE_BYTES = 8 * 1024 * 1024
_BINARY_PROBE = 8192
OLD_FIELDS_CHUNK = 1000  # stored notes whose old fields a sync reads at once
# Terms whose document-frequency changes a sync holds before it hands them to the store:
# a first index of a million notes meets millions of terms (about 150 bytes each held).
DF_HELD_TERMS = 200_000


class DerivedViews(Protocol):
    """What a sync derives beside the notes, inside its transaction: the memory tables
    (lore.memory.derive.MemoryViews, handed in by the vault; the index never imports them)."""

    def stale(self, store: Store) -> bool:
        """They must be derived in full although no note changed (an upgraded index)."""
        ...

    def derive(
        self, store: Store, changed: Sequence[str], deleted_ids: Sequence[int], *, full: bool
    ) -> bool:
        """Bring them in line with the notes rows just written; True when every note's
        rows were derived (asked, or their settings changed)."""
        ...


class UnreadableNote(Exception):
    """A note file whose content cannot be taken in; the message is the one-line reason."""


@dataclass(frozen=True)
class NoteBytes:
    data: bytes
    mtime_ns: int
    size: int
    truncated: bool


def read_note_bytes(root: Path, rel: str, max_bytes: int) -> NoteBytes:
    """Read a note, at most `max_bytes`, making sure it did not change while being read.
    Opened relative to the vault without following a link planted since the scan, and never
    a FIFO, socket or device (see lore.ingest.safe_read)."""
    for _attempt in range(2):
        try:
            fd, before = open_in_vault(root, rel)
            try:
                data = read_at_most(fd, max_bytes)
                after = os.fstat(fd)
            finally:
                os.close(fd)
        except FileRefused as exc:
            raise UnreadableNote(str(exc)) from None
        except FileNotFoundError:
            raise UnreadableNote("vanished during the sync; will be removed next time") from None
        except OSError as exc:
            raise UnreadableNote(f"cannot read: {exc.strerror or exc}") from None
        stable = (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
        if stable and (len(data) == after.st_size or len(data) == max_bytes):
            mtime_ns = clamp_stat(after.st_mtime_ns)
            return NoteBytes(data, mtime_ns, after.st_size, after.st_size > len(data))
    raise UnreadableNote("changed while being read; will be indexed by the next sync")


def decode_note(raw: NoteBytes) -> str:
    if b"\x00" in raw.data[:_BINARY_PROBE]:
        raise UnreadableNote("binary file (contains NUL bytes), not a Markdown note")
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        # A truncated file may end inside a character: leave that partial character out.
        text = decoder.decode(raw.data, final=not raw.truncated)
    except UnicodeDecodeError as exc:
        raise UnreadableNote(
            f"not valid UTF-8 (byte {exc.start}); convert it to UTF-8 to index it"
        ) from None
    # A NUL past the probe: PostgreSQL's text cannot hold it, so on every backend it is
    # stored as U+FFFD, one character for one (offsets hold; neither is a word character).
    return text.replace("\x00", "\ufffd")


def derive_row(
    rel_path: str, raw: NoteBytes, text: str, digest: str, max_file_bytes: int
) -> tuple[NoteRow, list[Problem]]:
    note = parse_note(text, rel_path)
    fm = note.frontmatter
    summary, _source = base_summary(fm, note.body, note.title, note.lines)
    all_tags = [(t, "frontmatter") for t in note.tags] + [(t, "inline") for t in note.inline_tags]
    priority = fm.get("priority")
    status = fm.get("status")
    problems = list(note.problems)
    if raw.truncated:
        problems.append(
            Problem(
                "truncated",
                f"larger than {_size_text(max_file_bytes)} ({_size_text(raw.size)});"
                " only its head is indexed",
            )
        )
    if not text.strip():
        problems.append(Problem("empty", "empty note; indexed by its file name"))
    parts = split_sections(note.body, [(h.level, h.text, h.offset, h.line) for h in note.headings])
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
        priority=priority if _storable_int(priority) else None,
        status=str(status) if isinstance(status, str | int | float) else None,
        truncated=raw.truncated,
        tags=all_tags,
        links=note.links,
        fts=note_fts_fields(
            note.title,
            fm,
            rel_path,
            [t for t, _origin in all_tags],
            summary,
            note.body,
            body_terms(parts),
        ),
        sections=section_streams(note.title, parts),
    )
    return row, problems


@dataclass(frozen=True)
class Prepared:
    """What reading and deriving one file gave, before anything is written: made without
    the store, so a worker process can make it (lore.index.parallel)."""

    path: str
    mtime_ns: int = 0
    size: int = 0
    same: bool = False  # the content hash is the indexed one: only the stat is refreshed
    refused: str | None = None  # why the file cannot be taken in (UnreadableNote)
    row: NoteRow | None = None
    problems: tuple[Problem, ...] = ()
    terms: frozenset[str] = frozenset()  # the distinct tokens of row.fts


def prepare_note(task: tuple[str, str | None], *, root: Path, max_file_bytes: int) -> Prepared:
    """Read and derive the note at `task` = (path, the hash the index holds for it, or
    None to derive it whatever its content)."""
    path, known_hash = task
    try:
        raw = read_note_bytes(root, path, max_file_bytes)
        digest = hashlib.sha256(raw.data).hexdigest()
        if raw.truncated:
            digest = f"{digest}+{raw.size}"
        if digest == known_hash:
            return Prepared(path, raw.mtime_ns, raw.size, same=True)
        text = decode_note(raw)
    except UnreadableNote as exc:
        return Prepared(path, refused=str(exc))
    row, problems = derive_row(path, raw, text, digest, max_file_bytes)
    terms = frozenset(distinct_terms(row.fts))
    return Prepared(path, raw.mtime_ns, raw.size, row=row, problems=tuple(problems), terms=terms)


def _storable_int(value: object) -> bool:
    """An integer SQLite can store (64-bit); a bigger one in front matter is ignored."""
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


def unreadable(path: str, reason: str, *, kept: bool) -> Skipped:
    """A file that cannot be taken in, reported on every sync until it is fixed."""
    return Skipped(path, reason + ("; the indexed version is kept" if kept else ""), "unreadable")


def _size_text(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


class OldFields:
    """The stored fields (Store.note_fields) of the notes a sync may change, read
    OLD_FIELDS_CHUNK at a time in the order given (a chunk read drops the last: the
    notes before are done with, those the sync found unchanged never asked for)."""

    def __init__(self, store: Store, note_ids: list[int]) -> None:
        self.store = store
        self.order = note_ids
        self.position = {nid: i for i, nid in enumerate(note_ids)}
        self.read: dict[int, tuple[str, dict[str, Any], str, list[str], str, str]] = {}

    def take(self, note_id: int) -> tuple[str, dict[str, Any], str, list[str], str, str]:
        if note_id not in self.read:
            at = self.position.get(note_id)
            if at is None:  # not expected: read alone
                return self.store.note_fields(note_id)
            self.read = self.store.notes_fields(self.order[at : at + OLD_FIELDS_CHUNK])
        return self.read.pop(note_id)


class _Sync:
    """One sync run: the state shared by its steps, kept out of a 150-line function."""

    def __init__(self, store: Store, root: Path, rebuild: bool, max_file_bytes: int):
        self.store = store
        self.root = root
        self.rebuild = rebuild
        self.max_file_bytes = max_file_bytes
        self.skipped: list[Skipped] = []
        self.warnings: list[Skipped] = []
        self.added: list[str] = []
        self.changed: list[str] = []
        self.deleted: list[str] = []
        self.unchanged = 0
        self.df_delta: Counter[str] = Counter()  # document-frequency changes not applied yet
        self.old_fields = OldFields(store, [])

    def expect(self, note_ids: list[int]) -> None:
        """The stored notes this run may re-derive or delete, in the order it meets them:
        their old fields are read a chunk at a time (lore.store's batched writes are not
        held up by a read per note)."""
        self.old_fields = OldFields(self.store, note_ids)

    def known_hash(self, previous: StoredNote | None) -> str | None:
        """The hash a file's content is compared with: none on a rebuild (derive it all)."""
        return previous.hash if previous is not None and not self.rebuild else None

    def take(
        self, stat: FileStat, previous: StoredNote | None, bad: Unreadable | None, got: Prepared
    ) -> None:
        store = self.store
        if got.same and previous is not None:
            store.update_stat(previous.id, got.mtime_ns, got.size)
            self.unchanged += 1
            return
        if got.refused is not None:
            self.skipped.append(unreadable(stat.path, got.refused, kept=previous is not None))
            store.mark_unreadable(stat.path, stat.mtime_ns, stat.size, got.refused)
            if previous is not None and self.rebuild:
                # Rebuild cannot re-derive it: put its stored version back in the search index.
                fields = note_fts_fields(*store.note_fields(previous.id))
                store.reinsert_fts(previous.id, fields)
                kept = store.hit_rows([previous.id])[previous.id]
                store.insert_sections(
                    previous.id, note_sections(kept.title, kept.body, kept.headings)
                )
                self.count_terms(distinct_terms(fields), 1)
            return
        assert got.row is not None
        if bad is not None:
            store.clear_unreadable(stat.path)
        if previous is not None and not self.rebuild:
            self.forget(previous.id)
        self.count_terms(got.terms, 1)
        store.upsert_note(got.row, previous.id if previous else None)
        # A rebuild empties the index and fills it again: every note it derives is "added".
        (self.changed if previous and not self.rebuild else self.added).append(stat.path)
        self.warnings.extend(Skipped(stat.path, p.message, p.kind) for p in got.problems)

    def forget(self, note_id: int) -> None:
        self.count_terms(distinct_terms(note_fts_fields(*self.old_fields.take(note_id))), -1)

    def count_terms(self, terms: Iterable[str], sign: int) -> None:
        """A note's distinct terms counted in (1) or out (-1) of the document frequencies;
        handed to the store when many are held. All of it lands in the sync's transaction,
        so the sums are the same whenever they are applied, and never negative on the way:
        a note's old terms are counted out only while they are still counted in."""
        if sign > 0:
            self.df_delta.update(terms)
        else:
            self.df_delta.subtract(terms)
        if len(self.df_delta) >= DF_HELD_TERMS:
            self.apply_df()

    def apply_df(self) -> None:
        self.store.apply_df(self.df_delta)
        self.df_delta.clear()

    def report(self, started: float) -> SyncReport:
        return SyncReport(
            added=sorted(self.added),
            changed=sorted(self.changed),
            deleted=sorted(self.deleted),
            unchanged=self.unchanged,
            skipped=sorted(self.skipped, key=lambda s: s.path),
            warnings=sorted(self.warnings, key=lambda s: s.path),
            seconds=time.perf_counter() - started,
        )


def sync(
    store: Store,
    root: Path,
    *,
    rebuild: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: Progress | None = None,
    gitignore: bool = True,
    views: DerivedViews | None = None,
    jobs: int | None = None,
    prepare: Callable[..., Prepared] = prepare_note,
) -> SyncReport:
    """Bring the index in line with the files; with `rebuild`, re-derive every note, and
    keep `views` (the memory tables) in step in the same transaction.

    An index derived by another version of lore's derivation (tokens, tags, dates) is
    re-derived whole: an upgrade never leaves old and new rows side by side.

    `jobs`: worker processes that read and derive the notes (see lore.index.parallel;
    None: LORE_INDEX_JOBS, else the idle cores when many notes changed). The index is the same
    whatever the number. `prepare` is what a worker runs per note (a test swaps it)."""
    started = time.perf_counter()
    asked_jobs = requested_jobs(jobs)  # a bad LORE_INDEX_JOBS is said even when no work
    derived_by = store.get_meta("tokenizer_version")
    upgraded = derived_by != TOKENIZER_VERSION and store.has_notes()
    rebuild = rebuild or upgraded
    run = _Sync(store, root, rebuild, max_file_bytes)
    files = ScannedFiles(scan_vault(root, run.skipped, gitignore=gitignore))

    # A read-only look first: when nothing needs reading and nothing vanished, take no lock.
    looked: tuple[int, int] | None = None  # the generation the look compared with
    if not rebuild and not (views is not None and views.stale(store)):
        with store.snapshot():
            bad = store.unreadable()
            looked = store.generation()
            found = compare(files, store.note_stamps(), bad)
        if found.nothing_to_do:
            run.unchanged = found.unchanged
            run.skipped += [unreadable(p, bad[p].reason, kept=k) for p, k in found.unreadable]
            return run.report(started)

    with store.transaction():
        # Under the write lock the look holds unless a write landed since: a million notes'
        # stamps compared again cost a third of an edit's sync.
        if looked is None or looked != store.generation():
            bad = store.unreadable()
            found = compare(files, store.note_stamps(), bad, rebuild=rebuild)
        del files  # a million scanned files: what is left to do is in `found`
        # The notes this sync re-derives or deletes, read whole; the others only compared.
        # A rebuild derives every note whatever its hash: their ids alone.
        stored = store.stored_notes_of(sorted(found.indexed) + found.gone, hashes=not rebuild)
        if rebuild:
            store.clear_search_index()
            store.set_meta("tokenizer_version", TOKENIZER_VERSION)  # tokens re-derived now
        run.skipped += [unreadable(p, bad[p].reason, kept=k) for p, k in found.unreadable]
        run.unchanged = found.unchanged
        candidates = found.pending
        tasks = ((stat.path, run.known_hash(stored.get(stat.path))) for stat in candidates)
        if not rebuild:
            gone = [stored[path].id for path in found.gone]
            run.expect([stored[s.path].id for s in candidates if s.path in stored] + gone)
        work = partial(prepare, root=root, max_file_bytes=max_file_bytes)
        jobs_now = jobs_for(asked_jobs, len(candidates))
        derived = ordered_map(work, tasks, jobs_now, name_of=itemgetter(0))
        try:
            for done, stat in enumerate(candidates, 1):
                # Progress first: in one process a note is read only when its result is
                # asked for, so a progress callback still sees each note before it is read.
                if progress is not None:
                    progress(done, len(candidates), stat.path)
                run.take(stat, stored.get(stat.path), bad.get(stat.path), next(derived))
        finally:
            derived.close()  # the workers stop now, not when the generator is collected
        for path in found.gone:
            previous = stored[path]
            if not rebuild:
                run.forget(previous.id)
            store.delete_note(previous.id)
            run.deleted.append(path)
        for path in found.unreadable_gone:
            store.clear_unreadable(path)
        changed = bool(run.added or run.changed or run.deleted or rebuild)
        deleted_ids = [stored[path].id for path in run.deleted]
        # The terms' counts handed over now, not held (up to DF_HELD_TERMS: ~35 MB) while
        # the memory views and the pinyin are derived.
        run.apply_df()
        full = rebuild
        if views is not None and (changed or views.stale(store)):
            full = views.derive(store, run.added + run.changed, deleted_ids, full=rebuild)
        if changed or full:  # after memory: a note's entity names are pinyin names too
            derive_pinyin(store, run.added + run.changed, deleted_ids, full=full)
        if changed:
            store.set_meta("last_sync", dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
    report = run.report(started)
    if upgraded:  # say why every note is "added": nothing in the vault changed
        said = (
            f"this lore derives notes differently (version {TOKENIZER_VERSION}, the index had"
            f" {derived_by or 'none'}): every note was derived again from its file"
        )
        report = replace(report, notices=[said, *report.notices])
    return report
