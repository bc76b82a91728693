"""lore search / show."""

from __future__ import annotations

import sys

import click

from . import open_from_options, sync_before_reading, vault_options
from .query_args import QueryCommand


@click.command("search", cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option(
    "--limit",
    "-n",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many hits to show.",
)
@click.option("--tag", "-t", "tags", multiple=True, help="Only notes with this tag (repeatable).")
@click.option(
    "--path",
    "path_glob",
    default=None,
    help="Only notes whose path matches this glob (a folder: 'projects/').",
)
@click.option(
    "--category",
    default=None,
    help="Only notes of this category (front matter `category:`, else the LLM's choice).",
)
@click.option("--since", default=None, help="Only notes dated on or after (YYYY[-MM[-DD]]).")
@click.option("--until", default=None, help="Only notes dated on or before (YYYY[-MM[-DD]]).")
@click.option(
    "--include-undated",
    is_flag=True,
    help="With --since/--until, keep notes that have no date (front matter, file name, text).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Show the query plan, each channel's raw and weighted score, and the matched terms.",
)
@click.option(
    "--mode",
    type=click.Choice(["mode1", "mode2", "mode3", "mode4"]),
    default=None,
    help="Search in a lower mode than the configured one, to compare (see `lore status`).",
)
@click.option(
    "--fusion",
    type=click.Choice(["weighted", "rrf"]),
    default=None,
    help="Fuse channels by weighted scores (default) or reciprocal rank.",
)
@click.option(
    "--budget-ms",
    type=click.IntRange(min=0, max=600_000),
    default=None,
    metavar="N",
    help="Answer within about N ms: skip the LLM plan, then the vector channels, then the"
    " polished snippets when they would not fit [default: LORE_QUERY_BUDGET_MS, else none].",
)
@click.option(
    "--sync/--no-sync",
    "do_sync",
    default=False,
    help="Sync the index before searching (`lore index PATH` makes the first one).",
)
@click.option(
    "--as",
    "principal",
    default=None,
    metavar="PRINCIPAL",
    help="See only what PRINCIPAL's access rules in .lore/config.toml allow.",
)
@vault_options
def search_cmd(
    query: tuple[str, ...],
    limit: int,
    tags: tuple[str, ...],
    path_glob: str | None,
    category: str | None,
    since: str | None,
    until: str | None,
    include_undated: bool,
    explain: bool,
    mode: str | None,
    fusion: str | None,
    budget_ms: int | None,
    do_sync: bool,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Search the vault (Chinese, English or mixed; any text is a safe query)."""
    from ..present.human import ProgressBar, format_search
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        if do_sync:
            sync_before_reading(opened, ProgressBar("indexing"))
        result = opened.search(
            " ".join(query),
            limit=limit,
            tags=list(tags),
            path=path_glob,
            category=category,
            since=since,
            until=until,
            include_undated=include_undated,
            explain=explain,
            mode=mode,
            fusion=fusion,
            principal=principal,
            budget_ms=budget_ms,
        )
        markers = opened.settings.highlight
    for notice in result.notices:
        click.echo(f"lore: notice: {notice}", err=True)
    if as_json:
        click.echo(dumps(result.to_dict()))
    else:
        click.echo(format_search(result, color=sys.stdout.isatty(), markers=markers))


@click.command("show")
@click.argument("note_ref", metavar="NOTE")
@vault_options
def show_cmd(note_ref: str, vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Show one indexed note: title, date, tags, headings, links and its text.

    NOTE is its path (with or without .md), its front-matter id, or its title, an alias
    or its file name."""
    from ..present.human import clean, format_mapping
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        note = opened.find_note(note_ref)
    if as_json:
        click.echo(dumps(note))
        return
    if note["date"] is None:
        note["date"] = "undated (no date in its front matter, file name or text)"
    body = note.pop("body")
    summary = note.pop("summary")
    if note["summary_source"] == "llm":  # the head and tail is the text below
        note["summary"] = summary
    note["tags"] = [f"{t['tag']} ({t['origin']})" for t in note["tags"]]
    note["derived_tags"] = [f"{t['tag']} ({t['origin']})" for t in note.get("derived_tags", [])]
    note["headings"] = [
        f"{'#' * h['level']} {h['text']} (line {h['line']})" for h in note["headings"]
    ]
    note["claims"] = [f"{c['text']} (“{c['evidence']}”)" for c in note["claims"]]
    click.echo(format_mapping(note))
    click.echo("---")
    click.echo(clean(body, lines=True))


COMMANDS = [search_cmd, show_cmd]
