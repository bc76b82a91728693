"""`lore ingest`: a URL, a file, a folder or stdin → notes under the inbox, then one sync.

Each capture: (already captured? ask the index) → fetch or read → extract Markdown →
(same text already in the vault?) → write the note atomically. The notes are ordinary
notes: the sync at the end indexes them like any hand-written one.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..config import LoreSettings
from ..derive.summary import long_summary, without_title
from ..errors import CaptureError, ConfigError
from ..ingest.safe_read import FileRefused, open_regular, read_at_most
from ..model.sync import Skipped, SyncReport
from ..store.base import Store
from .decode import UndecodableText, decode_bytes, guessed_encoding, looks_like_html
from .dedupe import DedupeIndex
from .extract import Extracted, extract_html, extract_markdown, extract_text
from .fetch import (
    DEFAULT_MAX_BYTES,
    DEFAULT_TIMEOUT,
    MAX_BYTES_LIMIT,
    MAX_TIMEOUT,
    fetch_url,
    scrape_url,
    size_text,
)
from .notes import note_stem, render_note, write_note
from .urls import check_url, clean_url, guess_platform, looks_like_url

Progress = Callable[[int, int, str], None]
SUPPORTED_SUFFIXES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
STDIN = "-"
_TAG_SPLIT = re.compile(r"[,，;；\s]+")


class Inbox(Protocol):
    """What a capture needs of an open vault, and all it sees of it (a `lore.Vault` is
    one): the folder, the index, the settings (`inbox`, `scrape_cmd`), the clock (a
    note's `fetched` date and file name) and its sync."""

    @property
    def root(self) -> Path: ...
    @property
    def store(self) -> Store: ...
    @property
    def settings(self) -> LoreSettings: ...
    def today(self) -> dt.date: ...
    def sync(self, progress: Progress | None = None) -> SyncReport: ...
    def relative_path(self, path: str | os.PathLike[str]) -> str: ...


@dataclass(frozen=True)
class CaptureOptions:
    tags: tuple[str, ...] = ()
    platform: str | None = None  # default: guessed from the source's host
    title: str | None = None  # default: the page's own title
    force: bool = False  # capture again even when already in the vault (a new note)
    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    # False for callers who are not the machine's owner (lore's server): refuse URLs whose
    # host is or resolves to a loopback, private or link-local address, also after redirects.
    allow_private: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.timeout <= MAX_TIMEOUT:  # also NaN
            raise ConfigError(f"--timeout: {self.timeout!r} is not in (0, {MAX_TIMEOUT:g}] seconds")
        if not 1 <= self.max_bytes <= MAX_BYTES_LIMIT:
            raise ConfigError(
                f"--max-size: {self.max_bytes!r} bytes is not in [1, {MAX_BYTES_LIMIT:,}]"
            )


@dataclass(frozen=True)
class Captured:
    """A note written by a capture. `origin` is the URL, file or "-" it came from."""

    origin: str
    path: str
    title: str
    source: str | None
    platform: str


@dataclass(frozen=True)
class Duplicate:
    """A capture not written because the vault already has it (`path`), and why."""

    origin: str
    path: str
    reason: str  # "same URL" | "same content"


@dataclass
class CaptureReport:
    added: list[Captured] = field(default_factory=list)
    duplicates: list[Duplicate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # files of a folder, and why
    failed: list[Skipped] = field(default_factory=list)  # sources given that failed
    warnings: list[Skipped] = field(default_factory=list)
    sync: SyncReport | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": [c.__dict__.copy() for c in self.added],
            "duplicates": [d.__dict__.copy() for d in self.duplicates],
            "skipped": [s.__dict__.copy() for s in self.skipped],
            "failed": [s.__dict__.copy() for s in self.failed],
            "warnings": [w.__dict__.copy() for w in self.warnings],
            "sync": self.sync.to_dict() if self.sync is not None else None,
        }


def capture(
    vault: Inbox,
    source: str,
    options: CaptureOptions | None = None,
    *,
    stdin: bytes | None = None,
    progress: Progress | None = None,
    sync_progress: Progress | None = None,
) -> CaptureReport:
    """Capture one URL, file, folder or stdin ("-", read from `stdin`) into the vault.

    Raises CaptureError (naming the source) when it cannot be captured; a folder's files
    that cannot be captured are listed in `skipped` instead."""
    return capture_many(
        vault,
        [source],
        options,
        stdin=stdin,
        progress=progress,
        sync_progress=sync_progress,
        raise_errors=True,
    )


def capture_many(
    vault: Inbox,
    sources: Sequence[str],
    options: CaptureOptions | None = None,
    *,
    stdin: bytes | None = None,
    progress: Progress | None = None,
    sync_progress: Progress | None = None,
    raise_errors: bool = False,
) -> CaptureReport:
    """Capture several sources; one that fails is listed in `failed` and the rest go on."""
    run = _Run(vault, options or CaptureOptions())
    for source in sources:
        try:
            run.source(source, stdin, progress)
        except CaptureError as exc:
            if raise_errors:
                raise
            run.report.failed.append(Skipped(source, str(exc)))
    run.finish(sync_progress)
    return run.report


def _tag_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [t for t in _TAG_SPLIT.split(value) if t]
    if isinstance(value, list):
        return [str(t) for t in value if isinstance(t, str | int | float) and str(t).strip()]
    return []


def _merge_tags(*groups: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    merged: list[str] = []
    for group in groups:
        for tag in group:
            tag = tag.strip().lstrip("#").strip()
            if tag and tag.casefold() not in seen:
                seen.add(tag.casefold())
                merged.append(tag)
    return merged


def _date_value(text: str) -> dt.date | str:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return text


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:80]
    return None


def _url_title(url: str) -> str:
    tail = url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return tail or url


class _Run:
    """One `lore ingest` invocation: the dedupe keys, the notes written, the report."""

    def __init__(self, vault: Inbox, options: CaptureOptions) -> None:
        self.vault = vault
        self.options = options
        self.report = CaptureReport()
        self.today = vault.today()  # LORE_TODAY, [memory] today, else the machine's
        inbox = vault.settings.inbox
        self.inbox = vault.relative_path(vault.root / inbox) if inbox else ""
        vault.sync()  # the index must know the notes written by hand since the last sync
        self.dedupe = DedupeIndex(vault.store)

    # -- sources ------------------------------------------------------------------------------
    def source(self, source: str, stdin: bytes | None, progress: Progress | None) -> None:
        if source == STDIN:
            self.stdin(stdin if stdin is not None else b"")
        elif looks_like_url(source):
            self.url(source)
        else:
            path = Path(source).expanduser()
            if path.is_dir():
                self.folder(path, source, progress)
            elif path.exists():
                self.file(path, source)  # a FIFO or device is refused there, after open
            else:
                raise CaptureError(
                    f"{source}: no such file or folder, and not an http(s) URL",
                    hint="URLs start with http:// or https://",
                )

    def url(self, given: str) -> None:
        url = check_url(given)
        if self._known(given, url):
            return
        command = self.vault.settings.scrape_cmd
        opts = self.options
        if command and not opts.allow_private:
            raise CaptureError(
                f"{url}: LORE_SCRAPE_CMD is not used where private addresses are refused"
                " (its connections cannot be checked); nothing written"
            )
        if command:
            page = scrape_url(url, command, timeout=opts.timeout, max_bytes=opts.max_bytes)
        else:
            page = fetch_url(
                url,
                timeout=opts.timeout,
                max_bytes=opts.max_bytes,
                allow_private=opts.allow_private,
            )
        if page.url != url and self._known(given, page.url):
            return
        extracted = self._extract(page.text, page.kind, page.url, given)
        self._write(given, extracted, clean_url(page.url), _url_title(page.url))

    def file(self, path: Path, label: str) -> None:
        kind = SUPPORTED_SUFFIXES.get(path.suffix.lower())
        if kind is None:
            raise CaptureError(
                f"{label}: unsupported file type ({path.suffix or 'no extension'})",
                hint="lore ingests .md, .markdown, .txt, .html and .htm files",
            )
        try:
            fd, st = open_regular(path)  # never waits on a FIFO or a device
        except FileRefused as exc:
            raise CaptureError(f"{label}: {exc}") from None
        except OSError as exc:
            raise CaptureError(f"{label}: cannot read: {exc.strerror or exc}") from None
        try:
            if st.st_size > self.options.max_bytes:
                raise CaptureError(
                    f"{label}: larger than {size_text(self.options.max_bytes)}"
                    f" ({size_text(st.st_size)}); nothing written"
                )
            data = read_at_most(fd, self.options.max_bytes + 1)
        except OSError as exc:
            raise CaptureError(f"{label}: cannot read: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
        if len(data) > self.options.max_bytes:  # it grew while being read
            raise CaptureError(
                f"{label}: larger than {size_text(self.options.max_bytes)}; nothing written"
            )
        try:
            text = decode_bytes(data, html=kind == "html")
        except UndecodableText as exc:
            raise CaptureError(f"{label}: {exc}") from None
        guessed = guessed_encoding(data, html=kind == "html")
        if guessed is not None:  # say so: a wrong guess writes garbage
            self.report.warnings.append(
                Skipped(
                    label, f"not UTF-8; read as {guessed} (a guess: check the note)", "encoding"
                )
            )
        extracted = self._extract(text, kind, None, label)
        source = clean_url(extracted.url) if extracted.url else None
        if source and self._known(label, source):
            return
        self._write(label, extracted, source, path.stem)

    def stdin(self, data: bytes) -> None:
        label = "stdin"
        try:
            text = decode_bytes(data, html=True)
        except UndecodableText as exc:
            raise CaptureError(f"{label}: {exc}") from None
        extracted = self._extract(
            text, "html" if looks_like_html(text) else "markdown", None, label
        )
        source = clean_url(extracted.url) if extracted.url else None
        if source and self._known(STDIN, source):
            return
        self._write(STDIN, extracted, source, _first_line(extracted.body) or "stdin")

    def folder(self, folder: Path, label: str, progress: Progress | None) -> None:
        files = self._walk(folder, label)
        for done, (path, name) in enumerate(files, 1):
            if progress is not None:
                progress(done, len(files), name)
            try:
                self.file(path, name)
            except CaptureError as exc:
                reason = str(exc).removeprefix(f"{name}: ")
                self.report.skipped.append(Skipped(name, reason))

    # -- steps --------------------------------------------------------------------------------
    def _walk(self, folder: Path, label: str) -> list[tuple[Path, str]]:
        """Every supported file under `folder` (sorted; hidden files and folders left out);
        the others go to `skipped` with the reason."""
        root = self.vault.root
        found: list[tuple[Path, str]] = []
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                path = Path(dirpath) / name
                shown = os.path.join(label, os.path.relpath(path, folder))
                suffix = path.suffix.lower()
                real = Path(os.path.realpath(path))
                if suffix not in SUPPORTED_SUFFIXES:
                    reason = f"unsupported file type ({suffix or 'no extension'})"
                    self.report.skipped.append(Skipped(shown, reason))
                elif suffix in (".md", ".markdown") and root in real.parents:
                    self.report.skipped.append(Skipped(shown, "already a note of this vault"))
                else:
                    found.append((path, shown))
        return sorted(found, key=lambda item: item[1])

    def _extract(self, text: str, kind: str, url: str | None, label: str) -> Extracted:
        if kind == "html":
            return extract_html(text, url, label)
        if kind == "markdown":
            return extract_markdown(text, label)
        return extract_text(text, label)

    def _known(self, origin: str, *urls: str) -> bool:
        """Record a duplicate and say so when the vault already has a note from these URLs."""
        if self.options.force:
            return False
        path = self.dedupe.by_url(*urls)
        if path is None:
            return False
        self.report.duplicates.append(Duplicate(origin, path, "same URL"))
        return True

    def _write(self, origin: str, extracted: Extracted, source: str | None, fallback: str) -> None:
        opts = self.options
        if not opts.force:
            same = self.dedupe.by_content(extracted.body)
            if same is not None:
                self.report.duplicates.append(Duplicate(origin, same, "same content"))
                return
        fm = extracted.frontmatter
        title = opts.title or extracted.title or fallback
        kept_platform = fm.get("platform")
        platform = opts.platform or (
            str(kept_platform) if isinstance(kept_platform, str) else guess_platform(source)
        )
        front: dict[str, Any] = {"title": title}
        if source:
            front["source"] = source
        front["platform"] = platform
        front["fetched"] = fm.get("fetched", self.today)
        if extracted.date and "date" not in fm:
            front["date"] = _date_value(extracted.date)
        if extracted.author and "author" not in fm:
            front["author"] = extracted.author
        front["tags"] = _merge_tags(_tag_list(fm.get("tags", fm.get("tag"))), opts.tags)
        summary = fm.get("summary")
        if not isinstance(summary, str):
            summary = long_summary(without_title(extracted.body, title))
        front["summary"] = summary
        for key, value in fm.items():
            if key not in front and key != "tag":
                front[key] = value
        text = render_note(front, extracted.body)
        rel = write_note(
            self.vault.root, self.inbox, note_stem(title, self.today), text, label=origin
        )
        self.dedupe.add(rel, source, extracted.body)
        self.report.added.append(Captured(origin, rel, title, source, platform))

    def finish(self, progress: Progress | None) -> None:
        """Index what was written (one sync) and check that every new note made it in."""
        if not self.report.added:
            return
        report = self.vault.sync(progress=progress)
        self.report.sync = report
        written = {c.path for c in self.report.added}
        indexed = set(self.vault.store.all_paths())
        problems = [s for s in report.skipped + report.warnings if s.path in written]
        self.report.warnings.extend(problems)
        for path in sorted(written - indexed - {s.path for s in problems}):
            self.report.warnings.append(
                Skipped(path, "written but not indexed (is the inbox ignored by .loreignore?)")
            )
