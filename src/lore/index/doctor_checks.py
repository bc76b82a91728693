"""The checks of `lore doctor` (lore.index.doctor), each reading the index inside the
doctor's read snapshot and recording what is wrong as a Problem with its repair."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import LoreError, quoted_safely
from ..ingest.scan import ScannedFiles
from ..model.sync import Skipped
from ..store.base import Store
from ..store.sqlite import TOKENIZER_VERSION
from .compare import compare

# Repairs, weakest first: a stronger one also does what a weaker one would.
INDEX, REBUILD, RESET = "lore index", "lore rebuild", "reset"
EMBED, EMBED_REBUILD = "lore embed", "lore embed --rebuild"
FIX_FILE = "fix the file"  # what lore cannot repair: the file itself (its encoding, its mode)
_NOTE_ID = re.compile(r"\bnote_id\b")
# Tables refreshed after the sync transaction (lore.index.semantic), checked as "semantic".
SEMANTIC_TABLES = ("semantic_state", "derived_tags", "note_texts", "note_llm")
_VEC_DIM = re.compile(r"float\[(\d+)\]")
# Tables no migration makes: sqlite's own, FTS5's shadow tables, sqlite-vec's.
_NOT_MIGRATED = re.compile(r"^(sqlite_|fts_|vec_items)")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the index, in one line, and the command that repairs it."""

    check: str
    message: str
    repair: str


class Checks:
    """Runs each check inside one read snapshot; an SQLite error in a check is a damaged
    index (reported, never raised)."""

    def __init__(
        self, store: Store, *, heuristic_tags: bool = True, semantic_needed: bool = True
    ) -> None:
        self.store = store
        self.heuristic_tags = heuristic_tags  # whether the semantic layer derives keywords
        self.semantic_needed = semantic_needed  # whether it runs at all (not in plain mode 4)
        self.checks: dict[str, str] = {}
        self.problems: list[Problem] = []

    def problem(self, check: str, message: str, repair: str) -> None:
        if Problem(check, message, repair) in self.problems:
            return
        self.problems.append(Problem(check, message, repair))
        previous = self.checks.get(check, "ok")
        self.checks[check] = message if previous == "ok" else f"{previous}; {message}"

    @contextmanager
    def check(self, name: str) -> Iterator[None]:
        self.checks.setdefault(name, "ok")
        try:
            yield
        except self.store.Error as exc:
            self.problem(name, f"the index file is damaged: {quoted_safely(exc)}", RESET)

    def tables(self) -> dict[str, str]:
        return self.store.table_definitions()


def check_schema(run: Checks, meta: dict[str, str]) -> dict[str, Any]:
    version = meta.get("schema_version", "")
    info = {
        "version": int(version) if version.isdigit() else None,
        "expected": len(run.store.migrations()),
        "migrations": run.store.migrations(),
        "tokenizer_version": meta.get("tokenizer_version"),
        "expected_tokenizer_version": TOKENIZER_VERSION,
    }
    with run.check("schema"):
        if info["version"] != info["expected"]:
            run.problem("schema", f"schema version {version!r}, expected {info['expected']}", RESET)
        missing = sorted(run.store.expected_tables() - set(run.tables()))
        if missing:
            run.problem("schema", f"tables missing: {', '.join(missing)}", RESET)
        if meta.get("tokenizer_version") != TOKENIZER_VERSION:
            run.problem(
                "schema",
                f"full-text tokens from tokenizer version {meta.get('tokenizer_version')},"
                f" this lore writes version {TOKENIZER_VERSION}",
                REBUILD,
            )
    return info


def check_fts(run: Checks, fts_error: str | None) -> None:
    with run.check("fts"):
        if fts_error:
            run.problem("fts", f"full-text integrity check failed: {fts_error}", REBUILD)
        notes = run.store.row_count("notes")
        rows = run.store.row_count("fts")
        if rows != notes:
            run.problem("fts", f"{rows} full-text rows for {notes} notes", REBUILD)
        drift = run.store.df_drift()
        if drift:
            run.problem(
                "fts", f"document frequencies of {drift} term(s) differ from the index", REBUILD
            )


