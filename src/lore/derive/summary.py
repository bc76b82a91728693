"""The long summary of a note: its head (~1200 characters) plus its last paragraph.

Seed 000 calls this "取头留尾": the opening states what a note is about, the ending
usually states what it concluded. Both feed the summary field of the full-text index
(and, later, the summary vector).
"""

from __future__ import annotations

import re

HEAD_CHARS = 1200
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def long_summary(body: str, head_chars: int = HEAD_CHARS) -> str:
    text = body.strip()
    if len(text) <= head_chars:
        return text
    head = text[:head_chars]
    # Do not cut a word or a surrogate-free character run in half: back up to whitespace
    # when there is some close by (Latin text); CJK text can be cut anywhere.
    cut = head.rfind(" ", head_chars - 40)
    if cut > 0:
        head = head[:cut]
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
    last = paragraphs[-1] if paragraphs else ""
    if not last or last in head:
        return head
    return f"{head}\n…\n{last[:head_chars]}"
