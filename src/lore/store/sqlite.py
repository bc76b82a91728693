"""The default storage backend: one SQLite file (WAL) opened through apsw.

apsw is used rather than the standard library's sqlite3 because it ships a current SQLite
(contentless-delete FTS5) and can load extensions such as sqlite-vec on every platform.
The package lore.store is the only one that writes SQL; callers see the Store protocol
(lore.store.base) and plain row models (lore.store.rows). The SQL is split by area into
mixins over one connection (sqlite_base): notes, search, pinyin, vectors, memory, interest,
checks; what both backends share is written once (lore.store.sql_base), what is SQLite's
own is in the sqlite_* modules.
"""

from __future__ import annotations

from pathlib import Path

import apsw

from ..errors import IndexError_, SchemaError, VaultMismatchError, shown
from .interest import InterestSql
from .pinyin import PinyinSql
from .schema import MIGRATIONS, SCHEMA_VERSION
from .sqlite_base import BUSY_TIMEOUT_MS, busy, damaged, disk_full
from .sqlite_checks import CheckSql
from .sqlite_memory import SqliteMemory
from .sqlite_notes import SqliteNotes
from .sqlite_parts import unshared_allocator
from .sqlite_search import SqliteSearch
from .sqlite_vectors import SqliteVectors
from .tokens import TokenSql
from .transfer import TransferSql

__all__ = ["SqliteStore", "damaged", "disk_full"]

# The version of what a note file becomes in the index (tokens, tags, dates, the title
# field). A sync re-derives an index whose rows came from another version.
# 2: one Markdown reader (Obsidian tag rules), no mtime dates, file name and aliases as title
#    text, symbol names (c++, C#, .NET) as tokens.
# 3: keywords from prose only (no URLs, images, inline code); the summary's tail is the last
#    paragraph of prose, never a piece of a code block.
# 5: the author's `summary:` is the summary field (lore.derive.summary.base_summary).
# 6: Chinese folded to Simplified with Taiwan / Hong Kong words as alternatives (the OpenCC
#    1.4.2 tables of lore.derive.fold_data: regenerating them is a new version), pinyin of
#    names and tags (issue 17); the body indexed in parts too (table sections,
#    lore.derive.sections; issue 12); command-line options (-t, --force) tokens of their
#    own (lore.derive.tokenize; issue 12).
# 7: backslash escapes (\1, \n) and a lone & tokens of their own (issue 12).
# 8: no tag from HTML: its attributes, HTML blocks, <style> and <pre>; Markdown links to
#    notes are links (issue 12).
# 9: a note's title is its first heading, not a "#" heading below a "##" one (a footer);
#    a template's placeholder ("{{title}}") names no note (issue 12).
TOKENIZER_VERSION = "9"


class _CannotWrite(Exception):
    """SQLite could not open the index for writing (a read-only file, folder or disk)."""


class SqliteStore(
    SqliteNotes,
    SqliteSearch,
    PinyinSql,
    SqliteVectors,
    SqliteMemory,
    InterestSql,
    CheckSql,
    TransferSql,
    TokenSql,
):
    """An open index file. Not thread-safe: one store per thread or process.

    An index that cannot be written (a read-only file, folder or mount) is opened read-only
    (`read_only`): every read works, and every write transaction raises
    IndexReadOnlyError. `nofollow` refuses a database path that is a symlink (the index
    inside a vault, which the vault's author could have linked anywhere)."""

    def __init__(
        self, db_path: Path, vault_root: Path, *, bound_to_vault: bool, nofollow: bool = False
    ) -> None:
        unshared_allocator()  # before the process's first connection (lore.store.sqlite_parts)
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
            raise busy(self.db_path) from None
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
        # the second connection a search ranks the notes' parts on (lore.store.sqlite_parts)
        writes = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        self._reader_at = (name, flags & ~writes | apsw.SQLITE_OPEN_READONLY)

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
        self.close_reader()
        self.db.close()


DEFAULT_DB_NAME = "index.sqlite"


def default_db_path(vault_root: Path) -> Path:
    return vault_root / ".lore" / DEFAULT_DB_NAME
