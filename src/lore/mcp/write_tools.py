"""The note-writing tools, offered only when the server allows writes: write_note (a new
note), edit_note (append, or replace a section or the whole text, guarded by the note's
content hash), move_note. Each is one Vault call (lore.edit through the Vault), which
indexes what it wrote."""

from __future__ import annotations

from typing import Any

from .args import Param
from .spec import MAX_PATH, ToolContext, ToolSpec

MAX_TEXT = 4 * 1024 * 1024

_PATH = Param(
    "path",
    "string",
    "The note's path relative to the vault, '/'-separated, ending in .md (e.g."
    " 'projects/crm/迁移计划.md'). No hidden folders, nothing outside the vault.",
    required=True,
    aliases=("file", "note", "filename", "file_path", "note_path"),
    max_length=MAX_PATH,
)
_HASH = Param(
    "base_hash",
    "string",
    "The note's `hash` as read_note returned it: the edit is refused (nothing written)"
    " when the note changed since, so a concurrent edit is never overwritten.",
    aliases=("hash", "content_hash", "expected_hash", "if_match", "etag"),
    max_length=128,
)


def run_write_note(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    return ctx.vault.write_note(a["path"], a["text"], principal=ctx.principal).to_dict()


WRITE_NOTE = ToolSpec(
    name="write_note",
    title="Write a new note",
    description=(
        "Create a new Markdown note at `path` with `text` (front matter included if you"
        " want one) and index it at once. Refused when a note is there already: to change"
        " a note use edit_note. Returns the note's `hash`."
    ),
    params=(
        _PATH,
        Param(
            "text",
            "string",
            "The whole note, Markdown.",
            required=True,
            aliases=("content", "body", "markdown"),
            max_length=MAX_TEXT,
        ),
    ),
    run=run_write_note,
    read_only=False,
    idempotent=False,
    sync_first=False,  # the write indexes what it wrote
    write=True,
)


def run_edit_note(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    return ctx.vault.edit_note(
        a["path"],
        base_hash=a["base_hash"] or "",
        text=a["text"],
        append=a["append"],
        section=a["section"],
        principal=ctx.principal,
    ).to_dict()


EDIT_NOTE = ToolSpec(
    name="edit_note",
    title="Edit a note",
    description=(
        "Change an existing note, if it still holds what you read (`base_hash` = the hash"
        " read_note returned): `append` adds text at the end (or at the end of `section`);"
        " `text` with `section` replaces that section's body (its heading is kept); `text`"
        " alone replaces the whole note. A note changed since you read it is refused:"
        " read it again and redo the edit. Returns the new `hash`."
    ),
    params=(
        _PATH,
        _HASH,
        Param(
            "append",
            "string",
            "Text to add at the end of the note, or of `section`.",
            aliases=("add", "append_text"),
            max_length=MAX_TEXT,
        ),
        Param(
            "text",
            "string",
            "The new text: of `section` when given, else of the whole note.",
            aliases=("content", "body", "replace", "new_text"),
            max_length=MAX_TEXT,
        ),
        Param(
            "section",
            "string",
            "The heading of the section to edit (its text, as in read_note's `headings`).",
            aliases=("heading", "under"),
            max_length=500,
        ),
    ),
    run=run_edit_note,
    read_only=False,
    destructive=True,
    idempotent=False,
    sync_first=False,
    write=True,
)


def run_move_note(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    return ctx.vault.move_note(
        a["path"], a["to"], base_hash=a["base_hash"], principal=ctx.principal
    ).to_dict()


MOVE_NOTE = ToolSpec(
    name="move_note",
    title="Move or rename a note",
    description=(
        "Move a note to another path inside the vault (folders are made as needed); refused"
        " when the target exists. Links written as [[name]] keep working when the file name"
        " stays the same."
    ),
    params=(
        _PATH,
        Param(
            "to",
            "string",
            "The new path, relative to the vault, ending in .md.",
            required=True,
            aliases=("new_path", "destination", "target", "dest"),
            max_length=MAX_PATH,
        ),
        _HASH,
    ),
    run=run_move_note,
    read_only=False,
    idempotent=False,
    sync_first=False,
    write=True,
)

WRITE_TOOLS = (WRITE_NOTE, EDIT_NOTE, MOVE_NOTE)