def check_derived(run: Checks) -> None:
    """No row of a per-note table may point at a note that is gone. The interest map is a
    snapshot of its build (lore.store.interest): its members may name deleted notes."""
    with run.check("derived"):
        for table, sql in sorted(run.tables().items()):
            if table in SEMANTIC_TABLES or table.startswith(("sqlite_", "fts_", "vec_")):
                continue
            if table.startswith("interest_"):
                continue
            if not _NOTE_ID.search(sql):
                continue
            n = run.store.orphan_rows(table)
            if n:
                run.problem("derived", f"{n} row(s) of {table} belong to no note", REBUILD)
        n = run.store.orphan_rows("fts")
        if n:
            run.problem("derived", f"{n} full-text row(s) belong to no note", REBUILD)


def check_semantic(run: Checks) -> None:
    """Derived tags and texts-to-embed are refreshed by every `lore index` after its
    transaction; an interrupted refresh leaves them behind, which the next sync completes."""
    if "semantic_state" not in run.tables() or not run.semantic_needed:
        return
    from .semantic import stale_notes

    with run.check("semantic"):
        stale = len(stale_notes(run.store, run.heuristic_tags))
        gone = sum(run.store.orphan_rows(t) for t in SEMANTIC_TABLES)
        if stale or gone:
            run.problem(
                "semantic",
                f"derived tags and texts are out of date for {stale} note(s)"
                + (f", {gone} row(s) of deleted notes" if gone else ""),
                INDEX,
            )


def check_engine(run: Checks, backend: str) -> None:
    """The engine's own check of the index, named by the backend: SQLite's integrity_check
    of the file, or on PostgreSQL amcheck of the vault's B-tree indexes."""
    what = "integrity_check" if backend == "sqlite" else "integrity"
    with run.check(backend):
        rows = run.store.integrity_problems(10)
        if rows != ["ok"]:
            run.problem(backend, f"{what}: {'; '.join(rows)[:300]}", RESET)


def check_vectors(
    run: Checks, meta: dict[str, str], configured: Callable[[], Any]
) -> dict[str, Any]:
    """Vectors against the provider identity: recorded in meta by the semantic layer."""
    tables = run.tables()
    recorded = meta.get("embed_identity")
    info: dict[str, Any] = {"identity": recorded, "dim": meta.get("embed_dim")}
    try:
        provider = configured()
    except LoreError as exc:
        provider = None
        info["configured_error"] = str(exc)
    identity = getattr(provider, "identity", None)
    info["configured"] = identity
    if "vec_texts" not in tables:
        return info
    with run.check("vectors"):
        count = run.store.row_count("vec_texts")
        info["count"] = count
        if "configured_error" in info and (recorded or count):
            run.problem("vectors", f"embedding provider: {info['configured_error']}", EMBED)
        if identity is None or "configured_error" in info:
            if count:
                run.checks["vectors"] = f"{count} vector(s) of {recorded} kept; no provider set"
            return info
        if recorded is not None and recorded != identity and count:
            run.problem(
                "vectors",
                f"the index holds vectors from {recorded}, the configured provider is {identity}",
                EMBED_REBUILD,
            )
            return info
        declared = run.store.vector_dimension()
        if count and declared is None:
            run.problem("vectors", f"{count} vector key(s) but no vector table", EMBED_REBUILD)
            return info
        if declared is not None:
            if declared and meta.get("embed_dim") != declared:
                run.problem(
                    "vectors",
                    f"vector table has {declared} dimensions,"
                    f" the index records {meta.get('embed_dim')}",
                    EMBED_REBUILD,
                )
            try:
                run.store.load_vec()
            except LoreError as exc:
                run.checks["vectors"] = f"not checked: {exc}"
                return info
            stored = run.store.row_count("vec_items")
            unkeyed = run.store.unkeyed_vectors()
            if stored != count or unkeyed:
                run.problem(
                    "vectors", f"{stored} vector(s) for {count} vector key(s)", EMBED_REBUILD
                )
        from .embed import pending_count

        pending = pending_count(run.store, identity)
        info["pending_notes"] = pending
        if pending:
            run.problem("vectors", f"{pending} note(s) have texts without a vector", EMBED)
    return info


def compare_files(
    store: Store, files: ScannedFiles
) -> tuple[list[str], list[str], list[str], list[Skipped]]:
    """(missing, stale, orphaned, unreadable): the index against the files' stat, compared
    as a sync compares them (lore.index.compare), from the notes' stamps."""
    bad = store.unreadable()
    found = compare(files, store.note_stamps(), bad)
    pending = [stat.path for stat in found.pending]
    missing = sorted(p for p in pending if p not in found.indexed)
    stale = sorted(p for p in pending if p in found.indexed)
    unreadable = [Skipped(p, bad[p].reason) for p, _indexed in sorted(found.unreadable)]
    return missing, stale, found.gone, unreadable
