"""`lore doctor`: check that the index can be trusted, and say exactly what repairs it.

Nothing here writes to the index or the files. The checks, each with its repair:

    files      every note file is indexed as it is now (missing, stale,
               orphaned)                                            → lore index
               and can be read (not valid UTF-8, unreadable)        → fix the file
    semantic   derived tags and texts-to-embed follow their notes   → lore index
    schema     schema version, tokenizer version, every table there → lore rebuild / reset
    vault      the index is bound to this vault (meta.vault_root)   (refused on open)
    fts        FTS5 integrity-check (PostgreSQL: the full-text statistics
               against the postings), one full-text row per note,
               document frequencies equal to what the index holds   → lore rebuild
    derived    no derived row points at a note that is gone         → lore rebuild
    sqlite     the file itself (PRAGMA integrity_check)             → delete it, lore index
    vectors    vectors come from the configured provider, one per
               text, same dimension; none missing                   → lore embed [--rebuild]

"reset" means deleting the index file and indexing again: the index is derived from the
files, so nothing is lost but the cached vectors and LLM answers, which are recomputed.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import quoted_safely
from ..ingest.scan import ScannedFiles, scan_vault
from ..model.sync import Skipped
from ..store.base import Store
from ..store.sqlite import default_db_path
from .doctor_checks import (
    EMBED,
    EMBED_REBUILD,
    FIX_FILE,
    INDEX,
    REBUILD,
    RESET,
    Checks,
    Problem,
    check_derived,
    check_engine,
    check_fts,
    check_schema,
    check_semantic,
    check_vectors,
    compare_files,
)

_CORE_ORDER = (INDEX, REBUILD, RESET)  # weakest first: a stronger repair does the weaker's work


@dataclass(frozen=True)
class DoctorReport:
    missing: list[str] = field(default_factory=list)  # files not in the index
    stale: list[str] = field(default_factory=list)  # indexed, but the file changed since
    orphaned: list[str] = field(default_factory=list)  # indexed, but the file is gone
    skipped: list[Skipped] = field(default_factory=list)
    unreadable: list[Skipped] = field(default_factory=list)  # lore index cannot fix these
    fts_error: str | None = None
    truncated: list[str] = field(default_factory=list)  # over max_file_bytes: head indexed
    schema: dict[str, Any] = field(default_factory=dict)
    vault: dict[str, Any] = field(default_factory=dict)
    vectors: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)  # check -> "ok" or what is wrong
    problems: list[Problem] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # `repair`, spelled out to paste
    engine: dict[str, str] = field(default_factory=dict)  # the backend and its versions
    reset_command: list[str] = field(default_factory=list)  # deletes the index (store's own)

    @property
    def ok(self) -> bool:
        """Nothing wrong: every reason it is not is one of `problems`."""
        return not self.problems

    @property
    def repair(self) -> str | None:
        """The repair, shortest form ("lore index", "lore rebuild && lore embed", ...);
        `commands` spells it out with this vault's --vault/--db."""
        steps = repair_steps(self)
        if RESET in steps:
            reset = self.reset_command or ["rm", "-f", self.vault.get("db", "<index>")]
            # The short form of deleting a file with its side files: one glob.
            file = reset[:2] == ["rm", "-f"]
            short = f"rm -f {shlex.quote(reset[2])}*" if file else shlex.join(reset)
            steps = [short if s == RESET else s for s in steps]
            steps.insert(1, INDEX)
        return " && ".join(steps) if steps else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "missing": self.missing,
            "stale": self.stale,
            "orphaned": self.orphaned,
            "skipped": [asdict(s) for s in self.skipped],
            "unreadable": [asdict(s) for s in self.unreadable],
            "fts_error": self.fts_error,
            "repair": self.repair,
            "truncated": self.truncated,
            "schema": self.schema,
            "vault": self.vault,
            "engine": self.engine,
            "vectors": self.vectors,
            "checks": self.checks,
            "problems": [asdict(p) for p in self.problems],
            "commands": self.commands,
        }


