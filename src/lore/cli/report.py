"""lore report."""

from __future__ import annotations

from pathlib import Path

import click

from . import open_from_options, sync_before_reading, vault_options


@click.command("report")
@click.option(
    "--since",
    default=None,
    metavar="DATE",
    help="Start of the window (YYYY, YYYY-MM or YYYY-MM-DD) up to today. Default: the last "
    "7 days, or the 7 days up to the newest note when nothing is dated in the last 7.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html"]),
    default="md",
    show_default=True,
    help="Markdown or one self-contained HTML page.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    metavar="DIR",
    help="Write report.md or report.html and the chart PNGs into DIR (created if missing).",
)
@click.option(
    "--charts/--no-charts",
    default=True,
    help="Draw the cluster map and trend charts (Markdown: only with --out).",
)
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="New notes listed at most.",
)
@click.option(
    "--today",
    default=None,
    metavar="DATE",
    help="The date the window ends at (YYYY-MM-DD; default: LORE_TODAY, else today).",
)
@click.option(
    "--sync/--no-sync",
    "do_sync",
    default=False,
    help="Sync the index first.",
)
@vault_options
def report_cmd(
    since: str | None,
    fmt: str,
    out_dir: str | None,
    charts: bool,
    limit: int,
    today: str | None,
    do_sync: bool,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """A report of the vault: new notes in a window, top tags, active entities and the
    interest clusters stored by `lore clusters build` (label, size, trend sparkline,
    representative notes; heating and cooling ones highlighted).

    Markdown goes to standard output (charts need --out DIR, where the PNGs are written
    beside report.md); HTML is one page with its charts inside, fine to open offline.
    """
    from ..present.jsonout import dumps
    from ..present.report_files import render_report, write_report

    with open_from_options(vault_opt, db) as opened:
        if do_sync:
            sync_before_reading(opened)
        report = opened.report(since=since, today=today, limit=limit)
        root = opened.root
    if out_dir is not None:
        rendered = write_report(report, fmt, Path(out_dir), charts=charts, vault_root=root)
    else:
        rendered = render_report(report, fmt, charts=charts and fmt == "html" and not as_json)
    for notice in rendered.notices:
        click.echo(f"lore: notice: {notice}", err=True)
    if as_json:
        click.echo(dumps({**report.to_dict(), "files": [str(p) for p in rendered.files]}))
    elif out_dir is not None:
        for path in rendered.files:
            click.echo(str(path))
    else:
        click.echo(rendered.text, nl=False)


COMMANDS = [report_cmd]
