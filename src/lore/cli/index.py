"""lore index / rebuild / status / doctor."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..model.sync import SyncReport
    from ..vault import Vault

from . import llm_budget_option, open_from_options, vault_options


def _emit_sync(report: SyncReport, as_json: bool, quiet: bool = False) -> None:
    from ..present.human import format_sync
    from ..present.jsonout import dumps

    for notice in report.notices:
        click.echo(f"lore: notice: {notice}", err=True)
    click.echo(dumps(report.to_dict()) if as_json else format_sync(report, quiet=quiet))


def _index_options(func: Any) -> Any:
    func = click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1, max=64),
        default=None,
        metavar="N",
        help="Read and parse notes in N processes, 1 to 64 (the index is the same)"
        " [default: LORE_INDEX_JOBS, else the idle cores when 500+ notes changed].",
    )(func)
    func = llm_budget_option(func)
    func = click.option(
        "--quiet", "-q", is_flag=True, help="Print the counts only, no warnings (--json has all)."
    )(func)
    return click.option(
        "--yes",
        is_flag=True,
        help="Index even a home folder or the root of the file system (asked twice).",
    )(func)


def _open_to_index(vault: str | None, db: str | None, yes: bool) -> Vault:
    """The vault to index, refusing a folder too broad to mean (home, /) unless --yes."""
    from ..errors import VaultError
    from ..vault import broad_folder, resolve_vault

    root = resolve_vault(vault or os.environ.get("LORE_VAULT") or ".")
    what = broad_folder(root)
    if what is not None and not yes:
        raise VaultError(
            f"{root} is {what}: indexing it reads every Markdown file of every project under it",
            hint=f"give the notes folder (`lore index {root / 'notes'}`), or add --yes",
        )
    return open_from_options(str(root), db, create=True)


@click.command("index")
@click.argument("vault", required=False, type=click.Path())
@_index_options
@vault_options
def index_cmd(
    vault: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
    quiet: bool,
    yes: bool,
    llm_budget: int | None,
    jobs: int | None,
) -> None:
    """Index the vault (default: the current folder): read new and changed notes, drop
    deleted ones. The first `lore index` of a folder creates its index; no other
    command does.

    Only files whose size or modification time changed are read, and only notes whose
    content changed are written, all in one transaction. Tool folders (.venv,
    node_modules, build, ...) and what the vault's .gitignore ignores are left out.
    With an LLM, notes also get a summary, key claims and a category (cached: a second
    run calls nothing; see `lore llm status`).
    """
    from ..present.human import ProgressBar

    with _open_to_index(vault or vault_opt, db, yes) as opened:
        report = opened.sync(
            progress=ProgressBar("indexing"),
            llm_budget=llm_budget,
            llm_progress=ProgressBar("LLM calls"),
            jobs=jobs,
        )
        _emit_sync(report, as_json, quiet)


@click.command("rebuild")
@click.argument("vault", required=False, type=click.Path())
@_index_options
@vault_options
def rebuild_cmd(
    vault: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
    quiet: bool,
    yes: bool,
    llm_budget: int | None,
    jobs: int | None,
) -> None:
    """Drop every derived row and re-derive the index from the files.

    Ends in exactly the same index content as incremental `lore index` runs.
    """
    from ..present.human import ProgressBar

    with _open_to_index(vault or vault_opt, db, yes) as opened:
        report = opened.rebuild(
            progress=ProgressBar("rebuilding"),
            llm_budget=llm_budget,
            llm_progress=ProgressBar("LLM calls"),
            jobs=jobs,
        )
        _emit_sync(report, as_json, quiet)


@click.command("status")
@vault_options
def status_cmd(vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Counts, last sync, index location and the capabilities present."""
    from ..present.human import format_mapping
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        data = opened.status().to_dict()
    click.echo(dumps(data) if as_json else format_mapping(data))


@click.command("doctor")
@vault_options
def doctor_cmd(vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Check the index against the files and inside out: missing, stale and orphaned
    notes, schema and tokenizer version, vault binding, FTS integrity, derived rows,
    vectors against the configured provider, and the SQLite file itself.

    Changes nothing; exits 1 when something needs repair and prints the exact commands.
    """
    from ..index.doctor_checks import FIX_FILE
    from ..present.human import clean, format_mapping
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        report = opened.doctor()
    data = report.to_dict()
    if as_json:
        click.echo(dumps(data))
    else:
        click.echo(format_mapping(data))
        if report.ok:
            click.echo("index is consistent with the files")
        for problem in report.problems:
            if problem.repair == FIX_FILE:
                click.echo(f"fix: {clean(problem.message)}")
        if report.commands:
            click.echo(f"run: {' && '.join(report.commands)}")
    if not report.ok:
        sys.exit(1)


COMMANDS = [index_cmd, rebuild_cmd, status_cmd, doctor_cmd]
