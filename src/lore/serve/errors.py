"""Errors as HTTP answers: one JSON object `{"error": {"code": …, "message": …}}` with a
stable code, the library's one-line message, and the status that fits.

    code              status  when
    bad_request       400     an argument cannot be used (names it)
    bad_path          400     a note path that is absolute, leaves the vault, has NUL, …
    bad_json          400     a body that is not a JSON object
    unauthorized      401     a token is needed, or the one given is unknown or revoked
    forbidden         403     the token's principal or scope does not allow this
    bad_origin        403     a browser Origin that is not this server (DNS rebinding, CSRF)
    csrf              403     a form without this server's CSRF token
    not_found         404     no such note, page or trash item
    method_not_allowed 405
    conflict          409     the note changed since it was read; nothing written
    too_large         413     the body is larger than --max-body
    uri_too_long      414     the path or query string is too long
    unsupported_media 415     a write whose body is not application/json
    capture_failed    422     `ingest` could not fetch or read the source
    rate_limited      429     too many requests for this token (Retry-After says when)
    bad_host          421     a Host header that is not this server (DNS rebinding)
    busy              503     another process is writing the index; try again
    read_only         503     the index cannot be updated
    internal          500     a bug: logged, and said in one line
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import (
    AccessError,
    CaptureError,
    ConflictError,
    IndexBusyError,
    IndexFullError,
    IndexReadOnlyError,
    LoreError,
    NotFoundError,
    PathError,
)


class HTTPError(Exception):
    """Raised by a handler to answer with this error."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def body(code: str, message: str, **extra: Any) -> bytes:
    return json.dumps(
        {"error": {"code": code, "message": message, **extra}}, ensure_ascii=False
    ).encode("utf-8")


def from_lore(exc: LoreError) -> HTTPError:
    message = str(exc)
    for kind, status, code in (
        (NotFoundError, 404, "not_found"),
        (AccessError, 403, "forbidden"),
        (ConflictError, 409, "conflict"),
        (PathError, 400, "bad_path"),
        (CaptureError, 422, "capture_failed"),
        (IndexBusyError, 503, "busy"),
        (IndexReadOnlyError, 503, "read_only"),
        (IndexFullError, 507, "disk_full"),
    ):
        if isinstance(exc, kind):
            return HTTPError(status, code, message)
    return HTTPError(400, "bad_request", message)
