"""Answer the requests the MCP SDK cannot read, instead of leaving the client waiting.

The SDK's transports parse each incoming message strictly (pydantic): a request with a
lone surrogate escape (`"\\ud800"`, valid JSON syntax but no Unicode text) or broken JSON
is handed to the server as an exception, which only logs it, so the client waits for an
answer for ever. This reader sits between the transport and the server: for such an item
it sends a JSON-RPC error itself (to the request's id, recovered with Python's lenient
JSON parser; `null` when even that fails, as JSON-RPC says for parse errors) and reads on.
A notification (no id) gets no answer, as JSON-RPC says.
"""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK (the `mcp` extra) is imported where it is used
    import mcp_types as types

_NO_ID = object()
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def request_id(raw: object) -> object:
    """The id of the request in the raw text `raw`: int, str, None (unknown), or _NO_ID
    for a notification."""
    if not isinstance(raw, str | bytes):
        return None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict):
        return None
    if "id" not in message:
        return _NO_ID
    ident = message["id"]
    ok = isinstance(ident, str | int) and not isinstance(ident, bool)
    if isinstance(ident, str):
        ok = ident.encode("utf-8", "replace").decode("utf-8") == ident  # no lone surrogate
    return ident if ok else None


def _raw_input(exc: Exception) -> object:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            for error in errors():
                if "input" in error:
                    return error["input"]
        except Exception:  # noqa: BLE001 - a foreign exception type: no input to recover
            return None
    return None


def error_answer(exc: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC error for a message the transport could not parse (None: say nothing)."""
    import mcp_types as types

    raw = _raw_input(exc)
    ident = request_id(raw)
    if ident is _NO_ID:
        return None
    lone = isinstance(raw, str) and _SURROGATE_ESCAPE.search(raw) is not None
    why = (
        "it holds a lone surrogate escape (such as \\ud800), which is not a character;"
        " send the text as valid Unicode"
        if lone
        else "it is not a valid JSON-RPC message"
    )
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=ident if isinstance(ident, int | str) else None,
        error=types.ErrorData(code=types.PARSE_ERROR, message=f"request not read: {why}"),
    )


class AnsweringReader:
    """A transport's read stream, minus the items that are parse failures (answered)."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            answer = error_answer(item)
            if answer is not None:
                from mcp.shared.message import SessionMessage

                await self._write.send(SessionMessage(answer))

    def __aiter__(self) -> AnsweringReader:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweringReader:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
