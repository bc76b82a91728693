"""lore llm status: the notes' LLM fields, what is pending, the cache of model answers."""

from __future__ import annotations

import click

from . import open_from_options, vault_options


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


COMMANDS = [llm_group]
