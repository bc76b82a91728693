"""The parts of a note (lore.derive.sections): they hold exactly the body's tokens, in
order and within the budget, and follow the author's headings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lore.derive.sections import (
    SECTION_TOKENS,
    _windows,
    body_terms,
    note_sections,
    split_sections,
)
from lore.derive.tokenize import index_text, terms, token_spans
from lore.store.query import EVERY_NOTE

_LINE = st.lists(
    st.sampled_from([*"ab cd.+#中文字\t", "C++", " .NET", "é", "word "]), max_size=40
).map("".join)
_BODY = st.lists(st.one_of(_LINE, st.sampled_from(["", "## Heading", "   ", "\f"])), max_size=30)


def _headings(body: str) -> list[tuple[int, str, int, int]]:
    out = []
    offset = 0
    for line_no, line in enumerate(body.split("\n"), 1):
        if line.startswith("## "):
            out.append((2, line[3:], offset, line_no))
        offset += len(line) + 1
    return out


@given(_BODY, st.integers(min_value=3, max_value=50))
def test_the_parts_hold_the_body_s_tokens_in_order_within_the_budget(
    lines: list[str], budget: int
) -> None:
    body = "\n".join(lines)
    parts = split_sections(body, _headings(body), budget)
    # The body's stream is made from the parts: it must be the body's own tokens.
    assert body_terms(parts) == terms(body)
    previous_end = 0
    for start, end, words in parts:
        assert previous_end <= start < end <= len(body)
        assert 0 < len(words) <= budget
        assert terms(body[start:end]) == words
        previous_end = end


def test_a_heading_starts_a_part_unless_the_part_is_a_stub() -> None:
    intro = " ".join(["intro"] * 60)
    body = f"{intro}\n\n## Setup\n\nInstall it.\n\n## Usage\n\nRun it."
    parts = split_sections(body, _headings(body))
    assert [body[s:e].split("\n")[0] for s, e, _w in parts] == [intro, "## Setup"]
    # "## Setup" + "Install it." is a stub: "## Usage" runs on in the same part.
    assert parts[1][2] == ["setup", "instal", "it", "usag", "run", "it"]


def test_a_long_paragraph_is_cut_into_windows() -> None:
    body = " ".join(f"w{i}" for i in range(2 * SECTION_TOKENS + 10))
    parts = split_sections(body, [])
    assert [len(w) for _s, _e, w in parts] == [SECTION_TOKENS, SECTION_TOKENS, 10]


def test_every_part_is_read_with_the_title_and_ends_with_the_every_note_token() -> None:
    body = "Light theme colours.\n\n## Dark\n\n" + " ".join(["dark"] * 80)
    sections = note_sections("Default Theme Colors", body, _headings(body))
    assert len(sections) == 1 or all(
        tokens.startswith(index_text("Default Theme Colors") + " ") for _s, _e, tokens in sections
    )
    assert all(tokens.endswith(" " + EVERY_NOTE) for _s, _e, tokens in sections)
    assert note_sections("Empty", "  \n\n ", []) == []


def _windows_as_they_were(
    body: str, start: int, end: int, budget: int
) -> list[tuple[int, int, list[str]]]:
    """The windows of a long paragraph as lore cut them from token_spans, one token at a
    time (before issue 18): the windows must stay these."""
    words: list[tuple[int, int, list[str]]] = []  # (start, end, terms) per surface word
    for term, s, e in token_spans(body[start:end]):
        if words and words[-1][0] == start + s:
            words[-1][2].append(term)
        else:
            words.append((start + s, start + e, [term]))
    out: list[tuple[int, int, list[str]]] = []
    held: list[str] = []
    first = 0
    for w_start, w_end, w_terms in words:
        if not held or len(held) + len(w_terms) > budget:
            held, first = [], w_start
            out.append((first, w_end, held))
        held.extend(w_terms)
        out[-1] = (first, w_end, held)
    return out


_RUNS = st.lists(
    st.sampled_from(["中文字", "軟體", "字" * 7, "ab", " ", "C++", ".NET", "½½", "-x", "&", "é"]),
    max_size=60,
).map("".join)


@settings(max_examples=400)
@given(_RUNS, st.integers(min_value=0, max_value=9), st.integers(min_value=-1, max_value=12))
def test_long_paragraphs_are_cut_into_the_windows_they_were(
    text: str, lead: int, budget: int
) -> None:
    body = "x " * lead + text
    start = len("x " * lead)
    got = _windows(body, start, len(body), budget, terms(text))
    assert got == _windows_as_they_were(body, start, len(body), budget)
