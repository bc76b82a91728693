"""read_note: one note of the vault, whole or a line window, by path (as search returns it)
or front-matter id. Only notes inside the vault: every reading of the path a model sent is
checked (relative, no NUL, no `..` out, no symlink out) before any is looked up."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote

from ..errors import PathError
from ..memory.markdown import slug, split_heading
from ..model import anchor
from ..vault import Vault
from .args import ArgumentError, Param
from .spec import MAX_PATH, ToolContext, ToolSpec

READ_CHARS = 24_000  # at most this much note text per call; the rest comes in pages
OWN_TAGS = ("frontmatter", "inline")  # what search(tags=...) and list_tags see

READ_PARAMS = (
    Param(
        "path",
        "string",
        "The note's path relative to the vault, exactly as search returns it (e.g."
        " 'rules/客户去重规则 v2.md'); an anchor 'path#heading' starts at that heading.",
        aliases=("file", "note", "filename", "file_path", "note_path", "anchor", "uri"),
        max_length=MAX_PATH,
    ),
    Param(
        "id",
        "string",
        "Instead of path: the note's front-matter id (e.g. 'RULE-CD-002').",
        aliases=("note_id", "doc_id", "identifier"),
        max_length=200,
    ),
    Param(
        "start_line",
        "integer",
        "First line to return (1-based line of the file, as in a hit's `line`). Default:"
        " the first line after the front matter.",
        aliases=("from_line", "line", "start", "first_line", "line_start", "offset"),
        minimum=1,
    ),
    Param(
        "end_line",
        "integer",
        "Last line to return (inclusive). Default: the end of the note.",
        aliases=("to_line", "end", "last_line", "line_end", "stop_line"),
        minimum=1,
    ),
)

_WINDOWS_ABS = re.compile(r"^(?:[A-Za-z]:|\\\\|//)")


def _candidates(raw: str) -> list[str]:
    """The readings of a path a model sent: as given, with Windows separators, URL-decoded,
    with `.md` added. Every reading is checked against the vault."""
    out: list[str] = []
    for text in (raw, raw.replace("\\", "/")):
        for variant in (text, unquote(text)):
            for candidate in (variant, variant + ".md"):
                if candidate not in out:
                    out.append(candidate)
    return out


def _absolute(text: str) -> bool:
    return os.path.isabs(text) or bool(_WINDOWS_ABS.match(text))


def resolve_note(
    vault: Vault, raw: str, principal: str | None = None
) -> tuple[dict[str, Any], str | None]:
    """(the indexed note, the heading of an anchor) for what a model sent as a path.

    Every reading of the input (see _candidates) must be a relative path that stays inside
    the vault — no NUL, no absolute path, no `..` out, no symlink out — before any reading
    is looked up: one reading that escapes refuses the whole request."""
    if "\x00" in raw or "\x00" in unquote(raw):
        raise PathError("read_note: `path` cannot contain NUL")
    readings: list[tuple[str, str | None]] = [(raw, None)]
    if "#" in raw:
        base, _, fragment = raw.rpartition("#")
        readings.append((base, fragment.strip() or None))
    checked: list[tuple[str, str | None]] = []
    for text, wanted in readings:
        for candidate in _candidates(text):
            if _absolute(candidate):
                raise PathError(
                    f"read_note: {raw!r} is an absolute path; give the path relative to the"
                    " vault, as search returns it"
                )
            try:
                checked.append((vault.relative_path(candidate), wanted))
            except PathError:
                raise PathError(
                    f"read_note: {raw!r} is outside the vault; only notes inside it can be read"
                ) from None
    for rel, heading in checked:
        try:
            return vault.note(rel, principal=principal), heading
        except PathError:
            continue  # inside the vault, but not an indexed note: try the next reading
    raise PathError(
        f"read_note: {raw!r} is not a note in the index", hint="use search to find its path"
    )


def heading_line(headings: list[dict[str, Any]], fragment: str) -> int | None:
    """The line of the heading an anchor names: by its text, its explicit id
    (`## 14:03 Redis {#m-1403-ab}`) or its GitHub-style slug (`2026-11-20-周五`)."""
    wanted = fragment.strip()
    for exact in (True, False):
        for h in headings:
            text, explicit = split_heading(str(h["text"]).strip())
            if (exact and wanted in (text, explicit)) or (
                not exact and slug(wanted) in (slug(text), explicit)
            ):
                return int(h["line"])
    return None


def run_read_note(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    vault = ctx.vault
    heading: str | None = None
    if a["path"]:
        note, heading = resolve_note(vault, a["path"], ctx.principal)
    elif a["id"]:
        found = vault.note_path_for_id(a["id"])
        if found is None or not vault.access(ctx.principal).allows(found):
            raise PathError(
                f"read_note: no note has the id {a['id']!r}", hint="search for it by words"
            )
        note = vault.note(found, principal=ctx.principal)
    else:
        raise ArgumentError(
            "read_note: give `path` (as search returns it) or `id` (a front-matter id)"
        )
    path = str(note["path"])
    lines = str(note["body"]).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    first = int(note["body_line"])
    total = first + len(lines) - 1
    start = a["start_line"]
    if heading is not None:
        at = heading_line(note["headings"], heading)
        if at is None:
            ctx.notices.append(f"no heading {heading!r} in {path}; reading from the top")
            heading = None
        elif start is None:
            start = at
    if a["end_line"] is not None and a["end_line"] < first:
        raise ArgumentError(
            f"read_note: lines up to {a['end_line']} are the front matter of {path} (returned"
            f" as `frontmatter`); its text is lines {first}-{total}"
        )
    if start is None or start < first:
        if start is not None:
            ctx.notices.append(f"lines before {first} are front matter (see `frontmatter`)")
        start = first
    end = total if a["end_line"] is None else min(int(a["end_line"]), total)
    if start > total:
        raise ArgumentError(f"read_note: start_line {start} is past the end ({total} lines)")
    if end < start:
        raise ArgumentError(f"read_note: end_line {end} is before start_line {start}")
    taken: list[str] = []
    size = 0
    next_line: int | None = None
    for number in range(start, end + 1):
        line = lines[number - first]
        if taken and size + len(line) + 1 > READ_CHARS:
            next_line = number
            break
        if len(line) > READ_CHARS:
            ctx.notices.append(f"line {number} is cut at {READ_CHARS} characters")
            line = line[:READ_CHARS]
        taken.append(line)
        size += len(line) + 1
    shown_end = start + len(taken) - 1
    if next_line is not None:
        ctx.notices.append(
            f"long note: lines {start}-{shown_end} shown; call again with"
            f" start_line={next_line} for more"
        )
    return {
        "path": note["path"],
        "anchor": anchor(note["path"], heading),
        "title": note["title"],
        "date": note["date"],
        "tags": [t["tag"] for t in note["tags"] if t["origin"] in OWN_TAGS],
        "derived_tags": [t["tag"] for t in note["derived_tags"]],  # heuristic | llm
        "frontmatter": note["frontmatter"],
        "headings": note["headings"],
        "links": note["links"],
        "backlinks": [b.to_dict() for b in vault.links(path, principal=ctx.principal).backlinks],
        # With an LLM (issue 19): its summary, key claims (each with the quote that
        # grounds it in the note) and category; the author's summary and category win.
        "summary": note["summary"] if note["summary_source"] != "head_tail" else None,
        "summary_source": note["summary_source"],
        "claims": note["claims"],
        "category": note["category"],
        "start_line": start,
        "end_line": shown_end,
        "total_lines": total,
        "next_start_line": next_line,
        "text": "\n".join(taken),
        "truncated": note["truncated"],  # the file is larger than the index keeps
    }


READ_NOTE = ToolSpec(
    name="read_note",
    title="Read a note",
    description=(
        "Read one note of the knowledge base: its title, date, tags, front matter, headings"
        " (with line numbers) and text. Give the `path` a search hit returned (or a"
        " front-matter `id`). For long notes ask for a line window (start_line/end_line, file"
        " line numbers as in a hit's `line`); a long answer is cut into pages and"
        " `next_start_line` says where the next page starts. Only notes inside the vault can"
        " be read."
    ),
    params=READ_PARAMS,
    run=run_read_note,
)
