"""The long summary of a note: its head (~1200 characters) plus its last paragraph.

Seed 000 calls this "取头留尾": the opening states what a note is about, the ending
usually states what it concluded. Both feed the summary field of the full-text index
(and, later, the summary vector). The ending is the last paragraph of prose: a note that
ends in a code block concluded nothing in it, and a tail cut out of a code block would read
as prose with its closing fence opening a new one.
"""

from __future__ import annotations

from ..ingest.markdown import iter_lines

HEAD_CHARS = 1200


def last_paragraph(text: str) -> str:
    """The last paragraph of `text` outside fenced code ("" when there is none)."""
    last: list[str] = []
    current: list[str] = []
    for line in iter_lines(text, 1):
        if line.code or not line.text.strip():
            if current:
                last, current = current, []
            continue
        current.append(line.text)
    return "\n".join(current or last).strip()


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
    last = last_paragraph(text)
    if not last or last in head:
        return head
    return f"{head}\n…\n{last[:head_chars]}"
