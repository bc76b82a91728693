"""The tokenizer's patterns, rewritten to name the CJK class fewer times (issue 12, cold
start), match exactly what the patterns of TOKENIZER_VERSION 8 matched: same pieces at the
same offsets, same CJK tests, same splits. The old patterns are copied here as they were."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lore.derive import tokenize as tk

C = tk._CJK_CLASS
_WORD = f"[^\\W_{C}]"
OLD_CJK_CHAR = re.compile(f"[{C}]")
OLD_CJK_RUN = re.compile(f"[{C}]+")
OLD_SPLIT = f"([{C}]+)"
OLD_RUN_OR_WORD = re.compile(
    f"[{C}]+"
    f"|-(?<!{_WORD}-)(?<![-_.]-)-?[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
    r"|\\(?<!\\\\)[A-Za-z0-9](?![A-Za-z0-9])"
    f"|&(?<![\\w&]&)(?![\\w&])"
    f"|\\.(?<!{_WORD}\\.)(?<!\\.\\.)(?!\\d){_WORD}+"
    f"|{_WORD}+(?:(?:\\+\\+|#)(?!{_WORD}|[#+]))?"
)

# Characters where the branches differ: the class's edges (in and just outside each
# range), the symbols the branches start or end with, Latin, digits, other scripts.
_EDGES = [
    chr(c)
    for lo, hi in re.findall(r"(.)(?:-(.))?", C)
    for c in {ord(lo), ord(hi or lo), ord(lo) - 1, ord(hi or lo) + 1}
    if c <= 0x10FFFF
]
_ALPHABET = [*_EDGES, *"-.#+&\\_ aZ09é½ﬁ·・ー々〆〻가Я😀\n\t", "\u3000", "\u30fb", "\u3099"]
_SYMBOLS = "-.#+&\\_ aZ9中ー"  # where the branches meet: a few characters, densely
texts = (
    st.text(alphabet=st.sampled_from(_SYMBOLS), max_size=12)
    | st.text(alphabet=st.sampled_from(_ALPHABET), max_size=40)
    | st.text(max_size=40)
)


@settings(max_examples=600)
@given(texts)
@example("C++ 中 C#中文 .NET中 中.net 中-t --dry-run a.b .5 \\1 R&D & &&")
@example("x-- -x 中-x _-x .-x a#b c++d e#")
@example(".NET# .net++ x.a# ..a .中a")
@example("a-x a.net ab-cd x..y 1.5 a-x-y v1.2-rc3 foo--bar C++-x a.-x a-.x é-x a-_x - .")
def test_the_run_or_word_pattern_matches_what_it_matched(text: str) -> None:
    new = [m.span() for m in tk._run_or_word().finditer(text)]
    assert new == [m.span() for m in OLD_RUN_OR_WORD.finditer(text)]


@settings(max_examples=600)
@given(texts)
@example("〇々〻ー中ｦ")
def test_one_cjk_pattern_answers_what_the_three_did(text: str) -> None:
    assert tk.has_cjk(text) == (OLD_CJK_CHAR.search(text) is not None)
    assert tk.is_cjk_char(text) == (OLD_CJK_CHAR.match(text) is not None)
    assert tk.cjk_count(text) == len(OLD_CJK_CHAR.findall(text))
    assert tk.split_cjk(text) == re.split(OLD_SPLIT, text)
    assert tk.cjk_runs(text) == [(m.start(), m.group()) for m in OLD_CJK_RUN.finditer(text)]


def test_the_run_or_word_pattern_cuts_this_repositorys_docs_as_it_did() -> None:
    root = Path(__file__).resolve().parents[2]
    files = [root / "README.md", root / "CHANGELOG.md", *sorted((root / "docs").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in files)
    assert len(text) > 10_000
    new = [m.span() for m in tk._run_or_word().finditer(text)]
    assert new == [m.span() for m in OLD_RUN_OR_WORD.finditer(text)]


@settings(max_examples=600)
@given(texts)
@example("C++ C#x .NET x.net -t --dry-run a.b .5 \\1 R&D & && é-x ½ Я-x 가.x _-x")
def test_text_without_cjk_is_cut_as_the_cjk_pattern_cuts_it(text: str) -> None:
    # The cheap pattern a text without CJK characters gets (no CJK class to compile).
    plain = "".join(c for c in text if not tk.is_cjk_char(c))
    cheap = [m.span() for m in tk._NO_CJK_RUN_OR_WORD.finditer(plain)]
    assert cheap == [m.span() for m in tk._run_or_word().finditer(plain)]
    assert tk._pieces(plain) is tk._NO_CJK_RUN_OR_WORD
    assert tk._pieces(text) is (tk._run_or_word() if tk.has_cjk(text) else tk._NO_CJK_RUN_OR_WORD)
