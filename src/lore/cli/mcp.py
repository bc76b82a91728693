"""lore mcp: serve the vault to AI agents over the Model Context Protocol."""

from __future__ import annotations

import logging

import click

from . import open_from_options


@click.command("mcp")
@click.option(
    "--print-config",
    is_flag=True,
    help="Print the JSON an MCP client needs to start this server (absolute paths) and exit.",
)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Offer the write tools remember, write_note, edit_note, move_note (off by default).",
)
@click.option(
    "--http",
    "http",
    is_flag=True,
    help="Serve streamable HTTP on 127.0.0.1 instead of stdio.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Port for --http (default 8765; 0: any free port; the URL is printed on stderr).",
)
@click.option(
    "--allow-origin",
    "origins",
    multiple=True,
    metavar="URL",
    help="With --http, also accept requests from this browser Origin (repeatable).",
)
@click.option(
    "--vault",
    "vault_opt",
    type=click.Path(),
    default=None,
    help="Vault folder (default: $LORE_VAULT, then the current folder).",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="Index file (default: $LORE_DB, then <vault>/.lore/index.sqlite).",
)
def mcp_cmd(
    print_config: bool,
    allow_write: bool,
    http: bool,
    port: int | None,
    origins: tuple[str, ...],
    vault_opt: str | None,
    db: str | None,
) -> None:
    """Run an MCP server for AI agents (stdio by default; see docs/mcp.md).

    Tools: search, read_note, list_tags, status, lookup, recent, context, snapshot,
    and remember, write_note, edit_note, move_note with --allow-write. Every query
    tool syncs the index first, so what was just written is found.
    """
    from ..errors import ConfigError, install_hint

    if print_config:
        _print_config(vault_opt, db, allow_write)
        return
    if not http and (port is not None or origins):
        raise click.UsageError("--port and --allow-origin go with --http")

    try:
        import mcp.server  # noqa: F401 - the SDK, from the `mcp` extra
    except ImportError as exc:
        raise ConfigError(
            f"lore mcp needs the MCP SDK ({exc.name or exc} is not installed)",
            hint=install_hint("mcp"),
        ) from None
    import anyio

    from ..mcp.server import LoreServer

    logging.basicConfig(level=logging.WARNING, format="lore mcp: %(levelname)s: %(message)s")
    with open_from_options(vault_opt, db, say_notices=False) as vault:
        server = LoreServer(vault, allow_write=allow_write)
        if not http:
            anyio.run(server.serve_stdio)
            return
        server.serve_http(
            port=8765 if port is None else port,
            allowed_origins=origins,
            ready=lambda url: click.echo(f"lore mcp: serving {vault.root} at {url}", err=True),
        )


def _print_config(vault_opt: str | None, db: str | None, allow_write: bool) -> None:
    """The `mcpServers` block of Claude Desktop, Cursor and most MCP clients, with the
    absolute path of this lore and of the vault (a client starts it from anywhere). `--db`
    is resolved as every command resolves it: a file made absolute, a database URL kept."""
    import json
    import os
    import sys
    from pathlib import Path

    from ..config import load_lore_settings
    from ..vault import index_path, resolve_vault

    root = resolve_vault(vault_opt or os.environ.get("LORE_VAULT") or ".")
    settings = load_lore_settings(root, db=db)
    index = settings.db if isinstance(settings.db, str) else index_path(root, settings)
    script = Path(sys.executable).parent / "lore"
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "lore"]
    args = [*command[1:], "mcp", "--vault", str(root)]
    if db is not None:
        args += ["--db", str(index)]
    if allow_write:
        args.append("--allow-write")
    config = {"mcpServers": {"lore": {"command": command[0], "args": args}}}
    click.echo(json.dumps(config, ensure_ascii=False, indent=2))
    if isinstance(index, Path) and not index.exists():  # a server's index is not looked up
        click.echo(f"lore: notice: no index yet: create it with `lore index {root}`", err=True)


COMMANDS = [mcp_cmd]
