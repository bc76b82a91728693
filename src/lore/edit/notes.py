"""Writing notes: create, edit (replace the text or a section, append), move, delete to the
vault's trash and restore from it. Every write goes through lore.safe_write (never through
a symlink, whole or not at all), only to paths the caller's access rules allow.

An edit, a move or a delete names the content it expects (`base_hash`: the sha256 of the
file's bytes, as `Vault.note()` returns it in `hash`). When the file holds anything else,
the change is refused with ConflictError and nothing is written: a concurrent edit is never
overwritten. Writers of one note take turns on a lock under `.lore/locks/` (across
processes), and the file is read again just before it is replaced.

A deleted note is moved to `.lore/trash/<id>/<its path>` (never indexed: `.lore/` is not
scanned); `restore(id)` puts it back where it was, or at another path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AccessError, ConfigError, ConflictError, NotFoundError, PathError, shown
from ..memory.access import Access
from ..safe_write import Folder, open_folder
from .sections import append, replace_section

LOCKS = ".lore/locks"
TRASH = ".lore/trash"
MAX_NOTE_BYTES = 4 * 1024 * 1024
MAX_PATH_CHARS = 1024
_TRASH_ID = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{8}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

Clock = Callable[[], dt.datetime]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class NoteChange:
    """What one write did. `hash` is the note's new content hash (None once deleted)."""

    action: str  # created | edited | moved | deleted | restored
    path: str
    hash: str | None
    previous_hash: str | None = None
    moved_from: str | None = None
    trash_id: str | None = None
    indexed: bool = False  # the index holds the note as written (set by the Vault)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class TrashItem:
    id: str
    path: str  # where the note was
    deleted: str  # ISO time

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def note_target(path: object, what: str = "path", *, write: bool = True) -> str:
    """A note path a caller gave, checked: relative, `/`-separated, inside the vault,
    ending in `.md`, and, to write, in no hidden folder (`.lore/`, `.git/`). Refused with
    one line otherwise."""
    if not isinstance(path, str):
        raise ConfigError(f"{what}: must be a string")
    text = path
    if not text:
        raise PathError(f"{what}: the path is empty")
    if len(text) > MAX_PATH_CHARS:
        raise PathError(f"{what}: the path is longer than {MAX_PATH_CHARS} characters")
    if "\x00" in text:
        raise PathError(f"{what}: {shown(text)}: a path cannot contain NUL")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PathError(f"{what}: {shown(text)}: a path must be valid UTF-8") from None
    if _CONTROL.search(text):
        raise PathError(f"{what}: {shown(text)}: a path cannot contain control characters")
    if "\\" in text:
        raise PathError(f"{what}: {shown(text)}: use '/' between folders, not '\\'")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise PathError(f"{what}: {shown(text)} is absolute; give a path inside the vault")
    parts = text.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise PathError(f"{what}: {shown(text)}: an empty, '.' or '..' part would leave the vault")
    if write and any(p.startswith(".") for p in parts):
        raise PathError(f"{what}: {shown(text)}: lore writes no hidden file or folder")
    if any(len(p.encode("utf-8")) > 255 for p in parts):
        raise PathError(f"{what}: {shown(text)}: a name is longer than 255 bytes")
    if not parts[-1].lower().endswith(".md") or parts[-1].lower() == ".md":
        raise PathError(f"{what}: {shown(text)}: a note's name ends in .md")
    return unicodedata.normalize("NFC", text)


