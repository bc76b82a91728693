"""The default storage backend: one SQLite file (WAL) opened through apsw.

apsw is used rather than the standard library's sqlite3 because it ships a current SQLite
(contentless-delete FTS5) and can load extensions such as sqlite-vec on every platform.
This module is the only one that writes SQL; callers see plain Python values.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from ..errors import (
    IndexBusyError,
    IndexError_,
    IndexFullError,
    IndexReadOnlyError,
    SchemaError,
    VaultMismatchError,
    shown,
)
from .schema import FTS_COLUMNS, MIGRATIONS, SCHEMA_VERSION

BUSY_TIMEOUT_MS = 5_000
# The version of what a note file becomes in the index (tokens, tags, dates, the title
# field). A sync re-derives an index whose rows came from another version.
# 2: one Markdown reader (Obsidian tag rules), no mtime dates, file name and aliases as title
#    text, symbol names (c++, C#, .NET) as tokens.
# 3: keywords from prose only (no URLs, images, inline code); the summary's tail is the last
#    paragraph of prose, never a piece of a code block.
# 5: the author's `summary:` is the summary field (lore.derive.summary.base_summary).
TOKENIZER_VERSION = "5"


@dataclass(frozen=True, slots=True)
class StoredStat:
    id: int
    mtime_ns: int
    size: int
    hash: str
    date_source: str | None


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A file the last sync could not take in, with the stat it had then."""

    mtime_ns: int
    size: int
    reason: str


@dataclass(frozen=True)
class NoteRow:
    """What the sync writes for one note (everything but the id)."""

    path: str
    title: str
    title_source: str
    date: str | None
    date_source: str | None
    mtime_ns: int
    size: int
    hash: str
    frontmatter: dict[str, Any]
    headings: list[list[Any]]
    summary: str
    body: str
    body_line: int
    priority: int | None
    status: str | None
    truncated: bool
    tags: list[tuple[str, str]]  # (tag as written, origin)
    links: list[str]
    fts: tuple[str, str, str, str]  # token streams, in FTS_COLUMNS order


def _busy(db_path: Path) -> IndexBusyError:
    return IndexBusyError(
        f"index busy: another lore process is writing {db_path}",
        hint="wait for it to finish and try again",
    )


def disk_full(db_path: Path) -> IndexFullError:
    return IndexFullError(
        f"disk full: cannot write the index {db_path}; the index is unchanged",
        hint="free some space, or put the index elsewhere with --db or LORE_DB",
    )


def damaged(db_path: Path, why: object) -> SchemaError:
    """The index file cannot be read as a lore index; it is derived, so it can be remade."""
    return SchemaError(
        f"index {db_path} is damaged: {why}",
        hint=f"delete {db_path} and run `lore index`: it is rebuilt from the files",
    )


class _CannotWrite(Exception):
    """SQLite could not open the index for writing (a read-only file, folder or disk)."""


