"""The parts of a note as token streams, for passage-level ranking.

A long note that holds a detail in one place loses to short notes that merely share the
query's words: BM25 over the whole note divides the few matches by the note's length, and a
note that mentions the words everywhere outscores the one that explains them together. So
each note's body is also indexed in parts and search scores a note by its best part too
(lore.retrieve.sections). A short note is one part: its whole body.

Parts follow the author's structure: a heading starts a part (unless the part so far is
a stub), paragraphs are grouped while the part stays within SECTION_TOKENS, and a longer
paragraph is cut into windows of that many tokens. Tokens are counted in the index's own
stream (a CJK character or a word each), one pass over the body, so cutting costs about
what tokenizing does.

Each part's stream starts with the note's title: a part is read in its note's context
("Default Obsidian Theme Colors" > "Light theme"), as a reader of that part would. It ends
with the every-note token, as the body does, so a query's score-only terms work alike here.
"""

from __future__ import annotations

import re

from ..store.query import EVERY_NOTE
from .tokenize import index_text, terms, word_runs

SECTION_TOKENS = 200
_STUB_TOKENS = SECTION_TOKENS // 4  # a part this short runs on past the next heading
_PARA = re.compile(r"\n[ \t]*\n")

Section = tuple[int, int, str]  # (start, end) in the body, and the token stream


def _paragraphs(body: str, bounds: list[int]) -> list[tuple[int, int, bool]]:
    """(start, end, opens a heading's section) of every paragraph with text."""
    out: list[tuple[int, int, bool]] = []
    for sec_start, sec_end in zip(bounds, bounds[1:], strict=False):
        cursor = sec_start
        first = True
        for match in [*_PARA.finditer(body, sec_start, sec_end), None]:
            end = match.start() if match else sec_end
            if body[cursor:end].strip():
                out.append((cursor, end, first and sec_start > 0))
                first = False
            cursor = match.end() if match else sec_end
    return out


def _windows(
    body: str, start: int, end: int, budget: int, words: list[str]
) -> list[tuple[int, int, list[str]]]:
    """body[start:end] in windows of at most `budget` terms, never cutting a word in two
    (".NET" is two terms, dotnet and net, of one word); `words` are its terms. A window
    takes the CJK characters that fit in one step, not one character at a time: long
    paragraphs are most of a Chinese vault's text."""
    cuts: list[list[int]] = []  # per window: its first character, its end, its first term
    held = 0  # terms in the window being filled
    seen = 0  # terms before the piece
    for w_start, w_end, count, cjk in word_runs(body[start:end]):
        if not cjk:
            if not held or held + count > budget:
                cuts.append([start + w_start, 0, seen])
                held = 0
            held += count
            seen += count
            cuts[-1][1] = start + w_end
            continue
        i = 0  # characters of the run taken; each is a word of one term
        while i < count:
            if not held or held >= budget:
                cuts.append([start + w_start + i, 0, seen + i])
                held = 0
            take = min(count - i, max(budget - held, 1))
            i += take
            held += take
            cuts[-1][1] = start + w_start + i
        seen += count
    ends = [c[2] for c in cuts[1:]] + [seen] if cuts else []
    return [(first, last, words[t0:t1]) for (first, last, t0), t1 in zip(cuts, ends, strict=True)]


def split_sections(
    body: str, headings: list[tuple[int, str, int, int]], budget: int = SECTION_TOKENS
) -> list[tuple[int, int, list[str]]]:
    """(start, end, terms) of each part of the body, in order."""
    bounds = sorted({0, len(body), *(h[2] for h in headings if 0 < h[2] < len(body))})
    parts: list[tuple[int, int, list[str]]] = []
    start, end = 0, 0
    held: list[str] = []  # the terms of the part being filled

    def close() -> None:
        if held:
            parts.append((start, end, list(held)))

    for p_start, p_end, heading in _paragraphs(body, bounds):
        words = terms(body[p_start:p_end])
        if not words:
            continue
        if held and (len(held) + len(words) > budget or (heading and len(held) >= _STUB_TOKENS)):
            close()
            held = []
        if len(words) > budget:  # one long paragraph (a code block, a wall of text): windows
            parts += _windows(body, p_start, p_end, budget, words)
            continue
        if not held:
            start = p_start
        end = p_end
        held += words
    close()
    return parts


def section_streams(title: str, parts: list[tuple[int, int, list[str]]]) -> list[Section]:
    """(start, end, token stream) of each part (split_sections), the title in front."""
    head = index_text(title)
    return [
        (start, end, " ".join([*([head] if head else []), *words, EVERY_NOTE]))
        for start, end, words in parts
    ]


def note_sections(
    title: str, body: str, headings: list[tuple[int, str, int, int]]
) -> list[Section]:
    """(start, end, token stream) of each part of the body; none for an empty body."""
    return section_streams(title, split_sections(body, headings))


def body_terms(parts: list[tuple[int, int, list[str]]]) -> list[str]:
    """The body's terms from its parts: the same as tokenizing the whole body, since the
    parts cover every paragraph and no token spans the blank line between two."""
    return [word for _start, _end, words in parts for word in words]