def _split(path: str) -> tuple[str, str]:
    folder, _, name = path.rpartition("/")
    return folder, name


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class NoteWriter:
    """Writes notes of the vault at `root` for a caller whose rules are `access`."""

    def __init__(self, root: Path, access: Access, *, clock: Clock = _now) -> None:
        self.root = root
        self.access = access
        self.clock = clock

    # -- guards -------------------------------------------------------------------------------
    def _allowed(self, path: str, what: str = "path") -> str:
        target = note_target(path, what)
        if not self.access.allows(target):
            who = self.access.principal
            raise AccessError(f"{what}: {shown(target)} is outside what {who!r} may write")
        return target

    @contextmanager
    def _locked(self, *paths: str) -> Iterator[None]:
        with ExitStack() as stack, open_folder(self.root, LOCKS) as locks:
            for path in sorted(set(paths)):  # one order: two movers cannot deadlock
                stack.enter_context(locks.lock(content_hash(path.encode())[:32]))
            yield

    def _read(self, folder: Folder, name: str, path: str) -> bytes:
        data = folder.read(name)
        if data is None:
            raise NotFoundError(f"{shown(path)}: no such note")
        return data

    def _open(self, path: str, *, create: bool = False) -> Folder:
        folder, _name = _split(path)
        try:
            return open_folder(self.root, folder, create=create)
        except PathError as exc:
            if "no such folder" in exc.message:
                raise NotFoundError(f"{shown(path)}: no such note") from None
            raise

    @staticmethod
    def _expect(data: bytes, base_hash: str | None, path: str) -> None:
        if base_hash is None:
            return
        now = content_hash(data)
        if now != base_hash.strip().lower():
            raise ConflictError(
                f"{shown(path)} changed since it was read (its hash is now {now[:12]}…);"
                " nothing written",
                hint="read it again and redo the change on what it holds now",
            )

    @staticmethod
    def _encode(text: object, path: str) -> bytes:
        if not isinstance(text, str):
            raise ConfigError(f"{shown(path)}: the text must be a string")
        if "\x00" in text:
            raise ConfigError(f"{shown(path)}: the text contains a NUL character")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(f"{shown(path)}: the text is not valid Unicode") from None
        if len(data) > MAX_NOTE_BYTES:
            raise ConfigError(
                f"{shown(path)}: the text is {len(data):,} bytes; at most {MAX_NOTE_BYTES:,}"
            )
        return data

    @staticmethod
    def _decode(data: bytes, path: str) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{shown(path)}: not valid UTF-8 (byte {exc.start}); edit it by hand"
            ) from None

    def source(self, path: str) -> tuple[str, str]:
        """(the file's text as it is now, its content hash): what an editor starts from."""
        target = self._allowed(path)
        _folder, name = _split(target)
        with self._open(target) as folder:
            data = self._read(folder, name, target)
        return self._decode(data, target), content_hash(data)

    # -- writes -------------------------------------------------------------------------------
    def create(self, path: str, text: str) -> NoteChange:
        """A new note at `path`; refused when anything is there already."""
        target = self._allowed(path)
        data = self._encode(text, target)
        _folder, name = _split(target)
        with self._locked(target), self._open(target, create=True) as folder:
            if folder.lstat(name) is not None:
                raise ConflictError(f"{shown(target)} exists already; nothing written")
            folder.create([name], data)
        return NoteChange("created", target, content_hash(data))

    def edit(
        self,
        path: str,
        *,
        base_hash: str,
        text: str | None = None,
        append_text: str | None = None,
        section: str | None = None,
    ) -> NoteChange:
        """Replace the whole text (`text`), the body of one section (`section` + `text`),
        or append (`append_text`, at the end or of `section`), if the note still holds
        what `base_hash` says."""
        target = self._allowed(path)
        if not isinstance(base_hash, str) or not base_hash.strip():
            raise ConfigError(f"{shown(target)}: base_hash is needed to edit (see `hash`)")
        if (text is None) == (append_text is None):
            raise ConfigError(f"{shown(target)}: give either the new text or text to append")
        _folder, name = _split(target)
        with self._locked(target), self._open(target) as folder:
            before = self._read(folder, name, target)
            self._expect(before, base_hash, target)
            current = self._decode(before, target)
            if append_text is not None:
                self._encode(append_text, target)
                new = append(current, append_text, heading=section, path=target)
            elif section is not None:
                new = replace_section(current, section, str(self._encode(text, target), "utf-8"))
            else:
                new = str(self._encode(text, target), "utf-8")
            data = self._encode(new, target)
            self._expect(self._read(folder, name, target), base_hash, target)
            folder.write(name, data)
        return NoteChange("edited", target, content_hash(data), content_hash(before))

    def move(self, path: str, to: str, *, base_hash: str | None = None) -> NoteChange:
        """Move a note to a free path (folders are made as needed)."""
        source = self._allowed(path)
        target = self._allowed(to, "to")
        if source == target:
            raise ConfigError(f"{shown(source)}: the note is there already")
        _sf, source_name = _split(source)
        _tf, target_name = _split(target)
        with self._locked(source, target), self._open(source) as here:
            data = self._read(here, source_name, source)
            self._expect(data, base_hash, source)
            with self._open(target, create=True) as there:
                if there.lstat(target_name) is not None:
                    raise ConflictError(f"to: {shown(target)} exists already; nothing moved")
                there.create([target_name], data)
                if here.read(source_name) != data:  # changed meanwhile: keep it, undo the copy
                    there.remove(target_name)
                    raise ConflictError(f"{shown(source)} changed while moving; nothing moved")
            here.remove(source_name)
        return NoteChange("moved", target, content_hash(data), content_hash(data), source)

    def delete(self, path: str, *, base_hash: str | None = None) -> NoteChange:
        """Move the note to the trash (see `restore`)."""
        source = self._allowed(path)
        stamp = self.clock().astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        trash_id = f"{stamp}-{secrets.token_hex(4)}"
        _sf, name = _split(source)
        folder, _n = _split(source)
        with self._locked(source), self._open(source) as here:
            data = self._read(here, name, source)
            self._expect(data, base_hash, source)
            inside = f"{TRASH}/{trash_id}" + (f"/{folder}" if folder else "")
            with open_folder(self.root, inside) as bin_:
                bin_.create([name], data)
            if here.read(name) != data:
                self._discard(trash_id, source)
                raise ConflictError(f"{shown(source)} changed while deleting; nothing deleted")
            here.remove(name)
        return NoteChange("deleted", source, None, content_hash(data), trash_id=trash_id)

    def trash(self) -> list[TrashItem]:
        """The deleted notes the caller may see, newest first."""
        items = []
        base = self.root / TRASH
        if not base.is_dir() or base.is_symlink():
            return []
        for entry in sorted(base.iterdir(), reverse=True):
            if not _TRASH_ID.match(entry.name) or entry.is_symlink() or not entry.is_dir():
                continue
            path = self._trashed_path(entry.name)
            if path is not None and self.access.allows(path):
                stamp = dt.datetime.strptime(entry.name[:16], "%Y%m%dT%H%M%SZ")
                deleted = stamp.replace(tzinfo=dt.UTC).isoformat(timespec="seconds")
                items.append(TrashItem(entry.name, path, deleted))
        return items

    def _trashed_path(self, trash_id: str) -> str | None:
        """The one note file under a trash entry, as its vault path (links not followed)."""
        here = self.root / TRASH / trash_id
        parts: list[str] = []
        while True:
            entries = [e for e in here.iterdir() if not e.name.startswith(".lore-tmp-")]
            if len(entries) != 1 or entries[0].is_symlink():
                return None
            parts.append(entries[0].name)
            if entries[0].is_file():
                break
            if not entries[0].is_dir():
                return None
            here = entries[0]
        try:
            return note_target("/".join(parts))
        except PathError:
            return None

    def restore(self, trash_id: str, *, to: str | None = None) -> NoteChange:
        """Put a deleted note back where it was (or at `to`); refused when that path is
        taken."""
        if not isinstance(trash_id, str) or not _TRASH_ID.match(trash_id):
            raise ConfigError(f"trash id {shown(str(trash_id))}: not an id `lore note trash` lists")
        entry = self.root / TRASH / trash_id
        original = (
            self._trashed_path(trash_id) if entry.is_dir() and not entry.is_symlink() else None
        )
        if original is None or not self.access.allows(original):
            raise NotFoundError(f"trash id {trash_id}: nothing in the trash has it")
        target = self._allowed(to or original, "to" if to else "path")
        folder, name = _split(original)
        _tf, target_name = _split(target)
        inside = f"{TRASH}/{trash_id}" + (f"/{folder}" if folder else "")
        with self._locked(target), open_folder(self.root, inside, create=False) as bin_:
            data = self._read(bin_, name, original)
            with self._open(target, create=True) as there:
                if there.lstat(target_name) is not None:
                    raise ConflictError(
                        f"{shown(target)} exists already; restore it elsewhere (`to`)"
                    )
                there.create([target_name], data)
        self._discard(trash_id, original)
        return NoteChange("restored", target, content_hash(data), moved_from=original)

    def _discard(self, trash_id: str, original: str) -> None:
        """Remove a trash entry (its file, then its empty folders)."""
        parts = original.split("/")
        for depth in range(len(parts), 0, -1):
            inside = "/".join([TRASH, trash_id, *parts[: depth - 1]])
            with open_folder(self.root, inside, create=False) as folder:
                if depth == len(parts):
                    folder.remove(parts[-1])
                else:
                    folder.remove_empty_folder(parts[depth - 1])
        with open_folder(self.root, TRASH, create=False) as bin_:
            bin_.remove_empty_folder(trash_id)
