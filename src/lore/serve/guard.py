"""The checks every request passes before any page, API call or MCP tool sees it (an ASGI
middleware around the whole app), in this order:

1. length of the path and query string (414);
2. the Host header is this server (421: a page on another site cannot reach it through
   DNS rebinding);
3. a browser's Origin, when sent, is this server; a request that changes something and
   says it comes from another site (Sec-Fetch-Site) is refused (403);
4. the body is at most --max-body bytes, whatever Content-Length says (413);
5. who it is (lore.serve.auth): a valid token, or the owner on a loopback address;
   otherwise 401 (the pages redirect to /login);
6. the token's rate limit (429, with Retry-After).

Every answer, the app's included, carries the security headers: a Content Security Policy
without inline scripts or styles, no framing, no sniffing, no referrer, no caching of
pages and API answers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from . import errors
from .auth import Identity, presented_secret
from .options import MAX_PATH, MAX_QUERY

if TYPE_CHECKING:
    from .app import Server

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("lore.serve")
PUBLIC = ("/static/", "/login", "/favicon.ico")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none';"
    " base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out and key != "host" else text
    return out


def is_page(path: str) -> bool:
    return not (path.startswith(("/api/", "/mcp/")) or path == "/mcp")


class Guard:
    def __init__(self, app: ASGIApp, server: Server) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secured = self._secured(send, scope["path"])
        try:
            receive = await self._check(scope, receive)
        except errors.HTTPError as exc:
            extra = [(k.encode(), v.encode()) for k, v in exc.headers.items()]
            await respond(secured, exc.status, errors.body(exc.code, exc.message), extra)
            return
        except _Redirect as go:
            headers = [(b"location", go.location.encode("latin-1"))]
            await respond(secured, 303, b"", headers, content_type=b"text/plain")
            return
        await self.app(scope, receive, secured)

    def _secured(self, send: Send, path: str) -> Send:
        cache = b"public, max-age=3600" if path.startswith("/static/") else b"no-store"

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() not in (b"cache-control", *(n for n, _ in SECURITY_HEADERS))
                ]
                message["headers"] = [*headers, *SECURITY_HEADERS, (b"cache-control", cache)]
            await send(message)

        return secured

    async def _check(self, scope: Scope, receive: Receive) -> Receive:
        path = str(scope["path"])
        if len(scope.get("raw_path") or path.encode()) > MAX_PATH:
            raise errors.HTTPError(414, "uri_too_long", f"the path is longer than {MAX_PATH} bytes")
        if len(scope.get("query_string", b"")) > MAX_QUERY:
            raise errors.HTTPError(
                414, "uri_too_long", f"the query string is longer than {MAX_QUERY} bytes"
            )
        headers = _headers(scope)
        host = headers.get("host", "").strip().lower()
        if host not in self.server.hosts:
            raise errors.HTTPError(
                421, "bad_host", f"Host {host[:100]!r} is not this server (see --allow-host)"
            )
        method = str(scope["method"]).upper()
        origin = headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.server.origins:
            raise errors.HTTPError(
                403,
                "bad_origin",
                f"Origin {origin[:100]!r} is not this server (see --allow-origin)",
            )
        if method not in SAFE_METHODS and headers.get("sec-fetch-site") == "cross-site":
            raise errors.HTTPError(403, "bad_origin", "a request from another site is refused")
        receive = await self._bounded(headers, receive, method)
        identity = await self._identity(headers, path)
        if identity.token is not None:
            wait = self.server.limiter.take(identity.key)
            if wait:
                retry = self.server.limiter.retry_after(wait)
                raise errors.HTTPError(
                    429,
                    "rate_limited",
                    f"too many requests for this token; retry in {retry} s",
                    {"retry-after": retry},
                )
        scope["lore.identity"] = identity
        return receive

    async def _bounded(self, headers: dict[str, str], receive: Receive, method: str) -> Receive:
        """Read the whole body (at most --max-body bytes) and hand it on."""
        limit = self.server.options.max_body
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                raise errors.HTTPError(400, "bad_request", "Content-Length is not a number")
            if int(declared) > limit:
                raise errors.HTTPError(
                    413, "too_large", f"the body is {int(declared):,} bytes; at most {limit:,}"
                )
        if method in ("GET", "HEAD") and declared is None and "transfer-encoding" not in headers:
            return receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise errors.HTTPError(400, "bad_request", "the client went away")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise errors.HTTPError(413, "too_large", f"the body is over {limit:,} bytes")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        data = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            return await receive()

        return replay

    async def _identity(self, headers: dict[str, str], path: str) -> Identity:
        secret, via = presented_secret(headers)
        if via == "cookie" and not is_page(path):
            # The API and MCP take a bearer token only: a page cookie that a browser would
            # send along with a forged cross-site request is no key to them.
            secret, via = None, "local"
        public = path.startswith(PUBLIC)
        if secret is None:
            if not self.server.options.tokens_required:
                return Identity.local()
            if public:
                return _anon()
            if is_page(path):
                raise _Redirect("/login?next=" + quote(path, safe="/"))
            raise errors.HTTPError(
                401, "unauthorized", "a token is needed: send Authorization: Bearer <token>"
            )
        info = await self.server.verify(secret)
        if info is None:
            if public:
                return _anon()
            if is_page(path) and via == "cookie":
                raise _Redirect("/login?expired=1&next=" + quote(path, safe="/"))
            raise errors.HTTPError(401, "unauthorized", "the token is unknown or was revoked")
        return Identity.of(info, via)


def _anon() -> Identity:
    """Someone on a public path (the login page) who is nobody yet: sees nothing."""
    return Identity(None, "", False, "anonymous")


class _Redirect(Exception):
    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


async def respond(
    send: Send,
    status: int,
    content: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    *,
    content_type: bytes = b"application/json; charset=utf-8",
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(content)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": content})
