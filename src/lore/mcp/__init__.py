"""lore as a Model Context Protocol server (the `mcp` extra): `lore mcp`.

A sibling of the CLI over the same library: every tool calls `lore.Vault`, never the CLI.

    args.py          tool parameters: JSON schema out, forgiving normalisation in
    spec.py          what a tool is (ToolSpec), what a call sees, shared result shapes
    tools.py         search, list_tags, status; the list of tools a server offers
    read.py          read_note: path checks, anchors, line windows, pages
    memory_tools.py  lookup, recent, context, snapshot, remember (lore.memory)
    server.py        the MCP SDK wiring: tools/list, tools/call, instructions, stdio, HTTP

Only server.py imports the SDK, and only `lore mcp` imports server.py.
"""
