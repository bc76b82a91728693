"""lore embed."""

from __future__ import annotations

import click

from . import open_from_options, vault_options


@click.command("embed")
@click.argument("vault", required=False, type=click.Path())
@click.option(
    "--rebuild",
    is_flag=True,
    help="Drop every stored vector first (after changing the embedding model).",
)
@vault_options
def embed_cmd(
    vault: str | None, rebuild: bool, vault_opt: str | None, db: str | None, as_json: bool
) -> None:
    """Embed every note text that has no vector yet (summary, tags, passages of long notes).

    Needs an embedding provider (LORE_EMBED_PROVIDER=local or openai). Syncs first. Only
    texts whose content changed are embedded; a second run embeds nothing and calls
    nothing; an interrupted run resumes where it stopped.
    """
    from ..present.human import ProgressBar
    from ..present.jsonout import dumps

    with open_from_options(vault or vault_opt, db) as opened:
        report = opened.embed(rebuild=rebuild, progress=ProgressBar("embedding"))
        data = report.to_dict()
        data["mode"] = opened.mode
    if as_json:
        click.echo(dumps(data))
        return
    rate = f", {report.embedded / report.seconds:.1f} texts/s" if report.seconds > 0 else ""
    click.echo(
        f"embedded {report.embedded} text(s) of {report.notes} note(s) with {report.identity}"
        f" in {report.seconds:.1f} s{rate}; removed {report.removed} unused; now {data['mode']}"
    )


COMMANDS = [embed_cmd]
