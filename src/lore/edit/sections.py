"""Edits of a note's text as pure functions: append, replace a section, find a section by
its heading. Headings inside fenced code and in the front matter are not headings.

A section is a heading line and every line after it up to the next heading of the same or
a higher level (`## A` ends at the next `##` or `#`, not at `###`).

    replace_section(text, "计划", "新的计划\\n")   # keeps the heading line
    append(text, "- one more item", heading="待办")
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError, NotFoundError, shown
from ..ingest.markdown import HEADING, iter_lines, open_fence
from ..ingest.parse import split_frontmatter
from ..memory.markdown import slug, split_heading


@dataclass(frozen=True)
class Section:
    heading: str  # as written, without the #s (and without an explicit {#id})
    anchor: str | None  # the explicit {#id}, when written
    level: int
    line: int  # 1-based line of the heading in the file
    end: int  # 1-based line after the last line of the section (len(lines) + 1 at the end)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def sections(text: str) -> list[Section]:
    """Every section of the note, in order."""
    _front, body, body_line = split_frontmatter(text)
    found: list[tuple[str, str | None, int, int]] = []
    for line in iter_lines(body, body_line):
        match = None if line.code else HEADING.match(line.text)
        if match:
            heading, anchor = split_heading(match.group(2).strip())
            found.append((heading, anchor, len(match.group(1)), line.number))
    total = len(_lines(text)) + 1
    out = []
    for i, (heading, anchor, level, number) in enumerate(found):
        end = next((n for _h, _a, lvl, n in found[i + 1 :] if lvl <= level), total)
        out.append(Section(heading, anchor, level, number, end))
    return out


def find_section(text: str, heading: str, *, path: str = "note") -> Section:
    """The section `heading` names: its text, its explicit id or its slug; one only."""
    wanted = heading.strip().lstrip("#").strip()
    if not wanted:
        raise ConfigError(f"{shown(path)}: the heading to edit is empty")
    every = sections(text)
    for exact in (True, False):
        matches = [
            s
            for s in every
            if (exact and wanted in (s.heading, s.anchor))
            or (not exact and slug(wanted) in (slug(s.heading), s.anchor))
        ]
        if len(matches) == 1:
            return matches[0]
        if matches:
            lines = ", ".join(str(s.line) for s in matches)
            raise ConfigError(
                f"{shown(path)}: {len(matches)} sections are headed {shown(wanted)!s}"
                f" (lines {lines})",
                hint="rename one of them, or replace the whole note",
            )
    names = ", ".join(shown(s.heading) for s in every[:12]) or "none"
    raise NotFoundError(f"{shown(path)}: no section headed {shown(wanted)!s} (headings: {names})")


_LIST_ITEM = re.compile(r"^[ \t]*(?:([-*+])|\d{1,9}([.)]))[ \t]+\S")


def _separator(last: str, first: str) -> list[str]:
    """The lines between what is there and what is appended: none when a list item follows
    an item of the same kind of list (the list goes on, it does not become a loose list);
    else one blank line."""
    before, after = _LIST_ITEM.match(last), _LIST_ITEM.match(first)
    same = before is not None and after is not None and before.groups() == after.groups()
    return [] if same else [""]


def _block(addition: str) -> list[str]:
    """What is written as lines: no trailing blank lines, an unclosed fence closed."""
    text = addition.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    fence = open_fence(text)
    return _lines(text) + ([fence] if fence else [])


def replace_section(text: str, heading: str, body: str, *, path: str = "note") -> str:
    """`text` with the lines under `heading` (up to the next heading of its level or
    higher) replaced by `body`; the heading line is kept."""
    section = find_section(text, heading, path=path)
    lines = _lines(text)
    new = _block(body)
    while new and not new[0].strip():
        new.pop(0)
    after = lines[section.end - 1 :]
    middle = ([""] + new if new else []) + ([""] if after and new else [])
    out = "\n".join(lines[: section.line] + middle + after)
    return out + "\n" if text.endswith("\n") and not out.endswith("\n") else out


def append(text: str, addition: str, *, heading: str | None = None, path: str = "note") -> str:
    """`text` with `addition` at its end, or at the end of the section `heading`, set off
    by a blank line (a list item after a list item continues the list); the note keeps
    ending with a line break."""
    new = _block(addition)
    if not any(line.strip() for line in new):
        raise ConfigError(f"{shown(path)}: nothing to append")
    lines = _lines(text)
    if heading is None:
        fence = open_fence(text)
        head = text.rstrip("\n")
        if not head:
            return "\n".join(new) + "\n"
        if fence:
            head, gap = f"{head}\n{fence}", [""]
        else:
            gap = _separator(head.rpartition("\n")[2], new[0])
        return "\n".join([head, *gap, *new]) + "\n"
    section = find_section(text, heading, path=path)
    before = lines[: section.end - 1]
    while len(before) > section.line and not before[-1].strip():
        before.pop()
    after = lines[section.end - 1 :]
    gap = [""] if after and any(line.strip() for line in after) else []
    joint = _separator(before[-1], new[0]) if len(before) > section.line else [""]
    out = before + joint + new + gap + after
    joined = "\n".join(out)
    return joined if joined.endswith("\n") else joined + "\n"
