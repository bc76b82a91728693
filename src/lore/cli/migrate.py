"""lore migrate."""

from __future__ import annotations

import click

from . import open_from_options, vault_options


@click.command("migrate")
@click.argument("vault", required=False, type=click.Path())
@click.option(
    "--to",
    "target_db",
    required=True,
    metavar="DB",
    help="The index to move to: postgresql://… or an index file.",
)
@vault_options
def migrate_cmd(
    vault: str | None, target_db: str, vault_opt: str | None, db: str | None, as_json: bool
) -> None:
    """Move the vault's index to another database, e.g. from its index file to PostgreSQL
    (and back): the model answers and vectors are copied, so nothing is embedded again and
    no model call is paid twice; the target is brought up to date from the notes, the
    interest map copied with its cluster ids, and both indexes must then answer a sample
    of queries alike. The source index is only read. Run it again to resume."""
    from ..present.jsonout import dumps
    from ..transfer import migrate

    with open_from_options(vault or vault_opt, db) as source:
        with open_from_options(str(source.root), target_db, create=True) as target:
            report = migrate(source, target)
    if as_json:
        click.echo(dumps(report.to_dict()))
        return
    for notice in report.notices:
        click.echo(f"lore: notice: {notice}", err=True)
    click.echo(f"migrated {report.source} → {report.target}: {report.notes} notes indexed")
    click.echo(_copied("model answers", report.answers.copied, report.answers.present))
    click.echo(_copied("vectors", report.vectors.copied, report.vectors.present))
    if report.clusters is not None:
        click.echo(f"interest map: {report.clusters} clusters copied with their ids")
    if report.tokens.copied or report.tokens.present:
        click.echo(_copied("access tokens", report.tokens.copied, report.tokens.present))
    click.echo(f"answers compared on {report.checked} sample queries: the same")


def _copied(what: str, copied: int, present: int) -> str:
    return f"{what}: {copied} copied" + (f", {present} already there" if present else "")


COMMANDS = [migrate_cmd]
