"""`lore serve`: one ASGI app for people (pages), scripts (the JSON API) and agents (MCP
at /mcp), served by uvicorn. Every request passes lore.serve.guard first and runs as its
caller's principal; library calls run in worker threads, each on a vault of the pool.

    server = Server(root, db=None, options=ServeOptions(), port=8765)
    app = create_app(server)            # what tests and uvicorn run
    serve(root, db, options, ready=print)
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import AccessError, IndexError_, LoreError
from ..mcp.server import bind
from ..tokens import TokenInfo
from ..vault import Vault, open_vault
from . import errors
from .api import ENDPOINTS, PREFIX, Call, Endpoint
from .auth import Identity, RateLimiter
from .guard import Guard, is_page
from .options import ServeOptions
from .params import from_json, from_query
from .pool import Freshness, VaultPool

T = TypeVar("T")
RECORD_EVERY = 60.0  # seconds between two records of a token's last use
log = logging.getLogger("lore.serve")
STATIC = Path(__file__).with_name("static")


class Server:
    """What the app's handlers share: the options, the vault pool, the watcher, the rate
    limiter, and the Host/Origin values this server answers to."""

    def __init__(self, root: Path, db: str | None, options: ServeOptions, port: int) -> None:
        self.root = root
        self.options = options
        self.port = port
        self.hosts = options.hosts(port)
        self.origins = options.origins(port)

        def opener() -> Vault:
            return open_vault(root, db=db)

        self.pool = VaultPool(opener, options.threads)
        self.freshness = Freshness(opener, options.watch)
        self.limiter = RateLimiter(options.rate, options.burst, options.clock)
        self._threads: anyio.CapacityLimiter | None = None
        self._noted: dict[str, float] = {}  # token name → when its use was last recorded

    async def run(self, work: Callable[[Vault], T]) -> T:
        """Run `work` on a vault of the pool, in a worker thread."""
        if self._threads is None:
            self._threads = anyio.CapacityLimiter(self.options.threads)
        return await anyio.to_thread.run_sync(self.pool.run, work, limiter=self._threads)

    async def verify(self, secret: str) -> TokenInfo | None:
        return await self.run(lambda vault: self._verify(vault, secret))

    def _verify(self, vault: Vault, secret: str) -> TokenInfo | None:
        """The token, and its last use noted (once a minute at most: a write; an index
        that cannot take it, busy or read-only, does not stop the request)."""
        info = vault.verify_token(secret)
        if info is not None:
            now = self.options.clock()
            if now - self._noted.get(info.name, -RECORD_EVERY) >= RECORD_EVERY:
                self._noted[info.name] = now
                with contextlib.suppress(IndexError_):
                    vault.record_token_use(info.name)
        return info


def identity_of(request: Request) -> Identity:
    found = request.scope.get("lore.identity")
    if not isinstance(found, Identity):  # the guard sets it; without it nothing is shown
        raise AccessError("no caller on this request")
    return found


def error_response(exc: Exception, request: Request) -> Response:
    if isinstance(exc, LoreError):
        exc = errors.from_lore(exc)
    if not isinstance(exc, errors.HTTPError):
        log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
        exc = errors.HTTPError(
            500, "internal", f"internal error ({type(exc).__name__}); see the log"
        )
    return Response(
        errors.body(exc.code, exc.message),
        status_code=exc.status,
        media_type="application/json",
        headers=exc.headers,
    )


def _api_route(server: Server, endpoint: Endpoint) -> Route:
    async def handle(request: Request) -> Response:
        try:
            identity = identity_of(request)
            if endpoint.write:
                _may_write(server, identity)
                kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind != "application/json":
                    raise errors.HTTPError(
                        415, "unsupported_media", "send the body as Content-Type: application/json"
                    )
                args = from_json(await request.body(), endpoint.args)
            else:
                args = from_query(request.query_params.multi_items(), endpoint.args)
            if endpoint.owner_only and identity.principal is not None:
                raise errors.HTTPError(403, "forbidden", "only the owner's tokens may see this")
            target = request.path_params.get("path", request.path_params.get("id"))
            data = await server.run(
                lambda vault: endpoint.run(Call(vault, identity, server, target), args)
            )
        except Exception as exc:  # every failure is one JSON error, never a traceback
            return error_response(exc, request)
        return JSONResponse(data, status_code=endpoint.status)

    path = PREFIX + endpoint.path.replace("{path}", "{path:path}")
    return Route(path, handle, methods=[endpoint.method], name=f"api:{endpoint.path}")


def _may_write(server: Server, identity: Identity) -> None:
    if not server.options.allow_write:
        raise errors.HTTPError(
            403, "forbidden", "writing is off on this server (start it with --allow-write)"
        )
    if not identity.can_write:
        raise errors.HTTPError(
            403,
            "forbidden",
            "this token is read-only (make one with `lore token add NAME --write`)",
        )


def _mcp(server: Server) -> tuple[Any, Any]:
    """The MCP server (the same tools as `lore mcp`) as an ASGI app, and its manager."""
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )

    from ..mcp.server import LoreServer

    def caller_of(request: Any) -> tuple[str | None, bool]:
        found = getattr(request, "scope", {}).get("lore.identity")
        if not isinstance(found, Identity):
            raise AccessError("no caller on this request")
        return found.principal, found.can_write and server.options.allow_write

    with server.pool.vault() as vault:
        tools = LoreServer(
            vault,
            allow_write=server.options.allow_write,
            runner=lambda work, _sync: server.pool.run(work),
            caller_of=caller_of,
        )
    manager = StreamableHTTPSessionManager(app=tools.server)
    return StreamableHTTPASGIApp(manager), manager


def create_app(server: Server) -> Any:
    """The whole app, wrapped in the guard."""
    from .openapi import openapi
    from .pages import page_routes

    mcp_app, manager = _mcp(server)

    async def openapi_json(request: Request) -> Response:
        return JSONResponse(openapi(server))

    async def not_found(request: Request, exc: Exception) -> Response:
        code = getattr(exc, "status_code", 404)
        if is_page(request.url.path) and code == 404:
            from .pages import error_page

            return error_page(request, server, 404, "not_found", "no such page")
        kind = {404: ("not_found", "no such endpoint"), 405: ("method_not_allowed", "")}
        name, text = kind.get(code, ("bad_request", ""))
        return error_response(
            errors.HTTPError(code, name, text or f"{request.method} is not allowed here"), request
        )

    routes: list[BaseRoute] = [
        Route(f"{PREFIX}/openapi.json", openapi_json, methods=["GET"]),
        *(_api_route(server, endpoint) for endpoint in ENDPOINTS),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        Route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"]),
        *page_routes(server),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server.freshness.start()
        try:
            async with manager.run():
                yield
        finally:
            server.freshness.stop()
            server.pool.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={404: not_found, 405: not_found},
    )
    app.state.lore = server
    return Guard(app, server)


def serve(
    root: Path,
    db: str | None,
    options: ServeOptions,
    *,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Listen until interrupted (`ready` gets the URL once listening)."""
    import uvicorn

    sock = bind(options.port, options.host)
    port = int(sock.getsockname()[1])
    server = Server(root, db, options, port)
    app = create_app(server)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        limit_concurrency=1024,
        h11_max_incomplete_event_size=64 * 1024,
        timeout_keep_alive=10,
        server_header=False,
    )
    shown = f"[{options.host}]" if ":" in options.host else options.host

    async def run() -> None:
        if ready is not None:
            ready(f"http://{shown}:{port}/")
        await uvicorn.Server(config).serve(sockets=[sock])

    try:
        anyio.run(run)
    finally:
        sock.close()