class SqliteStore:
    """An open index file. Not thread-safe: one store per thread or process.

    An index that cannot be written (a read-only file, folder or mount) is opened read-only
    (`read_only`): every read works, and every write transaction raises
    IndexReadOnlyError. `nofollow` refuses a database path that is a symlink (the index
    inside a vault, which the vault's author could have linked anywhere)."""

    def __init__(
        self, db_path: Path, vault_root: Path, *, bound_to_vault: bool, nofollow: bool = False
    ) -> None:
        self.db_path = db_path
        self.vault_root = vault_root
        self._bound_to_vault = bound_to_vault
        self.read_only = False
        follow = apsw.SQLITE_OPEN_NOFOLLOW if nofollow else 0
        try:
            db_path.parent.mkdir(parents=True, exist_ok=True)
            self._open(str(db_path), apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | follow)
        except _CannotWrite as exc:
            if not db_path.is_file():
                raise IndexError_(
                    f"cannot write index at {db_path}: {exc}",
                    hint="use --db or LORE_DB to put the index somewhere writable",
                ) from None
            self._open_read_only(follow)
        except (OSError, UnicodeEncodeError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            if isinstance(exc, UnicodeEncodeError):
                reason = "the path is not valid UTF-8"
            elif isinstance(exc, ValueError):  # a NUL in the path
                reason = "the path cannot contain NUL"
            raise IndexError_(
                f"cannot open index at {shown(str(db_path))}: {reason}",
                hint="use --db or LORE_DB to put the index somewhere writable",
            ) from None

    def _open_read_only(self, follow: int) -> None:
        """Open the index for reading only: shared read-only first (it sees another
        writer's commits), else immutable (a read-only folder where SQLite cannot make the
        WAL's shared-memory file)."""
        self.read_only = True
        uri = self.db_path.absolute().as_uri()
        flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI | follow
        try:
            self._open(f"{uri}?mode=ro", flags)
        except _CannotWrite:
            try:
                self._open(f"{uri}?immutable=1", flags)
            except _CannotWrite as exc:
                raise IndexError_(f"cannot read index at {self.db_path}: {exc}") from None

    def _open(self, name: str, flags: int) -> None:
        try:
            self.db = apsw.Connection(name, flags=flags)
        except apsw.CantOpenError as exc:
            raise _CannotWrite(str(exc)) from None
        self.db.setbusytimeout(BUSY_TIMEOUT_MS)
        try:
            self.read_only = self.read_only or self.db.readonly("main")
            self._prepare()
        except apsw.BusyError:
            self.db.close()
            raise _busy(self.db_path) from None
        except apsw.FullError:
            self.db.close()
            raise disk_full(self.db_path) from None
        except (apsw.ReadOnlyError, apsw.CantOpenError, apsw.IOError) as exc:
            self.db.close()
            raise _CannotWrite(str(exc)) from None
        except apsw.NotADBError:
            self.db.close()
            raise SchemaError(
                f"{self.db_path} is not a lore index (not an SQLite database)",
                hint="move it away or point --db elsewhere",
            ) from None
        except apsw.CorruptError as exc:
            self.db.close()
            raise damaged(self.db_path, exc) from None
        except BaseException:  # refused (newer, other vault) or a failed migration
            self.db.close()
            raise

    # -- opening ---------------------------------------------------------------------------

    def _prepare(self) -> None:
        if not self.read_only:
            if self._scalar("PRAGMA journal_mode") != "wal":
                self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=OFF")
        version = self._schema_version()
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"index {self.db_path} was written by a newer lore (schema {version}, "
                f"this lore knows {SCHEMA_VERSION})",
                hint="upgrade lore, or delete it and run `lore index` to rebuild it with this"
                " version (it is derived from the files)",
            )
        if version < SCHEMA_VERSION:
            if self.read_only:
                raise self.read_only_error(f"and needs upgrading (schema {version})")
            with self.transaction():
                for _name, migrate in MIGRATIONS[version:]:
                    migrate(self.db)
                self.set_meta("schema_version", str(SCHEMA_VERSION))
                if version == 0:  # an upgraded index keeps the version its rows came from
                    self.set_meta("tokenizer_version", TOKENIZER_VERSION)
                if self.get_meta("vault_root") is None:
                    self.set_meta("vault_root", str(self.vault_root))
        self._check_vault()

    def read_only_error(self, what: str = "") -> IndexReadOnlyError:
        return IndexReadOnlyError(
            f"index {self.db_path} is read-only{' ' + what if what else ''}: it cannot be updated",
            hint="make it and its folder writable, or use --db or LORE_DB for another index",
        )

    def _scalar(self, sql: str) -> Any:
        row = self.db.execute(sql).fetchone()
        return None if row is None else row[0]

    def _schema_version(self) -> int:
        has_meta = self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        if not has_meta:
            if self._scalar("SELECT count(*) FROM sqlite_master"):
                raise SchemaError(
                    f"{self.db_path} is an SQLite database but not a lore index",
                    hint="point --db at another file",
                )
            return 0
        value = self.get_meta("schema_version")
        if value is None or not value.isdigit():
            why = "no schema version" if value is None else f"schema version {value!r}"
            raise damaged(self.db_path, f"{why} recorded")
        return int(value)

    def _check_vault(self) -> None:
        recorded = self.get_meta("vault_root")
        if recorded is None or recorded == str(self.vault_root):
            return
        if self._bound_to_vault:
            # The index lives inside the vault's own .lore folder: the vault was moved or
            # copied with it. It is still this vault's index; record the new place.
            if self.read_only:
                return
            with self.transaction():
                self.set_meta("vault_root", str(self.vault_root))
            return
        raise VaultMismatchError(
            f"index {self.db_path} belongs to the vault {recorded}, not {self.vault_root}",
            hint="pass that vault, or another --db for this one",
        )

    def close(self) -> None:
        self.db.close()

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE … COMMIT; any exception rolls everything back (once: SQLite may
        have rolled back already, e.g. when the disk filled up)."""
        if self.read_only:
            raise self.read_only_error()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            raise _busy(self.db_path) from None
        except apsw.FullError:
            raise disk_full(self.db_path) from None
        try:
            yield
            self.db.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, apsw.BusyError):
                raise _busy(self.db_path) from None
            if isinstance(exc, apsw.FullError):
                raise disk_full(self.db_path) from None
            raise

    def _rollback(self) -> None:
        if self.db.getautocommit():
            return  # nothing left to roll back
        try:
            self.db.execute("ROLLBACK")
        except apsw.Error:
            pass  # the transaction was never committed: SQLite discards it on the next open

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    # -- meta ------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def all_meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    # -- writes (call inside transaction()) ------------------------------------------------

    def stored_stats(self) -> dict[str, StoredStat]:
        return {
            path: StoredStat(nid, mtime, size, digest, date_source)
            for nid, path, mtime, size, digest, date_source in self.db.execute(
                "SELECT id, path, mtime_ns, size, hash, date_source FROM notes"
            )
        }

    def unreadable(self) -> dict[str, Unreadable]:
        return {
            str(path): Unreadable(int(mtime), int(size), str(reason))
            for path, mtime, size, reason in self.db.execute(
                "SELECT path, mtime_ns, size, reason FROM unreadable"
            )
        }

    def mark_unreadable(self, path: str, mtime_ns: int, size: int, reason: str) -> None:
        self.db.execute(
            "INSERT INTO unreadable(path, mtime_ns, size, reason) VALUES (?,?,?,?)"
            " ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns,"
            " size = excluded.size, reason = excluded.reason",
            (path, mtime_ns, size, reason),
        )

    def clear_unreadable(self, path: str) -> None:
        self.db.execute("DELETE FROM unreadable WHERE path = ?", (path,))

    def reinsert_fts(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        self.db.execute(
            "INSERT INTO fts(rowid, title, tags, summary, body) VALUES (?,?,?,?,?)",
            (note_id, *fields),
        )

    def clear_search_index(self) -> None:
        """Empty the full-text index and the document frequencies (rebuild re-fills them),
        and drop tag and link rows that belong to no note (rebuild re-derives the rest)."""
        self.db.execute(
            "DELETE FROM fts; DELETE FROM term_df;"
            " DELETE FROM tags WHERE note_id NOT IN (SELECT id FROM notes);"
            " DELETE FROM links WHERE note_id NOT IN (SELECT id FROM notes);"
        )

    def update_stat(self, note_id: int, mtime_ns: int, size: int) -> None:
        self.db.execute(
            "UPDATE notes SET mtime_ns = ?, size = ? WHERE id = ?", (mtime_ns, size, note_id)
        )

    def upsert_note(self, row: NoteRow, note_id: int | None) -> int:
        values = (
            row.path,
            row.title,
            row.title_source,
            row.date,
            row.date_source,
            row.mtime_ns,
            row.size,
            row.hash,
            json.dumps(row.frontmatter, ensure_ascii=False, sort_keys=True),
            json.dumps(row.headings, ensure_ascii=False),
            row.summary,
            row.body,
            row.body_line,
            row.priority,
            row.status,
            int(row.truncated),
        )
        if note_id is None:
            self.db.execute(
                "INSERT INTO notes(path, title, title_source, date, date_source, mtime_ns, size,"
                " hash, frontmatter, headings, summary, body, body_line, priority, status,"
                " truncated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                values,
            )
            note_id = int(self.db.last_insert_rowid())
        else:
            self.db.execute(
                "UPDATE notes SET path=?, title=?, title_source=?, date=?, date_source=?,"
                " mtime_ns=?, size=?, hash=?, frontmatter=?, headings=?, summary=?, body=?,"
                " body_line=?, priority=?, status=?, truncated=? WHERE id = ?",
                (*values, note_id),
            )
            self._delete_derived(note_id)
        self.db.executemany(
            "INSERT OR IGNORE INTO tags(note_id, tag, tag_key, origin, position)"
            " VALUES (?,?,?,?,?)",
            [(note_id, tag, tag.casefold(), origin, i) for i, (tag, origin) in enumerate(row.tags)],
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO links(note_id, target, target_key) VALUES (?,?,?)",
            [(note_id, target, target.casefold()) for target in row.links],
        )
        self.db.execute(
            "INSERT INTO fts(rowid, title, tags, summary, body) VALUES (?,?,?,?,?)",
            (note_id, *row.fts),
        )
        return note_id

    def _delete_derived(self, note_id: int) -> None:
        self.db.execute("DELETE FROM tags WHERE note_id = ?", (note_id,))
        self.db.execute("DELETE FROM links WHERE note_id = ?", (note_id,))
        self.db.execute("DELETE FROM fts WHERE rowid = ?", (note_id,))

    def delete_note(self, note_id: int) -> None:
        self._delete_derived(note_id)
        self.db.execute("DELETE FROM notes WHERE id = ?", (note_id,))

    def note_fields(self, note_id: int) -> tuple[str, dict[str, Any], str, list[str], str, str]:
        """(title, front matter, path, tags, summary, body) as stored, to re-derive old
        terms (lore.derive.fields.note_fts_fields)."""
        row = self.db.execute(
            "SELECT title, frontmatter, path, summary, body FROM notes WHERE id = ?", (note_id,)
        ).fetchone()
        assert row is not None, f"note {note_id} vanished inside a transaction"
        title, fm, path, summary, body = row
        tags = [
            str(tag)
            for (tag,) in self.db.execute(
                "SELECT tag FROM tags WHERE note_id = ? ORDER BY position", (note_id,)
            )
        ]
        return str(title), json.loads(fm), str(path), tags, str(summary), str(body)

    def apply_df(self, delta: dict[str, int]) -> None:
        changes = [(term, n) for term, n in delta.items() if n]
        self.db.executemany(
            "INSERT INTO term_df(term, df) VALUES (?, ?)"
            " ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
            changes,
        )
        self.db.execute("DELETE FROM term_df WHERE df <= 0")

    def document_frequencies(self, terms: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for start in range(0, len(terms), 500):
            chunk = terms[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                (str(t), int(n))
                for t, n in self.db.execute(
                    f"SELECT term, df FROM term_df WHERE term IN ({marks})", chunk
                )
            )
        return found

    # -- reads -----------------------------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self.db.execute(sql, params))
        except apsw.BusyError:
            raise _busy(self.db_path) from None

    def fts_check(self) -> str | None:
        """Run FTS5's integrity check; None when healthy, else the error text."""
        try:
            self.db.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 0)")
        except apsw.Error as exc:
            return str(exc)
        return None

    def fts_columns(self) -> tuple[str, ...]:
        return FTS_COLUMNS


DEFAULT_DB_NAME = "index.sqlite"


def default_db_path(vault_root: Path) -> Path:
    return vault_root / ".lore" / DEFAULT_DB_NAME


def db_path_from_env() -> Path | None:
    value = os.environ.get("LORE_DB")
    return Path(value).expanduser() if value else None
