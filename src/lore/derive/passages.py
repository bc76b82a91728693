"""What a note sends to the embedding model: its summary text, its tag text and, for a long
note, its passages.

A note that fits the model's input (e5: 512 tokens) is one passage, and its summary text is
that same passage (one vector, not two). A longer note is cut at its headings, then at
blank lines, then at sentence ends, into passages that fit: a paragraph of substance is a
passage of its own, short ones are grouped until the group is a third of the budget. Each
passage is embedded with the note title and its heading in front, so it can be found on
its own. Token counts are estimated (CJK characters x 0.8, Latin words x 1.7, measured on
e5's tokenizer, with margin), so no model is needed to plan. The summary text of a long
note is its title, the head of its long summary and the start of its last paragraph, cut
to about 300 tokens: what the note is about, at the price of one short passage.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .tokenize import _CJK_CLASS, cjk_count

PASSAGE_VERSION = "3"
PASSAGE_TOKENS = 460  # content budget under e5's 512, leaving room for title and prefix
_PARA = re.compile(r"\n[ \t]*\n")
_SENTENCE = re.compile(r"(?<=[。！？!?；;])|(?<=[.!?])\s+")
_NON_CJK_WORD = re.compile(f"[^\\W_{_CJK_CLASS}]+")


@dataclass(frozen=True)
class NoteText:
    kind: str  # summary | tags | passage
    seq: int
    start: int  # span in the body for passages; 0, 0 otherwise
    end: int
    heading: str | None
    text: str

    @property
    def hash(self) -> str:
        return text_hash(self.text)

    @property
    def space(self) -> str:
        return "tags" if self.kind == "tags" else "doc"


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def estimate_tokens(text: str) -> int:
    cjk = cjk_count(text)
    latin = len(_NON_CJK_WORD.findall(text))
    return int(cjk * 0.8 + latin * 1.7) + 2


def _pieces(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Cut body[start:end] into spans that fit, at sentence ends, else by length."""
    if estimate_tokens(text[start:end]) <= budget:
        return [(start, end)]
    spans: list[tuple[int, int]] = []
    cursor = start
    for match in _SENTENCE.finditer(text, start, end):
        cut = match.end()
        if cut > cursor:
            spans.append((cursor, cut))
            cursor = cut
    if cursor < end:
        spans.append((cursor, end))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if estimate_tokens(text[s:e]) <= budget:
            out.append((s, e))
            continue
        step = max(50, int((e - s) * budget / max(estimate_tokens(text[s:e]), 1)))
        i = s
        while i < e:  # by length, each cut moved back to white space when there is some
            j = min(i + step, e)
            if j < e:
                space = max(text.rfind(c, i + 1, j) for c in " \n\t")
                j = space if space > i else j
            out.append((i, j))
            i = j
    return out


def split_passages(
    body: str, headings: list[tuple[int, str, int, int]], budget: int = PASSAGE_TOKENS
) -> list[tuple[int, int, str | None]]:
    """(start, end, heading) spans covering the body's text, each within `budget` tokens."""
    bounds = [0] + [h[2] for h in headings if 0 < h[2] < len(body)] + [len(body)]
    names: dict[int, str | None] = {0: None}
    for h in headings:
        names[h[2]] = h[1]
    result: list[tuple[int, int, str | None]] = []
    for sec_start, sec_end in zip(bounds, bounds[1:], strict=False):
        heading = names.get(sec_start)
        if heading is None and result:
            heading = result[-1][2]
        paragraphs: list[tuple[int, int]] = []
        cursor = sec_start
        for match in _PARA.finditer(body, sec_start, sec_end):
            paragraphs.append((cursor, match.start()))
            cursor = match.end()
        paragraphs.append((cursor, sec_end))
        pieces = [
            piece
            for s, e in paragraphs
            if body[s:e].strip()
            for piece in _pieces(body, s, e, budget)
        ]
        group: tuple[int, int] | None = None
        for s, e in pieces:
            small = group is not None and estimate_tokens(body[group[0] : group[1]]) < budget // 3
            if group is not None and small and estimate_tokens(body[group[0] : e]) <= budget:
                group = (group[0], e)
                continue
            if group is not None:
                result.append((group[0], group[1], heading))
            group = (s, e)
        if group is not None:
            result.append((group[0], group[1], heading))
    return result


SUMMARY_HEAD_TOKENS = 220
SUMMARY_TAIL_TOKENS = 80


def _cut(text: str, tokens: int) -> str:
    """The head of `text` that fits `tokens` (estimated), cut at a space when near one."""
    if estimate_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # longest prefix within budget
        mid = (low + high + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            low = mid
        else:
            high = mid - 1
    cut = text.rfind(" ", max(0, low - 30), low)
    return text[: cut if cut > 0 else low].rstrip()


def note_texts(
    title: str,
    body: str,
    headings: list[tuple[int, str, int, int]],
    summary: str,
    tags: list[str],
    llm_summary: str | None = None,
    budget: int = PASSAGE_TOKENS,
) -> list[NoteText]:
    """Every text of one note to embed, in a fixed order (deterministic). `llm_summary`:
    the LLM's summary and claims, one more text of a note longer than one passage."""
    texts: list[NoteText] = []
    spans = split_passages(body, headings, budget) if body.strip() else []
    head = title.strip()
    for seq, (start, end, heading) in enumerate(spans):
        label = f"{head}: {heading}" if heading and heading != head else head
        texts.append(
            NoteText("passage", seq, start, end, heading, f"{label}\n{body[start:end].strip()}")
        )
    if len(texts) == 1:
        only = texts[0]
        texts.append(NoteText("summary", 0, 0, 0, only.heading, only.text))
    else:
        head_part, _, tail_part = summary.strip().partition("\n…\n")
        short = _cut(head_part, SUMMARY_HEAD_TOKENS)
        if tail_part:
            short = f"{short}\n…\n{_cut(tail_part, SUMMARY_TAIL_TOKENS)}"
        texts.append(NoteText("summary", 0, 0, 0, None, f"{head}\n{short}".strip()))
        if llm_summary and llm_summary.strip():
            text = f"{head}\n{_cut(llm_summary.strip(), SUMMARY_HEAD_TOKENS)}".strip()
            texts.append(NoteText("llm_summary", 0, 0, 0, None, text))
    if tags:
        texts.append(NoteText("tags", 0, 0, 0, None, ", ".join(tags)))
    return texts
