"""Helpers shared by the budgeted views (`context`, `snapshot`): byte-exact trimming and
the section of a note around a line."""

from __future__ import annotations

import json

from ..ingest.markdown import open_fence

_FENCE_ROOM = 24  # bytes kept for a fence an excerpt opens or closes


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def trim(text: str, max_bytes: int) -> str:
    """`text` cut to at most `max_bytes` UTF-8 bytes (never inside a character), at a line
    break or space when one is near, with "…" marking the cut."""
    if size(text) <= max_bytes:
        return text
    if max_bytes < 4:
        return ""
    cut = text.encode("utf-8")[: max_bytes - 3].decode("utf-8", errors="ignore")
    for mark in ("\n", "。", " "):
        at = cut.rfind(mark)
        if at >= len(cut) * 0.6:
            cut = cut[: at + (len(mark) if mark == "。" else 0)]
            break
    return cut.rstrip() + "…"


def section_around(
    body: str, body_line: int, headings_json: str, line: int
) -> tuple[str, str, int]:
    """(heading or '', text, first line of text) of the innermost section holding `line`:
    from the last heading at or before it to the next heading."""
    headings = [(h[0], h[1], h[2], h[3]) for h in json.loads(headings_json)]
    before = [h for h in headings if h[3] <= line]
    after = [h for h in headings if h[3] > line]
    end = after[0][2] if after else len(body)
    if not before:
        return "", body[:end], body_line
    _level, text, offset, heading_line = before[-1]
    section = body[offset:end]
    first_break = section.find("\n")
    content = section[first_break + 1 :] if first_break >= 0 else ""
    return text, content, heading_line + 1


def window(text: str, text_line: int, line: int, max_bytes: int) -> str:
    """The lines of `text` (which starts at file line `text_line`) centred on `line`,
    within `max_bytes`."""
    lines = text.split("\n")
    if size(text) <= max_bytes:
        return text
    at = min(max(line - text_line, 0), len(lines) - 1)
    lo, hi = at, at + 1
    used = size(lines[at])
    while True:
        grew = False
        if hi < len(lines) and used + size(lines[hi]) + 1 <= max_bytes:
            used += size(lines[hi]) + 1
            hi += 1
            grew = True
        if lo > 0 and used + size(lines[lo - 1]) + 1 <= max_bytes:
            lo -= 1
            used += size(lines[lo]) + 1
            grew = True
        if not grew:
            break
    excerpt = trim("\n".join(lines[lo:hi]), max_bytes - _FENCE_ROOM)
    return _fenced(excerpt, open_fence("\n".join(lines[:lo])))


def _fenced(excerpt: str, open_before: str | None) -> str:
    """An excerpt that starts or ends inside fenced code, with the fence opened before it or
    closed after it: the Markdown an agent reads keeps code as code and prose as prose."""
    text = f"{open_before}\n{excerpt}" if open_before else excerpt
    still = open_fence(text)
    return f"{text}\n{still}" if still else text
