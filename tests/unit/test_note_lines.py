"""A note's body is read line by line once (lore.ingest.parse.ParsedNote.lines) and every
later pass over it takes those lines: each must find what reading the text itself finds."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lore.derive.summary import long_summary
from lore.ingest.markdown import date_in_text, iter_lines
from lore.ingest.parse import parse_note

# Pieces that open and close fences and HTML blocks, blank lines, white space a line may
# start with (a form feed and U+3000 are stripped as text is, but are not a fence's indent).
_PIECES = st.sampled_from(
    [
        "```", "~~~", "````", "``` x", "`", "<div>", "</div>", "<pre>", "</pre>", "<br/>",
        " ", "    ", "\t", "\r", "\n", "\n\n", "\x0c", "\u3000", "\x85", "# ", "## H", "- ",
        "> ", "1. ", "word", "词语", "date: 2024-01-02", "2023年5月6日", "[[link]]", "#tag",
    ]
)  # fmt: skip
_TEXT = st.lists(_PIECES, max_size=60).map("".join)


@settings(max_examples=400)
@given(text=_TEXT, head=st.integers(min_value=1, max_value=80))
@example(text="\x0c```\nhead\n\ntail\n", head=4)  # a fence only once the text is stripped
@example(text="\n  ```\ncode\n```\n\nlast words  \n\n", head=4)
def test_the_summary_from_the_lines_is_the_summary_from_the_text(text: str, head: int) -> None:
    lines = list(iter_lines(text, 7))
    assert long_summary(text, head, lines=lines) == long_summary(text, head)


@settings(max_examples=200)
@given(text=_TEXT)
def test_a_parsed_note_holds_its_body_lines_and_dates_by_them(text: str) -> None:
    for note_text in (text, f"---\ntitle: t\n---\n{text}"):
        note = parse_note(note_text, "x.md")
        assert note.lines == list(iter_lines(note.body, note.body_line))
        assert date_in_text(note.body, note.lines) == date_in_text(note.body)
