"""The Vault façade: the composition root that the CLI, the MCP server and Python users share.

import lore
with lore.open("~/notes") as vault:
    vault.sync()
    for hit in vault.search("客户去重规则 v2"):
        print(hit.path, hit.date, hit.heading, hit.snippet)
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from .config import Settings, load_settings
from .errors import PathError, VaultError
from .index.sync import sync as run_sync
from .ingest.scan import scan_vault
from .model import SearchResult, Skipped, SyncReport
from .retrieve.search import SearchOptions, make_filters
from .retrieve.search import search as run_search
from .store.sqlite import SqliteStore, default_db_path


@dataclass(frozen=True)
class Status:
    vault: str
    db: str
    notes: int
    tags: int
    links: int
    last_sync: str | None
    schema_version: int
    mode: str
    capabilities: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class DoctorReport:
    missing: list[str] = field(default_factory=list)  # files not in the index
    stale: list[str] = field(default_factory=list)  # indexed, but the file changed since
    orphaned: list[str] = field(default_factory=list)  # indexed, but the file is gone
    skipped: list[Skipped] = field(default_factory=list)
    unreadable: list[Skipped] = field(default_factory=list)  # lore index cannot fix these
    fts_error: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stale or self.orphaned or self.fts_error)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "missing": self.missing,
            "stale": self.stale,
            "orphaned": self.orphaned,
            "skipped": [s.__dict__ for s in self.skipped],
            "unreadable": [s.__dict__ for s in self.unreadable],
            "fts_error": self.fts_error,
            "repair": self.repair,
        }

    @property
    def repair(self) -> str | None:
        if self.fts_error:
            return "lore rebuild"
        if self.missing or self.stale or self.orphaned:
            return "lore index"
        return None


def _resolve_vault(path: str | os.PathLike[str]) -> Path:
    raw = Path(path).expanduser()
    if not raw.exists():
        raise VaultError(f"vault {raw} does not exist")
    if not raw.is_dir():
        raise VaultError(f"vault {raw} is not a folder")
    return raw.resolve()


class Vault:
    """An open vault and its index. Use as a context manager, or call `close()`."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        db_path = settings.db if settings.db is not None else default_db_path(root)
        db_path = db_path if db_path.is_absolute() else Path.cwd() / db_path
        bound = db_path.resolve().parent == (root / ".lore").resolve()
        self.store = SqliteStore(db_path, root, bound_to_vault=bound)

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def db_path(self) -> Path:
        return self.store.db_path

    @property
    def mode(self) -> str:
        return "mode4"

    # -- indexing ----------------------------------------------------------------------------
    def sync(self, progress: Callable[[int, int, str], None] | None = None) -> SyncReport:
        """Bring the index up to date with the files (only what changed is written)."""
        return run_sync(
            self.store, self.root, max_file_bytes=self.settings.max_file_bytes, progress=progress
        )

    def rebuild(self, progress: Callable[[int, int, str], None] | None = None) -> SyncReport:
        """Drop every derived row and derive it again from the files, in one transaction."""
        return run_sync(
            self.store,
            self.root,
            rebuild=True,
            max_file_bytes=self.settings.max_file_bytes,
            progress=progress,
        )

    # -- querying ----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        tags: list[str] | tuple[str, ...] | str | None = None,
        tag: str | None = None,
        path: str | None = None,
        since: str | None = None,
        until: str | None = None,
        explain: bool = False,
    ) -> SearchResult:
        """Full-text search. Returns a list of Hit (best first) with `.mode` and `.reason`."""
        tag_list = [tags] if isinstance(tags, str) else list(tags or [])
        if tag:
            tag_list.append(tag)
        filters = make_filters(tag_list, path, since, until)
        options = SearchOptions(
            limit=limit,
            explain=explain,
            markers=self.settings.highlight,
            field_weights=self.settings.field_weights,
            mode=self.mode,
            max_df_ratio=self.settings.max_df_ratio,
        )
        return run_search(self.store, query, filters, options)

    def note(self, path: str) -> dict[str, Any]:
        """The indexed record of one note (path relative to the vault)."""
        rel = self.relative_path(path)
        rows = self.store.query(
            "SELECT id, path, title, title_source, date, date_source, frontmatter, headings,"
            " summary, body, body_line, size, hash, truncated FROM notes WHERE path = ?",
            [rel],
        )
        if not rows:
            raise PathError(f"{path}: not an indexed note of {self.root}", hint="run `lore index`")
        (
            nid,
            rel,
            title,
            title_source,
            date,
            date_source,
            fm,
            headings,
            summary,
            body,
            body_line,
            size,
            digest,
            truncated,
        ) = rows[0]
        tags = self.store.query(
            "SELECT tag, origin FROM tags WHERE note_id = ? ORDER BY position", [nid]
        )
        links = self.store.query(
            "SELECT target FROM links WHERE note_id = ? ORDER BY target", [nid]
        )
        return {
            "path": rel,
            "title": title,
            "title_source": title_source,
            "date": date,
            "date_source": date_source,
            "frontmatter": json.loads(fm),
            "tags": [{"tag": t, "origin": o} for t, o in tags],
            "links": [t for (t,) in links],
            "headings": [{"level": h[0], "text": h[1], "line": h[3]} for h in json.loads(headings)],
            "summary": summary,
            "body": body,
            "body_line": body_line,
            "size": size,
            "hash": digest,
            "truncated": bool(truncated),
        }

    def relative_path(self, path: str | os.PathLike[str]) -> str:
        """A vault-relative POSIX path for `path`; refuses anything outside the vault."""
        raw = Path(path)
        text = str(path)
        if "\x00" in text:
            raise PathError(f"{text!r}: a path cannot contain NUL")
        candidate = raw if raw.is_absolute() else self.root / raw
        resolved = Path(os.path.normpath(candidate))
        if resolved != self.root and self.root not in resolved.parents:
            raise PathError(f"{text}: outside the vault {self.root}")
        real = Path(os.path.realpath(resolved))
        if real != self.root and self.root not in real.parents:
            raise PathError(f"{text}: resolves outside the vault {self.root}")
        return resolved.relative_to(self.root).as_posix()

    def status(self) -> Status:
        meta = self.store.all_meta()
        count = {
            table: int(self.store.query(f"SELECT count(*) FROM {table}")[0][0])
            for table in ("notes", "tags", "links")
        }
        return Status(
            vault=str(self.root),
            db=str(self.db_path),
            notes=count["notes"],
            tags=int(self.store.query("SELECT count(DISTINCT tag_key) FROM tags")[0][0]),
            links=count["links"],
            last_sync=meta.get("last_sync"),
            schema_version=int(meta.get("schema_version", "0")),
            mode=self.mode,
            capabilities={
                "full_text": "yes (BM25, CJK-aware)",
                "embeddings": "none configured",
                "llm": "none configured",
            },
        )

    def doctor(self) -> DoctorReport:
        """Compare the index with the files without changing either."""
        skipped: list[Skipped] = []
        files = {f.path: f for f in scan_vault(self.root, skipped)}
        stored = self.store.stored_stats()
        bad = self.store.unreadable()
        unreadable = [
            Skipped(p, b.reason)
            for p, b in sorted(bad.items())
            if p in files and (files[p].mtime_ns, files[p].size) == (b.mtime_ns, b.size)
        ]
        known_bad = {s.path for s in unreadable}
        missing = sorted(p for p in files if p not in stored and p not in known_bad)
        orphaned = sorted(p for p in stored if p not in files)
        stale = sorted(
            p
            for p, f in files.items()
            if p in stored
            and p not in known_bad
            and (stored[p].mtime_ns, stored[p].size) != (f.mtime_ns, f.size)
        )
        return DoctorReport(missing, stale, orphaned, skipped, unreadable, self.store.fts_check())


def open_vault(
    vault: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    **settings: Any,
) -> Vault:
    """Open a vault (default: $LORE_VAULT, then the current folder) and its index."""
    if vault is None:
        vault = os.environ.get("LORE_VAULT") or "."
    root = _resolve_vault(vault)
    return Vault(root, load_settings(root, db=db, **settings))
