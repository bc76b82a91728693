"""The long summary of a note: its head (~1200 characters) plus its last paragraph.

Seed 000 calls this "取头留尾": the opening states what a note is about, the ending
usually states what it concluded. Both feed the summary field of the full-text index
and the summary vector. The ending is the last paragraph of prose: a note that ends in a
code block concluded nothing in it, and a tail cut out of a code block would read as prose
with its closing fence opening a new one.

A summary the author wrote (`summary:` in the front matter) always wins over lore's own;
with an LLM, a note without one gets the model's grounded summary (lore.index.note_llm).
A `summary:` that is exactly lore's head and tail of the body is not the author's: it is
what `lore ingest` writes into the notes it captures.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..ingest.markdown import Line, iter_lines

HEAD_CHARS = 1200


def last_paragraph(text: str) -> str:
    """The last paragraph of `text` outside fenced code ("" when there is none)."""
    return _last_paragraph(iter_lines(text, 1))


def _last_paragraph(lines: Iterable[Line]) -> str:
    last: list[str] = []
    current: list[str] = []
    for line in lines:
        if line.code or not line.text.strip():
            if current:
                last, current = current, []
            continue
        current.append(line.text)
    return "\n".join(current or last).strip()


def _stripped_last_paragraph(body: str, lines: list[Line]) -> str:
    """last_paragraph(body.strip()) from the lines of `body` (iter_lines), without reading
    the body again. The same paragraph: the lines around the stripped text are blank (a
    blank line and a code line end a paragraph alike, and the white space at either end
    is stripped from the paragraph too), and no fence is open before its first line. Only
    white space other than spaces and tabs before the first word of that line can make it
    a fence in one text and not in the other: then the stripped text is read."""
    start = len(body) - len(body.lstrip())
    if body[body.rfind("\n", 0, start) + 1 : start].strip(" \t"):
        return last_paragraph(body.strip())
    return _last_paragraph(lines)


def long_summary(body: str, head_chars: int = HEAD_CHARS, lines: list[Line] | None = None) -> str:
    """The head and tail of `body`. `lines`: its lines, when the caller has read them
    (iter_lines; the tail is found in them)."""
    text = body.strip()
    if len(text) <= head_chars:
        return text
    head = text[:head_chars]
    # Do not cut a word or a surrogate-free character run in half: back up to whitespace
    # when there is some close by (Latin text); CJK text can be cut anywhere.
    cut = head.rfind(" ", head_chars - 40)
    if cut > 0:
        head = head[:cut]
    last = last_paragraph(text) if lines is None else _stripped_last_paragraph(body, lines)
    if not last or last in head:
        return head
    return f"{head}\n…\n{last[:head_chars]}"


def without_title(body: str, title: str) -> str:
    """The body less a first-line H1 that repeats the title (a summary need not say it)."""
    first, _, rest = body.lstrip("\n").partition("\n")
    if first.startswith("# ") and first[2:].strip().casefold() == title.strip().casefold():
        return rest
    return body


def author_summary(
    frontmatter: dict[str, Any], body: str, title: str, lines: list[Line] | None = None
) -> str | None:
    """The summary the author wrote in the front matter, if any (not lore's own).
    `lines`: the body's lines, when the caller has read them (iter_lines)."""
    value = frontmatter.get("summary")
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text in (long_summary(body, lines=lines), long_summary(without_title(body, title))):
        return None
    return text


def base_summary(
    frontmatter: dict[str, Any], body: str, title: str, lines: list[Line] | None = None
) -> tuple[str, str]:
    """(summary, source) without a model: the author's (`frontmatter`), else the head and
    tail of the body (`head_tail`). `lines`: the body's lines, when the caller has read
    them (lore.ingest.parse.ParsedNote.lines)."""
    own = author_summary(frontmatter, body, title, lines)
    if own is not None:
        return own, "frontmatter"
    return long_summary(body, lines=lines), "head_tail"
