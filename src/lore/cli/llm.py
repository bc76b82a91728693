"""lore llm status: the notes' LLM fields, what is pending, the cache of model answers."""

from __future__ import annotations

import click

from . import llm_budget_option, open_from_options, vault_options


@click.group("llm")
def llm_group() -> None:
    """The small LLM's part: summaries, key claims and categories of notes (see
    docs/semantic.md, "Note fields"). `lore index` makes them; `lore llm status` counts
    them."""


@llm_group.command("status")
@vault_options
def llm_status_cmd(vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Notes with LLM fields (by model), failed or outdated ones, the model calls still
    to make (cached answers are free), the call budget and the size of the answer cache."""
    from ..present.human import format_mapping
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        data = opened.llm_status()
    click.echo(dumps(data) if as_json else format_mapping(data))


@llm_group.command("retry")
@click.option(
    "--path",
    "path_glob",
    default=None,
    help="Only notes whose path matches this glob (a folder: 'projects/').",
)
@click.option(
    "--sync/--no-sync",
    default=True,
    help="Sync now, asking the model for them within the call budget (else: the next sync).",
)
@llm_budget_option
@vault_options
def llm_retry_cmd(
    path_glob: str | None,
    sync: bool,
    llm_budget: int | None,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Ask the model again for the notes whose fields failed (an answer out of shape or
    with nothing grounded): a failure is kept, and not paid for again, until the note, the
    settings or the model change. `lore llm status` counts them."""
    from ..present.human import ProgressBar
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        done = opened.retry_llm_fields(
            path_glob, sync=sync, llm_budget=llm_budget, llm_progress=ProgressBar("LLM calls")
        )
    if as_json:
        click.echo(dumps(done.to_dict()))
        return
    for notice in done.sync.notices if done.sync else []:
        click.echo(f"lore: notice: {notice}", err=True)
    if not done.retried:
        where = f" under {path_glob}" if path_glob else ""
        click.echo(f"no note{where} has failed LLM fields")
    elif done.sync is None:
        click.echo(f"{len(done.retried)} note(s) will be asked again by the next sync")
    else:
        states = list(done.states.values())
        click.echo(
            f"{len(done.retried)} note(s) asked again: {states.count('llm')} now have LLM"
            f" fields, {states.count('failed')} failed again, {states.count('pending')} wait"
            " for the next sync"
        )


COMMANDS = [llm_group]