def repair_steps(report: DoctorReport) -> list[str]:
    needed = {p.repair for p in report.problems}
    if report.missing or report.stale or report.orphaned:
        needed.add(INDEX)
    if report.fts_error:
        needed.add(REBUILD)
    core = [step for step in _CORE_ORDER if step in needed][-1:]
    embed = [EMBED_REBUILD] if EMBED_REBUILD in needed else [EMBED] if EMBED in needed else []
    return core + embed


def spelled_out(steps: list[str], root: Path, db: Path | str, reset: list[str]) -> list[str]:
    """The repair steps as commands to paste: with --vault, and --db unless it is the
    default, and the reset as the store's command that deletes the index (`reset`: the
    files, or the vault's schema on a server), then `lore index`."""
    where = ["--vault", str(root)]
    if isinstance(db, str):  # a database URL, shown without its password
        where += ["--db", db]
    elif db.resolve() != default_db_path(root).resolve():
        where += ["--db", str(db)]
    out = []
    for step in steps:
        if step == RESET:
            out.append(shlex.join(reset))
            step = INDEX
        out.append(shlex.join([*step.split(), *where]))
    return out


def run_doctor(
    store: Store,
    root: Path,
    *,
    embedder: Callable[[], Any] | None = None,
    heuristic_tags: bool = True,
    semantic_needed: bool = True,
    gitignore: bool = True,
) -> DoctorReport:
    """Compare the index with the files and check it inside out, changing neither.
    `embedder` returns the configured embedding provider (anything with `.identity`),
    or something without one when none is configured."""
    skipped: list[Skipped] = []
    files = ScannedFiles(scan_vault(root, skipped, gitignore=gitignore))
    run = Checks(store, heuristic_tags=heuristic_tags, semantic_needed=semantic_needed)
    engine = store.engine()  # the backend names the engine's own check
    located = store.db_path
    db_path = located.resolve() if isinstance(located, Path) else located
    vault = {
        "root": str(root),
        "recorded": None,
        "db": str(db_path),
        "in_vault": db_path == default_db_path(root).resolve(),
    }
    missing: list[str] = []
    stale: list[str] = []
    orphaned: list[str] = []
    unreadable: list[Skipped] = []
    truncated: list[str] = []
    schema: dict[str, Any] = {}
    vectors: dict[str, Any] = {}
    fts_error: str | None = None
    try:
        with store.snapshot(), run.check("files"):
            meta = store.all_meta()
            vault["recorded"] = meta.get("vault_root")
            run.checks["vault"] = "ok" if vault["recorded"] == str(root) else "not recorded"
            missing, stale, orphaned, unreadable = compare_files(store, files)
            for paths, what in ((missing, "not indexed"), (stale, "changed since the last sync"),
                                (orphaned, "indexed but gone")):  # fmt: skip
                if paths:
                    run.problem("files", f"{len(paths)} note file(s) {what}", INDEX)
            for bad in unreadable:
                run.problem("files", f"{bad.path}: {bad.reason}", FIX_FILE)
            truncated = store.truncated_paths()
            schema = check_schema(run, meta)
            fts_error = store.fts_check()
            check_fts(run, fts_error)
            check_derived(run)
            check_semantic(run)
            vectors = check_vectors(run, meta, embedder or (lambda: None))
    except store.Error as exc:  # raised again when the snapshot ends, on a damaged file
        run.problem(engine["backend"], f"the index is damaged: {quoted_safely(exc)}", RESET)
    check_engine(run, engine["backend"])
    report = DoctorReport(
        missing,
        stale,
        orphaned,
        skipped,
        unreadable,
        fts_error,
        truncated=truncated,
        schema=schema,
        vault=vault,
        vectors=vectors,
        checks=run.checks,
        problems=run.problems,
        engine=engine,
        reset_command=store.reset_command(),
    )
    commands = spelled_out(repair_steps(report), root, db_path, report.reset_command)
    return DoctorReport(**{**report.__dict__, "commands": commands})
