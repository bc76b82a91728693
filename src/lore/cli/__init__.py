"""The `lore` command line: parse, make one library call, print.

This is the one place where library errors become messages and exit codes:
LoreError → "lore: error: …" on stderr and exit 1; usage errors exit 2. Set LORE_DEBUG=1
(or pass --traceback) to see the original traceback instead.
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:  # the engine is imported when a command runs, not for `lore --help`
    from ..vault import Vault

F = TypeVar("F", bound=Callable[..., Any])


# The cap on one sync's model calls (`lore index`, `lore rebuild`, `lore llm retry`).
llm_budget_option = click.option(
    "--llm-budget",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="With an LLM: make at most N model calls (later syncs make the rest)"
    " [default: LORE_LLM_BUDGET, else no cap].",
)


def vault_options(func: F) -> F:
    """--vault/--db/--json on every command (so they may follow the command name)."""
    func = click.option(
        "--json", "as_json", is_flag=True, help="Print machine-readable JSON (see docs/json.md)."
    )(func)
    func = click.option(
        "--db",
        type=click.Path(dir_okay=False),
        default=None,
        help="Index file (default: $LORE_DB, then <vault>/.lore/index.sqlite).",
    )(func)
    func = click.option(
        "--vault",
        "vault_opt",
        type=click.Path(),
        default=None,
        help="Vault folder (default: $LORE_VAULT, then the current folder).",
    )(func)
    return func


def open_from_options(
    vault: str | None, db: str | None, *, create: bool = False, say_notices: bool = True
) -> Vault:
    """Open the vault. Only `lore index` and `lore rebuild` make a first index (`create`);
    every other command in a folder without one says how to make it. What the vault has to
    say once (a vault setting ignored, a read-only index) is printed on stderr unless
    `say_notices` is False (the MCP server says it to its client instead)."""
    from ..vault import open_vault

    opened = open_vault(vault, db=db, create=create)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # named if the index turns out damaged (LoreGroup.invoke)
        ctx.find_root().meta["lore.db"] = str(opened.db_path)
    if say_notices:
        for notice in opened.take_notices():
            click.echo(f"lore: notice: {notice}", err=True)
    return opened


def sync_before_reading(
    opened: Vault, progress: Callable[[int, int, str], None] | None = None
) -> None:
    """Sync before a read and print its notices; a read-only index is read as it is
    (opening it has said so)."""
    from ..errors import IndexReadOnlyError

    try:
        report = opened.sync(progress=progress)
    except IndexReadOnlyError:
        return
    for notice in report.notices:
        click.echo(f"lore: notice: {notice}", err=True)


def _undecodable_index_text(exc: Exception) -> bool:
    """Text read back from the index that is not UTF-8: lore writes only UTF-8, so the
    page it sat on was damaged (SQLite does not check text encoding itself)."""
    if not isinstance(exc, UnicodeDecodeError) or exc.__traceback__ is None:
        return False
    frame = exc.__traceback__
    while frame.tb_next is not None:
        frame = frame.tb_next
    where = Path(frame.tb_frame.f_code.co_filename)
    return where.parent.name == "store" and where.parent.parent.name == "lore"


def _damaged_index(exc: Exception, ctx: click.Context) -> str | None:
    """The message for SQLite finding the index file damaged in the middle of a command
    (the store says which errors those are without loading its database driver)."""
    from ..errors import quoted_safely
    from ..store.damage import is_damage

    if not is_damage(exc) and not _undecodable_index_text(exc):
        return None
    db = ctx.meta.get("lore.db", "the index")
    remedy = "delete it and run `lore index`: it is rebuilt from the files"
    return f"index {db} is damaged: {quoted_safely(exc)} ({remedy})"


# The module of each command. A command's module is imported when the command runs (or
# its help is shown): a `lore search` process imports one, not all of them.
COMMAND_MODULES = {
    **dict.fromkeys(("index", "rebuild", "status", "doctor"), "index"),
    **dict.fromkeys(("search", "show"), "search"),
    **dict.fromkeys(("ingest", "watch"), "capture"),
    "embed": "embed",
    "llm": "llm",
    "mcp": "mcp",
    "migrate": "migrate",
    **dict.fromkeys(("links", "note"), "notes"),
    **dict.fromkeys(("serve", "token"), "serve"),
    **dict.fromkeys(
        ("remember", "digest", "lookup", "recent", "context", "snapshot", "check"), "memory"
    ),
    "report": "report",
    "clusters": "interest",
}


class LoreGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self._load(COMMAND_MODULES[cmd_name])
        return self.commands.get(cmd_name)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command, each module imported (for `--help` and the docs tests)."""
        for module in sorted(set(COMMAND_MODULES.values())):
            self._load(module)
        return dict(self.commands)

    def _load(self, module: str) -> None:
        for command in importlib.import_module(f".{module}", __name__).COMMANDS:
            self.add_command(command)

    def invoke(self, ctx: click.Context) -> Any:
        from ..errors import LoreError

        try:
            return super().invoke(ctx)
        except LoreError as exc:
            if os.environ.get("LORE_DEBUG") or ctx.meta.get("lore.traceback"):
                raise
            click.echo(f"lore: error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("lore: interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            message = _damaged_index(exc, ctx)
            if message is None or os.environ.get("LORE_DEBUG") or ctx.meta.get("lore.traceback"):
                raise
            click.echo(f"lore: error: {message}", err=True)
            ctx.exit(1)


@click.group(cls=LoreGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lore", prog_name="lore")
@click.option("--traceback", is_flag=True, help="Show the full traceback on errors.")
@click.pass_context
def main(ctx: click.Context, traceback: bool) -> None:
    """lore: a local-first knowledge base over a folder of Markdown notes.

    Index a vault, then search it in Chinese, English or both; every hit carries its
    path, date, heading and a highlighted snippet.
    """
    ctx.meta["lore.traceback"] = traceback


def run() -> None:
    """The `lore` command: the console script and `python -m lore` (tests call `main`)."""
    try:
        main()
    finally:
        # The process ends here. On its way out Python runs its cycle collector over
        # every object still tracked (the modules' classes, functions and dicts among
        # them) and frees what it finds: ~10 ms of a cold `lore search`. Nothing of lore's
        # waits for that (the index is closed, files are written and closed, the output
        # is flushed), so the objects alive now are left out of it.
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover - `python -m lore.cli`
    run()
