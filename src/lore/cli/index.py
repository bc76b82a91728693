"""lore index / rebuild / status / doctor."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..model import SyncReport

from . import open_from_options, vault_options


def _emit_sync(report: SyncReport, as_json: bool) -> None:
    from ..present.human import format_sync
    from ..present.jsonout import dumps

    for notice in report.notices:
        click.echo(f"lore: notice: {notice}", err=True)
    click.echo(dumps(report.to_dict()) if as_json else format_sync(report))


@click.command("index")
@click.argument("vault", required=False, type=click.Path())
@vault_options
def index_cmd(vault: str | None, vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Index the vault: read new and changed notes, drop deleted ones.

    Only files whose size or modification time changed are read, and only notes whose
    content changed are written, all in one transaction.
    """
    from ..present.human import ProgressBar

    with open_from_options(vault or vault_opt, db) as opened:
        _emit_sync(opened.sync(progress=ProgressBar("indexing")), as_json)


@click.command("rebuild")
@click.argument("vault", required=False, type=click.Path())
@vault_options
def rebuild_cmd(vault: str | None, vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Drop every derived row and re-derive the index from the files.

    Ends in exactly the same index content as incremental `lore index` runs.
    """
    from ..present.human import ProgressBar

    with open_from_options(vault or vault_opt, db) as opened:
        _emit_sync(opened.rebuild(progress=ProgressBar("rebuilding")), as_json)


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
    from ..present.human import format_mapping
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        report = opened.doctor()
    data = report.to_dict()
    if as_json:
        click.echo(dumps(data))
    else:
        click.echo(format_mapping(data))
        click.echo(
            "index is consistent with the files"
            if report.ok
            else f"run: {' && '.join(report.commands) or report.repair}"
        )
    if not report.ok:
        sys.exit(1)


COMMANDS = [index_cmd, rebuild_cmd, status_cmd, doctor_cmd]
