"""lore ingest / watch."""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

import click

from . import open_from_options, vault_options

if TYPE_CHECKING:
    from ..watch import WatchBatch


@click.command("ingest")
@click.argument("sources", nargs=-1, required=True, metavar="URL|FILE|FOLDER|-...")
@click.option("--tag", "-t", "tags", multiple=True, help="Add this tag (repeatable).")
@click.option("--platform", default=None, help="Platform name (default: guessed from the host).")
@click.option("--title", default=None, help="Title of the note (default: the page's own).")
@click.option(
    "--force", is_flag=True, help="Capture again even if the vault has it (the old note stays)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 3600.0),  # capture.fetch.MAX_TIMEOUT, checked there too
    default=15.0,
    show_default=True,
    help="Seconds to wait for a page to respond (the whole download: 4x this).",
)
@click.option(
    "--max-size",
    "max_size",
    type=click.IntRange(1, 1024),  # capture.fetch.MAX_BYTES_LIMIT, in MB
    default=10,
    show_default=True,
    help="Largest page or file to take, in MB.",
)
@vault_options
def ingest_cmd(
    sources: tuple[str, ...],
    tags: tuple[str, ...],
    platform: str | None,
    title: str | None,
    force: bool,
    timeout: float,
    max_size: int,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Capture web pages, HTML, Markdown and text files as notes in the inbox.

    A URL is fetched (or passed to $LORE_SCRAPE_CMD) and its main text kept as Markdown;
    a FOLDER brings in every .md, .markdown, .txt, .html and .htm file in it; - reads
    stdin. Each note gets front matter (title, source, platform, fetched, tags, summary)
    and is indexed at once. A page already in the vault (same URL or same text) is not
    captured twice unless --force is given.
    """
    from ..capture import CaptureOptions, capture, capture_many
    from ..present.capture import format_capture
    from ..present.human import ProgressBar
    from ..present.jsonout import dumps

    options = CaptureOptions(
        tags=tags,
        platform=platform,
        title=title,
        force=force,
        timeout=timeout,
        max_bytes=max_size * 1024 * 1024,
    )
    stdin: bytes | None = None
    if "-" in sources:
        stdin = sys.stdin.buffer.read()
    bars = ProgressBar("capturing"), ProgressBar("indexing")
    with open_from_options(vault_opt, db) as opened:
        if len(sources) == 1:
            report = capture(
                opened, sources[0], options, stdin=stdin, progress=bars[0], sync_progress=bars[1]
            )
        else:
            report = capture_many(
                opened, list(sources), options, stdin=stdin, progress=bars[0], sync_progress=bars[1]
            )
    click.echo(dumps(report.to_dict()) if as_json else format_capture(report))
    for failure in report.failed:
        click.echo(f"lore: error: {failure.reason}", err=True)
    if report.failed:
        sys.exit(1)


@click.command("watch")
@click.argument("vault", required=False, type=click.Path())
@click.option(
    "--debounce",
    type=click.FloatRange(0.0, 3600.0),
    default=0.5,
    show_default=True,
    help="Sync once no file has changed for this many seconds.",
)
@click.option(
    "--interval",
    type=click.FloatRange(0.05, 3600.0),
    default=1.0,
    show_default=True,
    help="Seconds between looks at the files when polling.",
)
@click.option("--poll", is_flag=True, help="Poll the files instead of using file-system events.")
@click.option("--once", is_flag=True, help="Exit after the first batch of changes is synced.")
@click.option(
    "--timeout",
    type=click.FloatRange(0.0, 365 * 24 * 3600.0),
    default=None,
    help="Stop after this many seconds.",
)
@vault_options
def watch_cmd(
    vault: str | None,
    debounce: float,
    interval: float,
    poll: bool,
    once: bool,
    timeout: float | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Keep the index in step with the vault: sync after changes settle, print what changed.

    Searches from other processes keep working while it runs. Stop it with Ctrl-C; with
    --json it prints one JSON object per sync (one per line).
    """
    from ..present.capture import format_watch_batch, watch_json_line
    from ..watch import Watcher

    def emit(batch: WatchBatch) -> None:
        if as_json:
            click.echo(watch_json_line(batch))
        else:
            for line in format_watch_batch(batch):
                click.echo(line)

    with open_from_options(vault or vault_opt, db) as opened:
        watcher = Watcher(
            opened, debounce=debounce, interval=interval, backend="poll" if poll else "auto"
        )

        def started(source: str) -> None:
            how = "file-system events" if source == "events" else f"polling every {interval:g} s"
            click.echo(f"watching {opened.root} ({how}; Ctrl-C to stop)", err=True)

        previous = {
            sig: signal.signal(sig, lambda *_: watcher.stop())
            for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            watcher.run(emit, once=once, timeout=timeout, on_start=started)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    click.echo("stopped watching", err=True)


COMMANDS = [ingest_cmd, watch_cmd]
