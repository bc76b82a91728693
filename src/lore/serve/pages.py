"""The pages: search, note, interest map, memory, status, and sign-in. Server-rendered
(Jinja2, autoescaped), whole without JavaScript; htmx only swaps the search results in
place. Every page gathers what it shows in one call on a pooled vault, as the caller's
principal, so nothing outside its rules reaches a page.

Forms that change something carry this server's CSRF token, and are refused without it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from ..errors import LoreError
from . import errors
from .auth import COOKIE, LANG_COOKIE, Identity, csrf_ok, csrf_token
from .i18n import TRENDS, choose, translator
from .mapview import HEIGHT, SPARK_H, SPARK_W, WIDTH, cluster_rows, points
from .page_data import edit_data, map_data, memory_data, note_data, search_data, status_data
from .render import note_href, snippet_html

if TYPE_CHECKING:
    from .app import Server

log = logging.getLogger("lore.serve")

_ENV = Environment(
    loader=PackageLoader("lore.serve", "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.globals.update(note_href=note_href, snippet_html=snippet_html, quote=quote)


def _lang(request: Request) -> str:
    return choose(
        request.query_params.get("lang"),
        request.cookies.get(LANG_COOKIE),
        request.headers.get("accept-language"),
    )


def _identity(request: Request) -> Identity:
    found = request.scope.get("lore.identity")
    if not isinstance(found, Identity):
        raise errors.HTTPError(403, "forbidden", "no caller on this request")
    return found


def render(
    request: Request, server: Server, template: str, code: int = 200, **context: Any
) -> HTMLResponse:
    lang = _lang(request)
    identity = _identity(request)
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    other = "en" if lang == "zh" else "zh"
    switch = (
        request.url.path
        + "?"
        + "&".join(
            [f"{k}={quote(v)}" for k, v in request.query_params.multi_items() if k != "lang"]
            + [f"lang={other}"]
        )
    )
    page = _ENV.get_template(template).render(
        t=translator(lang),
        trends=TRENDS[lang],
        lang=lang,
        switch=switch,
        here=here,
        page=request.url.path.split("/")[1],
        identity=identity,
        tokens=server.options.tokens_required,
        csrf=csrf_token(server.options.secret, identity),
        can_write=server.options.allow_write and identity.can_write,
        **context,
    )
    response = HTMLResponse(page, status_code=code)
    if request.query_params.get("lang") in ("en", "zh"):
        response.set_cookie(
            LANG_COOKIE, lang, max_age=365 * 86400, samesite="strict", httponly=True
        )
    response.headers["vary"] = "HX-Request, Accept-Language, Cookie"
    return response


def error_page(request: Request, server: Server, status: int, code: str, message: str) -> Response:
    try:
        return render(request, server, "error.html", status, error_code=code, message=message)
    except errors.HTTPError:
        return Response(errors.body(code, message), status, media_type="application/json")


async def _form(request: Request, server: Server) -> dict[str, str]:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise errors.HTTPError(415, "unsupported_media", "send the form as a normal HTML form")
    try:
        fields = dict(parse_qsl((await request.body()).decode("utf-8"), max_num_fields=50))
    except (UnicodeDecodeError, ValueError) as exc:
        raise errors.HTTPError(400, "bad_request", f"the form cannot be read: {exc}") from None
    if not csrf_ok(server.options.secret, _identity(request), fields.get("csrf")):
        raise errors.HTTPError(403, "csrf", "the form is stale or from elsewhere; reload the page")
    return fields


def _safe_next(value: str | None) -> str:
    """Where to go after signing in: a path of this server only."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    parts = urlsplit(value)
    return "/" if parts.scheme or parts.netloc else value


