"""lore serve / lore token: the web pages, JSON API and MCP over HTTP, and who may use them."""

from __future__ import annotations

import logging

import click

from . import open_from_options, vault_options


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port (0: any free one; the URL is printed).",
)
@click.option(
    "--allow-write",
    is_flag=True,
    help="Offer note writing, remember and ingest (to write tokens; off by default).",
)
@click.option(
    "--require-token",
    is_flag=True,
    help="Ask for a token on a loopback address too (any other address always does).",
)
@click.option(
    "--allow-host",
    "hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer to this Host name, e.g. a reverse proxy's (repeatable).",
)
@click.option(
    "--allow-origin",
    "origins",
    multiple=True,
    metavar="URL",
    help="Also accept this browser Origin, e.g. https://notes.example.com (repeatable).",
)
@click.option(
    "--max-body", type=int, default=1024 * 1024, show_default=True, help="Largest request body."
)
@click.option(
    "--rate",
    type=int,
    default=600,
    show_default=True,
    help="Requests a minute per token (0: no limit).",
)
@click.option("--burst", type=int, default=60, show_default=True, help="Requests at once.")
@click.option("--threads", type=int, default=8, show_default=True, help="Library calls at once.")
@click.option(
    "--watch",
    type=click.Choice(["auto", "events", "poll", "off"]),
    default="auto",
    show_default=True,
    help="How the index follows the files.",
)
@click.option(
    "--allow-private-ingest",
    is_flag=True,
    help="Let ingest fetch loopback and private addresses (refused by default).",
)
@click.option("--secure-cookies", is_flag=True, help="Mark the sign-in cookie https-only.")
@click.option("--vault", "vault_opt", type=click.Path(), default=None, help="Vault folder.")
@click.option("--db", type=click.Path(dir_okay=False), default=None, help="Index file.")
def serve_cmd(
    host: str,
    port: int,
    allow_write: bool,
    require_token: bool,
    hosts: tuple[str, ...],
    origins: tuple[str, ...],
    max_body: int,
    rate: int,
    burst: int,
    threads: int,
    watch: str,
    allow_private_ingest: bool,
    secure_cookies: bool,
    vault_opt: str | None,
    db: str | None,
) -> None:
    """Serve the vault over HTTP: web pages, a JSON API under /api/v1 and MCP at /mcp,
    each request as its token's principal (see docs/serve.md).

    On 127.0.0.1 no token is needed; on any other address every request needs one
    (`lore token add`).
    """
    from ..errors import ConfigError, IndexError_, install_hint

    try:
        import jinja2  # noqa: F401
        import markdown_it  # noqa: F401
        import mcp.server  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"lore serve needs the serve extra ({exc.name or exc} is not installed)",
            hint=install_hint("serve"),
        ) from None
    from ..serve.app import serve
    from ..serve.options import ServeOptions

    options = ServeOptions(
        host=host,
        port=port,
        allow_write=allow_write,
        require_token=require_token,
        allowed_hosts=hosts,
        allowed_origins=origins,
        max_body=max_body,
        rate=rate,
        burst=burst,
        threads=threads,
        watch=watch,
        allow_private_ingest=allow_private_ingest,
        secure_cookies=secure_cookies,
    )
    with open_from_options(vault_opt, db) as opened:
        root = opened.root
        if opened.status().last_sync is None:
            raise IndexError_(
                f"{root} has no index yet", hint=f"create one first: lore index {root}"
            )
        if options.tokens_required and not any(t.valid for t in opened.tokens()):
            raise ConfigError(
                f"--host {host}: every request will need a token, and there is none",
                hint="make one: lore token add NAME --as PRINCIPAL (or --owner)",
            )
    logging.basicConfig(level=logging.WARNING, format="lore serve: %(levelname)s: %(message)s")
    write = "read and write" if allow_write else "read-only"
    tokens = "tokens required" if options.tokens_required else "no token needed on loopback"
    serve(
        root,
        db,
        options,
        ready=lambda url: click.echo(f"lore serve: {root} at {url} ({write}; {tokens})", err=True),
    )


@click.group("token")
def token_group() -> None:
    """Access tokens for `lore serve`: each is a principal of the vault's [access] rules
    (or the owner) and read-only unless made with --write. Kept hashed in the index."""


@token_group.command("add")
@click.argument("name")
@click.option("--as", "principal", default=None, metavar="PRINCIPAL", help="Who it sees as.")
@click.option("--owner", is_flag=True, help="Sees every note (no access rules apply).")
@click.option("--write", "can_write", is_flag=True, help="May write (with serve --allow-write).")
@vault_options
def token_add(
    name: str,
    principal: str | None,
    owner: bool,
    can_write: bool,
    vault_opt: str | None,
    db: str | None,
    as_json: bool,
) -> None:
    """Make a token NAME and print its secret (shown this once only)."""
    from ..present.jsonout import dumps

    if owner == (principal is not None):
        raise click.UsageError("give --as PRINCIPAL or --owner (one of them)")
    with open_from_options(vault_opt, db) as opened:
        made = opened.add_token(name, principal=principal, can_write=can_write)
    if as_json:
        click.echo(dumps(made.to_dict()))
        return
    who = "the owner (every note)" if principal is None else f"principal {principal!r}"
    scope = "read and write" if can_write else "read-only"
    click.echo(f"token {name}: {who}, {scope}. Its secret (shown once, keep it safe):", err=True)
    click.echo(made.secret)


@token_group.command("list")
@vault_options
def token_list(vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """The tokens, valid and revoked (never their secrets)."""
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        found = opened.tokens()
    if as_json:
        click.echo(dumps([t.to_dict() for t in found]))
        return
    if not found:
        click.echo("no tokens (make one with `lore token add NAME --as PRINCIPAL`)")
    for t in found:
        who = "owner" if t.principal is None else t.principal
        state = f"revoked {t.revoked}" if t.revoked else f"last used {t.last_used or 'never'}"
        click.echo(f"{t.name}\t{who}\t{'write' if t.can_write else 'read'}\t{state}")


@token_group.command("revoke")
@click.argument("name")
@vault_options
def token_revoke(name: str, vault_opt: str | None, db: str | None, as_json: bool) -> None:
    """Revoke the token NAME: every request with it is refused from now on."""
    from ..present.jsonout import dumps

    with open_from_options(vault_opt, db) as opened:
        info = opened.revoke_token(name)
    click.echo(dumps(info.to_dict()) if as_json else f"token {name}: revoked {info.revoked}")


COMMANDS = [serve_cmd, token_group]
