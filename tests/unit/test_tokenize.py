"""The token stream: CJK per character, NFKC + case folding, stemming, offsets into the original."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lore.derive import tokenize as tokenize_module
from lore.derive.fold import ALT_SEPARATOR, fold_char
from lore.derive.tokenize import (
    OPTION_SIGN,
    index_text,
    is_cjk_char,
    normalize_word,
    terms,
    token_spans,
    tokenize,
    wanted_spans,
)

SPECIALS = [
    "😀",
    "👩\u200d💻",  # ZWJ sequence
    "\u200f",  # RIGHT-TO-LEFT MARK
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\u200b",  # ZERO WIDTH SPACE
    "\x00",
    "\ufeff",
    "e\u0301",  # combining accent
    "שלום",
    "مرحبا",
    "ＪＩＲＡ－１２３４",
    "客户去重规则",
    "ｶﾀｶﾅ",
    "½",
    "ﬁ",
    "İ",
    "ß",
    "v1.2",
    "foo_bar",
    "\r\n",
    "\t",
]

any_text = st.lists(
    st.one_of(
        st.text(st.characters(exclude_categories=("Cs",)), max_size=12),  # surrogate-free
        st.sampled_from(SPECIALS),
    ),
    max_size=20,
).map("".join)


def test_cjk_characters_are_single_tokens_with_their_offsets() -> None:
    tokens = tokenize("客户去重规则")
    assert [t.term for t in tokens] == list("客户去重规则")
    assert [(t.start, t.end) for t in tokens] == [(i, i + 1) for i in range(6)]
    assert all(t.is_cjk for t in tokens)


def test_cjk_run_mixed_with_latin_splits_at_script_boundaries() -> None:
    assert terms("客户ID去重v2规则") == ["客", "户", "id", "去", "重", "v2", "规", "则"]
    assert terms("ひらがなカタカナ") == list("ひらがなカタカナ")


def test_nfkc_width_folding() -> None:
    assert terms("ＪＩＲＡ－１２３４") == terms("JIRA-1234") == ["jira", "1234"]
    assert terms("ﬁle") == terms("file")
    assert terms("２０２６年") == terms("2026年")


def test_halfwidth_katakana_folds_to_the_same_tokens_as_fullwidth() -> None:
    assert terms("ｶﾀｶﾅ") == terms("カタカナ") == ["カ", "タ", "カ", "ナ"]


def test_case_folding_and_diacritics() -> None:
    assert terms("Retention RETENTION retention") == [terms("retention")[0]] * 3
    assert terms("Café") == terms("cafe")
    assert terms("STRASSE") == terms("straße")


@pytest.mark.parametrize(
    ("words", "stem"),
    [
        ("indexing indexed indexes index", "index"),
        ("running runs", "run"),
        ("connection connected connecting", "connect"),
    ],
)
def test_plain_english_words_are_stemmed(words: str, stem: str) -> None:
    assert set(terms(words)) == {stem}


def test_versions_and_mixed_words_are_kept_exact() -> None:
    assert terms("v1") == ["v1"]
    assert terms("v2") == ["v2"]
    assert terms("v1") != terms("v2")
    assert terms("H2O") == ["h2o"]
    assert terms("v1.2") == ["v1", "2"]
    assert terms("2026-09-15") == ["2026", "09", "15"]


def test_underscore_and_punctuation_separate_words() -> None:
    assert terms("foo_bar") == ["foo", "bar"]
    assert terms("a+b=c; (d)!") == ["a", "b", "c", "d"]


def test_very_long_words_are_cut_not_dropped() -> None:
    blob = "x" * 500
    assert terms(blob) == ["x" * 64]


def test_index_text_is_the_space_joined_terms() -> None:
    text = "客户去重 Rules v2, JIRA-1234"
    assert index_text(text) == " ".join(terms(text))


def test_empty_and_symbol_only_text_has_no_tokens() -> None:
    assert tokenize("") == []
    assert tokenize("  \n\t!?—…😀\x00") == []


@settings(max_examples=400)
@given(any_text)
@example("")
@example("\x00\u200f\u202e😀")
@example("ＪＩＲＡ－１２３４ 客户去重规则 Café ½ ﬁ İ")
def test_tokens_are_clean(text: str) -> None:
    for token in tokenize(text):
        assert token.term, token
        assert not any(c.isspace() for c in token.term), token
        assert not any(c in string.punctuation for c in token.term), token
        assert 0 <= token.start < token.end <= len(text)


@settings(max_examples=400)
@given(any_text)
@example("ｶﾀｶﾅ ½ ﬁle Straße e\u0301 ＪＩＲＡ－１２３４")
def test_offsets_slice_the_original_text_to_the_term(text: str) -> None:
    previous_start = -1
    for token in tokenize(text):
        span = text[token.start : token.end]
        if len(span) == 1 and is_cjk_char(span):
            assert fold_char(span) == token.term  # NFKC, then the Simplified form
        else:
            # The span's normalised form holds the term (NFKC may split one surface word,
            # e.g. "½" -> "1", "2"; stemming maps the whole span to the term).
            assert token.term in normalize_word(span), (token, span)
        assert token.start >= previous_start  # in text order
        previous_start = token.start


# `terms()` is the indexing fast path; it must produce exactly the terms of `tokenize()`,
# which the query planner and the snippet matcher use.


@settings(max_examples=400)
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
            st.sampled_from(SPECIALS),
        ),
        max_size=20,
    ).map("".join)
)
@example("客户去重规则 v2, JIRA-1234 ＪＩＲＡ ½ Straße ｶﾀｶﾅ 2026年")
def test_terms_fast_path_equals_tokenize(text: str) -> None:
    assert terms(text) == [token.term for token in tokenize(text)]


# Text without CJK characters takes a path of its own (its words in one findall): where
# the branches meet, densely.
_NO_CJK_SYMBOLS = "-.#+&\\_ aZ9é½ﬁЯ\n"


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from(_NO_CJK_SYMBOLS), max_size=30) | any_text)
@example("C++ C#x .NET x.net -t --dry-run a.b .5 \\1 R&D & && é-x ½ Я-x _-x")
def test_terms_of_text_without_cjk_are_its_tokens(text: str) -> None:
    for alternatives in (False, True):
        spans = token_spans(text, with_alternatives=alternatives)
        assert terms(text, with_alternatives=alternatives) == [t for t, _s, _e in spans]


@pytest.mark.parametrize("text", ["ジョン・スミス", "⼀二三", "か゛"])
def test_terms_fast_path_equals_tokenize_on_cjk_symbols(text: str) -> None:
    assert terms(text) == [token.term for token in tokenize(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ssh -t host", ["ssh", "−t", "t", "host"]),
        ("ssh -T host", ["ssh", "−t", "t", "host"]),  # case-folded like every word
        ("`-rf`", ["−rf", "rf"]),
        ("kill -9", ["kill", "−9", "9"]),
        ("git push --force", ["git", "push", "−−force", "forc"]),
        ("--dry-run", ["−−dryrun", "dry", "run"]),
        ("用-t参数", ["用", "−t", "t", "参", "数"]),
        # A dash inside a word, a date, a list bullet or a rule is no option.
        ("well-known JIRA-1234 2026-09-22", ["well", "known", "jira", "1234", "2026", "09", "22"]),
        ("- item --- a - b", ["item", "a", "b"]),
    ],
)
def test_command_line_options_are_tokens_of_their_own(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_an_option_never_matches_a_word() -> None:
    # "-board" is the option −board and the word board, never the word "dashboard".
    assert set(terms("-board")) == {"−board", "board"}
    assert OPTION_SIGN not in "".join(terms("dashboard minus − sign"))


@settings(max_examples=300)
@given(
    st.text(st.sampled_from(string.ascii_letters + string.digits), min_size=1, max_size=8),
    st.sampled_from(["-", "--"]),
    any_text,
    any_text,
)
def test_an_option_after_white_space_is_its_own_token(
    name: str, dashes: str, before: str, after: str
) -> None:
    option = OPTION_SIGN * len(dashes) + name.casefold()
    assert option in terms(f"{before} {dashes}{name} {after}")
    # Joined to a word before it, the dash is a hyphen: no option.
    assert option not in terms(f"x{dashes}{name}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # sed's whole match and its groups: the symbols are what the note is about.
        ("sed 's/x/[&]/' 与 \\1, \\2", ["sed", "s", "x", "＆", "与", "⧵1", "⧵2"]),
        ("cmd1 && cmd2 &", ["cmd1", "cmd2", "＆"]),  # && is punctuation between commands
        ("\\n and \\d+", ["⧵n", "and", "⧵d"]),
        # Inside a word, in an entity, a LaTeX command or after an escaped backslash: as before.
        ("R&D &amp; \\section \\\\1 &&&", ["r", "d", "amp", "section", "1"]),
    ],
)
def test_sed_and_shell_symbols_are_tokens_of_their_own(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


@settings(max_examples=300)
@given(st.sampled_from(string.ascii_letters + string.digits), any_text, any_text)
def test_an_escape_or_a_lone_ampersand_after_white_space_is_a_token(
    char: str, before: str, after: str
) -> None:
    assert f"⧵{char.casefold()}" in terms(f"{before} \\{char} {after}")
    assert "＆" in terms(f"{before} & {after}")
    # Glued to letters, an ampersand is part of a name (R&D): never the token.
    assert "＆" not in terms(f"x&{char}")


# `wanted_spans` is the snippet matcher's fast path: the tokens of a few terms, with their
# positions in the stream, exactly as the whole stream has them (alternatives included).
MIXED = [
    "軟體工程",  # Traditional: alternatives (软件工程)
    "記憶體與資訊",
    "數據庫",
    "东京タワー",  # kana: Japanese, no alternatives
    "한국어 문서",
    "ｶﾀｶﾅ",  # half-width: NFKC changes it
    "⼀二三",  # a Kangxi radical: NFKC changes it
    "豈更",  # compatibility ideographs
    "客户去重规则",
    "C++ c# .NET -t --dry-run \\1 &",
    "😀👩\u200d💻",
    "history Histories historical",
]
mixed_text = st.lists(
    st.one_of(
        st.text(st.characters(exclude_categories=("Cs",)), max_size=8),
        st.sampled_from(SPECIALS + MIXED),
        st.sampled_from(MIXED).map(lambda s: s[: len(s) // 2]),
    ),
    max_size=16,
).map("".join)


@settings(max_examples=500)
@given(mixed_text, st.data(), st.booleans())
@example("軟體工程 記憶體", None, True)
@example("ｶﾀｶﾅ ⼀二三 豈 軟體", None, True)
def test_wanted_spans_are_the_stream_filtered(
    text: str, data: st.DataObject | None, with_alternatives: bool
) -> None:
    stream = token_spans(text, with_alternatives=with_alternatives)
    own = sorted({term for term, _start, _end in stream})
    if data is None:  # an example: every term wanted
        wanted = frozenset(own) | {ALT_SEPARATOR}
    else:
        picked = data.draw(st.lists(st.sampled_from(own), max_size=6) if own else st.just([]))
        extra = data.draw(st.lists(st.sampled_from(["软", "件", "内", "存", "x", ALT_SEPARATOR])))
        wanted = frozenset(picked + extra)
    expected = [
        (i, term, start, end) for i, (term, start, end) in enumerate(stream) if term in wanted
    ]
    assert wanted_spans(text, wanted, with_alternatives=with_alternatives) == expected


# The pieces the tokenizer's one regex cuts, as it was first written (each lookbehind before
# its character): the pattern in use must cut every text the same way.
_CJK = tokenize_module._CJK_CLASS
_W = tokenize_module._WORD
FIRST_PATTERN = re.compile(
    f"[{_CJK}]+"
    f"|(?<!{_W})(?<![-_.])--?[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
    r"|(?<!\\)\\[A-Za-z0-9](?![A-Za-z0-9])"
    f"|(?<![\\w&])&(?![\\w&])"
    f"|\\.(?<!{_W}\\.)(?<!\\.\\.)[^\\W\\d_{_CJK}]{_W}*"
    f"|{_W}+(?:(?:\\+\\+|#)(?!{_W}|[#+]))?"
)
symbol_text = st.lists(
    st.one_of(
        st.sampled_from(list("-_.\\&#+ ") + ["--", "++", "..", "\\\\", "&&", "٣", "²", "_x"]),
        st.sampled_from(SPECIALS + MIXED),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=4),
    ),
    max_size=24,
).map("".join)


@settings(max_examples=1000)
@given(symbol_text)
@example("a-b -t x--y .NET a.NET ..x .5 \\1 \\\\1 R&D & && C++ C# c#x ٣.x")
def test_the_pieces_are_those_of_the_first_pattern(text: str) -> None:
    got = [(m.start(), m.end()) for m in tokenize_module._pieces(text).finditer(text)]
    assert got == [(m.start(), m.end()) for m in FIRST_PATTERN.finditer(text)]
