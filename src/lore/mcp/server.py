"""The MCP server: the tools of lore.mcp.tools behind the SDK's low-level `Server`.

The low-level server (not `MCPServer`) is used on purpose: the arguments of a `tools/call`
reach lore as the client sent them, so lore.mcp.args can read a model's slips (`q` for
`query`) and refuse the rest with a useful message, instead of a validation dump.

One open Vault serves every client of the process. Tool calls run in worker threads, one at
a time (the store is one SQLite connection); each query tool first runs an incremental sync,
so what was just written to the vault is found. Every failure is a tool result with
`isError` and one line naming the tool and the argument, never a crash of the server.

    server = LoreServer(vault)              # build_server(vault) → the SDK Server
    anyio.run(server.serve_stdio)           # `lore mcp`
    server.serve_http(port=8765)            # `lore mcp --http` (127.0.0.1 only)
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import ConfigError, IndexBusyError, IndexReadOnlyError, LoreError
from ..vault import Vault
from .args import input_schema, normalise
from .spec import ToolContext, ToolSpec
from .tools import available_tools
from .write_tools import WRITE_TOOLS

if TYPE_CHECKING:  # the SDK (the `mcp` extra) is imported where it is used
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.transport_security import TransportSecuritySettings

log = logging.getLogger("lore.mcp")
_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z-]*)")

HOST = "127.0.0.1"  # the HTTP transport never listens anywhere else
WRITE_NAMES = {"remember", *(tool.name for tool in WRITE_TOOLS)}

_TOOL_SYNONYMS = {
    "find": "search",
    "query": "search",
    "search_notes": "search",
    "read": "read_note",
    "open": "read_note",
    "open_note": "read_note",
    "get_note": "read_note",
    "show": "read_note",
    "read_file": "read_note",
    "tags": "list_tags",
    "get_tags": "list_tags",
    "info": "status",
}


def describe(vault: Vault, tools: Sequence[ToolSpec], *, counts: bool = True) -> str:
    """The server's instructions, from the live index: which vault, how big (unless
    `counts` is False: a server whose callers see different parts of the vault), which
    mode, what each tool is for."""
    status = vault.status()
    names = {tool.name for tool in tools}
    mode_text = {
        "mode1": "hybrid: full text + embeddings + LLM query planning",
        "mode2": "full text + LLM query planning",
        "mode3": "hybrid: full text + embeddings",
        "mode4": "full text (BM25, CJK-aware); no embeddings, no LLM",
    }.get(status.mode, status.mode)
    size = f"{status.notes} notes, {status.tags} tags; " if counts else ""
    lines = [
        f"lore: the local knowledge base of the Markdown vault '{vault.root.name}'"
        f" ({size}search runs in {status.mode}: {mode_text}).",
        "The files are the truth. Every answer carries the note's path, date, heading and a"
        " snippet: cite the `anchor` (path#heading). The index syncs itself before each"
        " call, so notes just written are found.",
        "Tools:",
        "- search: find notes by words, names, ids (JIRA-1234), versions (v2) or a question,"
        " in Chinese, English or both; filter by tags, a path glob, a date range.",
        "- read_note: open a note that search found (by path, or a front-matter id), whole"
        " or a line window.",
        "- list_tags: the tags in use, with counts (the vocabulary for search tags).",
        "- status: the index's size, freshness and capability mode.",
    ]
    if "lookup" in names:
        lines.append(
            "- lookup: ask about a person, project or concept by name: L1 entity card → L2"
            " index → L3 raw scan of the files → L4 an explicit not-found. Prefer it over"
            " search for names; never guess past an L4."
        )
    if "recent" in names:
        lines.append("- recent: what was active lately (entities and notes with their dates).")
    if "context" in names:
        lines.append(
            "- context: a byte-budgeted briefing for a task (core conclusions + best hits)."
        )
    if "snapshot" in names:
        lines.append("- snapshot: a 1-2 KB cold-start summary; call it first in a new session.")
    if "remember" in names:
        lines.append(
            "- remember: write a conclusion into today's daily note at once (claimed until a"
            " person verifies it)."
        )
    else:
        lines.append("This server is read-only.")
    if "edit_note" in names:
        lines.append(
            "- write_note / edit_note / move_note: create a note, change one (pass the `hash`"
            " read_note gave as base_hash: a note changed since is refused), move one."
        )
    return "\n".join(lines)


def error_message(tool: str, exc: LoreError) -> str:
    """The library's one-line message for a tool: prefixed with the tool's name, and the
    CLI's option names (`--since`) spelled as the tool's arguments (`since`)."""
    message = _FLAG.sub(lambda m: m.group(1).replace("-", "_"), exc.message)
    if not message.startswith(f"{tool}:"):
        message = f"{tool}: {message}"
    return f"{message} ({exc.hint})" if exc.hint else message


def _text_result(data: dict[str, Any]) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
        structured_content=data,
    )


def _error_result(message: str) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


Work = Callable[[Vault], dict[str, Any]]
# How a tool call reaches a vault when the server does not own one (`lore serve`): run the
# work on a vault of the runner's choosing; `sync` asks for an index as fresh as the files.
Runner = Callable[[Work, bool], dict[str, Any]]
# Who a request is, from the transport's request (`lore serve`'s tokens): (the principal
# it runs as, None for the owner; whether it may use the write tools).
CallerOf = Callable[[Any], "tuple[str | None, bool]"]


class LoreServer:
    """The tools of one open vault, served over MCP.

    By default the server owns `vault`: tool calls take turns on it and sync it first.
    With a `runner` (`lore serve`), each call runs wherever the runner puts it, as the
    caller `caller_of(request)` names, and `vault` only describes the server."""

    def __init__(
        self,
        vault: Vault,
        *,
        allow_write: bool = False,
        runner: Runner | None = None,
        caller_of: CallerOf | None = None,
    ) -> None:
        from mcp.server import Server

        self.vault = vault
        self.allow_write = allow_write
        self.runner = runner
        self.caller_of = caller_of
        self.tools = {tool.name: tool for tool in available_tools(vault, allow_write=allow_write)}
        self._lock = threading.Lock()  # one tool call at a time on the vault's connection
        self._told: set[str] = set()
        # What the vault has to say once (a setting ignored, a read-only index): logged
        # now, and put on the first answer, where the agent sees it.
        self._first_notices = vault.take_notices() if runner is None else []
        for notice in self._first_notices:
            log.warning("%s", notice)
        if runner is None:
            with self._lock, contextlib.suppress(IndexBusyError, IndexReadOnlyError):
                vault.sync()  # so the instructions describe the index as it is now
        instructions = describe(vault, list(self.tools.values()), counts=caller_of is None)
        self.server: Server[Any] = Server(
            "lore",
            version=__version__,
            title="lore knowledge base",
            instructions=instructions,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    # -- protocol handlers -------------------------------------------------------------------
    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        import mcp_types as types

        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=tool.name,
                    title=tool.title,
                    description=tool.description,
                    input_schema=input_schema(tool.params),
                    annotations=types.ToolAnnotations(**tool.annotations()),
                )
                for tool in self.tools.values()
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        principal, can_write = None, True
        if self.caller_of is not None:
            try:
                principal, can_write = self.caller_of(ctx.request)
            except LoreError as exc:  # no identity on the request: refuse, never widen
                return _error_result(f"{params.name}: {exc}")
        return await self.call(
            params.name, params.arguments, principal=principal, can_write=can_write
        )

    async def call(
        self, name: str, arguments: Any, *, principal: str | None = None, can_write: bool = True
    ) -> types.CallToolResult:
        """Run one tool (in a worker thread) as `principal` and shape its answer; never
        raises. A caller that may not write gets an error from the write tools."""
        import anyio.to_thread

        tool = self._find(name)
        if tool is not None and tool.write and not can_write:
            return _error_result(
                f"{tool.name}: this token is read-only (make one with `lore token add NAME"
                " --write`)"
            )
        if tool is None:
            key = name.strip().casefold()
            if key in WRITE_NAMES and not self.allow_write:
                return _error_result(
                    f"{key}: writing is off on this server (start it with --allow-write"
                    " to enable the write tools)"
                )
            return _error_result(f"unknown tool {name!r}; this server has: {', '.join(self.tools)}")
        try:
            data = await anyio.to_thread.run_sync(self._run, tool, arguments, principal)
        except LoreError as exc:
            return _error_result(error_message(tool.name, exc))
        except Exception as exc:  # a bug must not take the server down: say so, log it
            log.exception("tool %s failed", tool.name)
            return _error_result(
                f"{tool.name}: internal error ({type(exc).__name__}: {exc}); please report it"
            )
        return _text_result(data)

    def _find(self, name: str) -> ToolSpec | None:
        key = name.strip().casefold().replace("-", "_").replace(".", "_")
        key = key.removeprefix("lore_")
        key = _TOOL_SYNONYMS.get(key, key)
        return self.tools.get(key)

    # -- the work, in a worker thread ----------------------------------------------------------
    def _run(self, tool: ToolSpec, arguments: Any, principal: str | None = None) -> dict[str, Any]:
        args, notices = normalise(tool.name, tool.params, arguments)

        def work(vault: Vault) -> dict[str, Any]:
            return tool.run(ToolContext(vault, notices, principal), args)

        if self.runner is not None:
            data = self.runner(work, tool.sync_first)
        else:
            with self._lock:
                notices[:0] = self._first_notices
                self._first_notices = []
                changed = tool.sync_first and self._sync(notices)
                data = work(self.vault)
                if changed or tool.write:  # new sessions get instructions with the new counts
                    self.server.instructions = describe(self.vault, list(self.tools.values()))
        if notices:
            data["notices"] = [*notices, *data.get("notices", [])]
        return data

    def _sync(self, notices: list[str]) -> bool:
        """Incremental sync; True when it wrote something. A busy index (another process
        writing) is a notice, not an error: the answer then comes from the index as it was."""
        try:
            report = self.vault.sync()
        except IndexBusyError as exc:
            notices.append(f"not synced: {exc}; results may miss the latest changes")
            return False
        except IndexReadOnlyError:  # said on the first answer (take_notices)
            return False
        notices.extend(report.notices)
        for skipped in report.skipped:  # each unreadable file is said once per server
            text = f"not indexed: {skipped.path}: {skipped.reason}"
            if text not in self._told:
                self._told.add(text)
                notices.append(text)
        return report.wrote

    # -- transports ----------------------------------------------------------------------------
    async def serve_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        from .unreadable import AnsweringReader

        async with stdio_server() as (read_stream, write_stream):
            await self.server.run(
                AnsweringReader(read_stream, write_stream),  # unreadable requests: an error
                write_stream,
                self.server.create_initialization_options(),
            )

    def serve_http(
        self,
        *,
        port: int = 8765,
        allowed_origins: Sequence[str] = (),
        ready: Callable[[str], None] | None = None,
    ) -> None:
        """Serve streamable HTTP at http://127.0.0.1:PORT/mcp until interrupted (port 0:
        any free port; `ready` gets the URL once listening). Requests whose Host is not
        this address, or whose Origin is not this server (or one of `allowed_origins`),
        are refused (421 / 403): a web page cannot reach the vault by DNS rebinding."""
        import anyio
        import uvicorn

        sock = bind(port)
        real_port = int(sock.getsockname()[1])
        app = self.server.streamable_http_app(
            transport_security=http_security(real_port, allowed_origins), host=HOST
        )
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
        url = f"http://{HOST}:{real_port}/mcp"

        async def serve() -> None:
            if ready is not None:
                ready(url)
            await server.serve(sockets=[sock])

        try:
            anyio.run(serve)
        finally:
            sock.close()


def bind(port: int, host: str = HOST) -> socket.socket:
    """A listening socket on host:port (port 0: any free one), or one line saying why not."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"--port {port}: cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="choose another port, or --port 0 for any free one",
        ) from None
    sock.listen(512)
    return sock


def http_security(port: int, allowed_origins: Sequence[str] = ()) -> TransportSecuritySettings:
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"{HOST}:{port}", f"localhost:{port}"]
    origins = [f"http://{host}" for host in hosts] + [o.rstrip("/") for o in allowed_origins]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def build_server(vault: Vault, *, allow_write: bool = False) -> Server[Any]:
    """The SDK server for `vault` (what tests connect an in-memory client to)."""
    return LoreServer(vault, allow_write=allow_write).server
