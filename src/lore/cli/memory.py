"""lore remember / digest / lookup / recent / context / snapshot / check."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from . import open_from_options, sync_before_reading, vault_options
from .query_args import QueryCommand

F = TypeVar("F", bound=Callable[..., Any])


def principal_option(func: F) -> F:
    return click.option(
        "--as",
        "principal",
        default=None,
        metavar="PRINCIPAL",
        help="See only what PRINCIPAL's access rules in .lore/config.toml allow.",
    )(func)


def _emit(data: dict[str, Any], text: str, as_json: bool) -> None:
    from ..present.jsonout import dumps

    click.echo(dumps(data) if as_json else text)


@click.command("remember", cls=QueryCommand)
@click.argument("text", nargs=-1, required=True)
@click.option("--entity", "-e", "entities", multiple=True, help="An entity it concerns (repeat).")
@click.option(
    "--status",
    type=click.Choice(["claimed", "verified"]),
    default="claimed",
    show_default=True,
    help="verified needs --source (the evidence).",
)
@click.option(
    "--source", default=None, help="Where it comes from: the evidence, a reading, a link."
)
@click.option(
    "--trust",
    type=click.Choice(["confirmed", "inferred", "imported"]),
    default="inferred",
    show_default=True,
    help="confirmed by a person > inferred by the system > imported.",
)
@vault_options
def remember_cmd(
    text: tuple[str, ...],
    entities: tuple[str, ...],
    status: str,
    source: str | None,
    trust: str,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Write a conclusion into today's daily note (memory/YYYY-MM-DD.md) and index it now.

    TEXT "-" reads the text from standard input.
    """
    from ..present.memory import format_memory

    body = sys.stdin.read() if text == ("-",) else " ".join(text)
    with open_from_options(vault_opt, db) as opened:
        memory = opened.remember(
            body, entities=list(entities), status=status, source=source, trust=trust
        )
    _emit(memory.to_dict(), format_memory(memory), as_json)


@click.command("digest")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--date", default=None, help="The day's note to write (default: from the input).")
@click.option(
    "--trust",
    type=click.Choice(["confirmed", "inferred", "imported"]),
    default="inferred",
    show_default=True,
)
@click.option(
    "--no-llm", "no_llm", is_flag=True, help="Use the heuristic extractor even with an LLM."
)
@vault_options
def digest_cmd(
    file: str,
    date: str | None,
    trust: str,
    no_llm: bool,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Extract decisions, conclusions, open items and lessons from a transcript (JSONL or
    plain text; "-" for standard input) into that day's daily note, by the configured LLM
    (cached; the heuristic extractor when it fails or with --no-llm) or heuristically.
    Running it twice for the same input writes nothing the second time."""
    from ..errors import ConfigError
    from ..present.memory import format_digest

    if file == "-":
        data, name = sys.stdin.read(), "stdin"
    else:
        try:
            with open(file, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise ConfigError(f"{file}: cannot read: {exc.strerror or exc}") from None
        try:
            data = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{file}: not valid UTF-8 (byte {exc.start})") from None
        name = file.replace("\\", "/").rsplit("/", 1)[-1]
    with open_from_options(vault_opt, db) as opened:
        report = opened.digest(data, name=name, date=date, trust=trust, use_llm=not no_llm)
    for notice in report.notices:
        click.echo(f"lore: notice: {notice}", err=True)
    _emit(report.to_dict(), format_digest(report), as_json)


@click.command("lookup", cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--sync/--no-sync", "do_sync", default=False, help="Sync the index first.")
@principal_option
@vault_options
def lookup_cmd(
    query: tuple[str, ...],
    limit: int,
    do_sync: bool,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Look up a name or a question: L1 entity card → L2 index → L3 raw scan → L4 not
    found. The answer names the level that produced it and what was tried."""
    from ..present.memory import format_lookup

    with open_from_options(vault_opt, db) as opened:
        if do_sync:
            opened.sync()
        result = opened.lookup(" ".join(query), limit=limit, principal=principal)
    _emit(result.to_dict(), format_lookup(result), as_json)


@click.command("recent")
@click.option("--days", type=int, default=7, show_default=True, help="How far back to look.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
@principal_option
@vault_options
def recent_cmd(
    days: int,
    limit: int,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Entities and notes active in the last N days, with their activity and decay weight."""
    from ..present.memory import format_recent

    with open_from_options(vault_opt, db) as opened:
        result = opened.recent(days=days, limit=limit, principal=principal)
    _emit(result.to_dict(), format_recent(result), as_json)


@click.command("context", cls=QueryCommand)
@click.argument("task", nargs=-1, required=True)
@click.option(
    "--budget", type=int, default=4096, show_default=True, help="At most this many bytes."
)
@principal_option
@vault_options
def context_cmd(
    task: tuple[str, ...],
    budget: int,
    principal: str | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """The context for a task within a byte budget: core conclusions with anchors, the
    cards of entities it names, and the best evidence (path, date, anchor, status)."""
    with open_from_options(vault_opt, db) as opened:
        view = opened.context(" ".join(task), budget=budget, principal=principal)
    _emit(view.to_dict(), view.text.rstrip("\n"), as_json)


@click.command("snapshot")
@click.option(
    "--budget", type=int, default=2048, show_default=True, help="At most this many bytes."
)
@principal_option
@vault_options
def snapshot_cmd(
    budget: int, principal: str | None, vault_opt: str | None, db: str | None, as_json: bool
) -> None:
    """A 1–2 KB cold-start summary: open items, recent discussion, next steps."""
    with open_from_options(vault_opt, db) as opened:
        snap = opened.snapshot(principal=principal, budget=budget)
    _emit(snap.to_dict(), snap.text.rstrip("\n"), as_json)


@click.command("check")
@click.option("--fix", is_flag=True, help="Repair what is mechanical (missing last activity).")
@click.option("--stale-days", type=int, default=None, help="Claimed statuses older than this.")
@vault_options
def check_cmd(
    fix: bool, stale_days: int | None, vault_opt: str | None, db: str | None, as_json: bool
) -> None:
    """Memory hygiene: conclusions without anchors, broken anchors, cards without last
    activity, malformed dates, stale or unproven claims, shared aliases, entities defined
    twice, dangling relations. Changes nothing without --fix; exits 1 on findings."""
    from ..present.memory import format_check

    with open_from_options(vault_opt, db) as opened:
        sync_before_reading(opened)
        report = opened.check(fix=fix, stale_days=stale_days)
    _emit(report.to_dict(), format_check(report), as_json)
    if not report.ok:
        sys.exit(1)


COMMANDS = [
    remember_cmd,
    digest_cmd,
    lookup_cmd,
    recent_cmd,
    context_cmd,
    snapshot_cmd,
    check_cmd,
]