def page_routes(server: Server) -> list[BaseRoute]:
    def handler(build: Any) -> Any:
        async def handle(request: Request) -> Response:
            try:
                return await build(request)  # type: ignore[no-any-return]
            except errors.HTTPError as exc:
                return error_page(request, server, exc.status, exc.code, exc.message)
            except LoreError as exc:
                found = errors.from_lore(exc)
                return error_page(request, server, found.status, found.code, found.message)
            except Exception:  # a bug: logged, and one line on the page
                log.exception("%s %s failed", request.method, request.url.path)
                return error_page(request, server, 500, "internal", "internal error; see the log")

        return handle

    async def home(request: Request) -> Response:
        return RedirectResponse("/search", status_code=303)

    async def search(request: Request) -> Response:
        data = await server.run(lambda v: search_data(v, _identity(request), request.query_params))
        partial = request.headers.get("hx-request") == "true"
        return render(request, server, "_results.html" if partial else "search.html", **data)

    async def note(request: Request) -> Response:
        path = request.path_params["path"]
        query = request.query_params.get("q")
        data = await server.run(lambda v: note_data(v, _identity(request), path, query))
        return render(request, server, "note.html", **data)

    async def edit(request: Request) -> Response:
        path = request.path_params["path"]
        identity = _identity(request)
        if not (server.options.allow_write and identity.can_write):
            raise errors.HTTPError(403, "forbidden", "writing is off for you on this server")
        if request.method == "POST":
            fields = await _form(request, server)
            data = await server.run(lambda v: edit_data(v, identity, path, fields))
            if data.get("saved"):
                return RedirectResponse(note_href(data["path"]), status_code=303)
            return render(request, server, "edit.html", 409, **data)
        data = await server.run(lambda v: edit_data(v, identity, path, None))
        return render(request, server, "edit.html", **data)

    async def interest(request: Request) -> Response:
        data = await server.run(lambda v: map_data(v, _identity(request)))
        found = data["map"]
        return render(
            request,
            server,
            "map.html",
            points=points(found) if found else [],
            clusters=cluster_rows(found) if found else [],
            width=WIDTH,
            height=HEIGHT,
            spark_w=SPARK_W,
            spark_h=SPARK_H,
            **data,
        )

    async def memory(request: Request) -> Response:
        identity = _identity(request)
        saved = None
        if request.method == "POST":
            if not (server.options.allow_write and identity.can_write):
                raise errors.HTTPError(403, "forbidden", "writing is off for you on this server")
            fields = await _form(request, server)
            text = fields.get("text", "")
            saved = await server.run(
                lambda v: v.remember(text, principal=identity.principal).to_dict()
            )
        data = await server.run(lambda v: memory_data(v, identity))
        return render(request, server, "memory.html", saved=saved, **data)

    async def status(request: Request) -> Response:
        identity = _identity(request)
        data = await server.run(lambda v: status_data(v, identity, server.freshness.state))
        return render(request, server, "status.html", **data)

    async def login(request: Request) -> Response:
        target = _safe_next(request.query_params.get("next"))
        if request.method == "GET":
            expired = bool(request.query_params.get("expired"))
            return render(request, server, "login.html", next=target, failed=expired)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise errors.HTTPError(415, "unsupported_media", "send the form as a normal HTML form")
        fields = dict(
            parse_qsl((await request.body()).decode("utf-8", "replace"), max_num_fields=5)
        )
        secret = fields.get("token", "").strip()
        info = await server.verify(secret) if secret else None
        if info is None:
            return render(request, server, "login.html", 401, next=target, failed=True)
        response = RedirectResponse(_safe_next(fields.get("next")), status_code=303)
        response.set_cookie(
            COOKIE,
            secret,
            max_age=30 * 86400,
            httponly=True,
            samesite="strict",
            secure=server.options.secure_cookies,
            path="/",
        )
        return response

    async def logout(request: Request) -> Response:
        await _form(request, server)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    return [
        Route("/", handler(home), methods=["GET"]),
        Route("/search", handler(search), methods=["GET"]),
        Route("/note/{path:path}", handler(note), methods=["GET"]),
        Route("/edit/{path:path}", handler(edit), methods=["GET", "POST"]),
        Route("/map", handler(interest), methods=["GET"]),
        Route("/memory", handler(memory), methods=["GET", "POST"]),
        Route("/status", handler(status), methods=["GET"]),
        Route("/login", handler(login), methods=["GET", "POST"]),
        Route("/logout", handler(logout), methods=["POST"]),
    ]
