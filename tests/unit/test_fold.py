"""Script folding (lore.derive.fold): properties of the character map and the token stream,
and the Taiwan / Hong Kong words that come as alternatives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lore.derive import fold as fold_module
from lore.derive import fold_data
from lore.derive.fold import ALT_SEPARATOR, fold, fold_char, has_traditional, is_japanese
from lore.derive.tokenize import cjk_runs, is_cjk_char, terms
from lore.retrieve.query import plan

# Simplified → one Traditional form, built from the same tables the index folds with: the
# inverse of the character map (the first Traditional character of each Simplified one).
_TO_TRAD: dict[str, str] = {}
for _t, _s in zip(fold_data.CHARS_FROM, fold_data.CHARS_TO, strict=True):
    _TO_TRAD.setdefault(_s, _t)

folded_pairs = st.sampled_from(sorted(_TO_TRAD.items()))
chinese = st.text(
    st.one_of(st.sampled_from(sorted(_TO_TRAD)), st.sampled_from("的了是在我有和人这中大为上个")),
    min_size=1,
    max_size=12,
)
mixed = st.text(
    st.one_of(st.characters(codec="utf-8"), st.sampled_from(fold_data.CHARS_FROM)), max_size=30
)


def to_traditional(text: str) -> str:
    return "".join(_TO_TRAD.get(c, c) for c in text)


@settings(max_examples=200, deadline=None)
@given(mixed)
def test_folding_is_idempotent_and_keeps_the_length(text: str) -> None:
    once = fold(text)
    assert fold(once) == once
    assert len(once) == len(text)  # offsets into the original text stay valid


@settings(max_examples=200, deadline=None)
@given(chinese)
def test_a_text_and_its_character_conversion_give_the_same_token_stream(text: str) -> None:
    traditional = to_traditional(text)
    assert terms(traditional) == terms(text)
    # The index's stream: a Traditional run may add alternatives after the text, never
    # change the text's own tokens.
    own, indexed = terms(text), terms(traditional, with_alternatives=True)
    assert indexed[: len(own)] == own
    assert indexed[len(own) : len(own) + 1] in ([], [ALT_SEPARATOR])


@given(folded_pairs)
def test_every_traditional_character_folds_to_its_simplified_form(pair: tuple[str, str]) -> None:
    simplified, traditional = pair
    assert fold_char(traditional) == simplified
    assert fold_char(simplified) == simplified


def test_simplified_text_takes_no_alternatives() -> None:
    assert not has_traditional("软件工程和内存管理")
    assert ALT_SEPARATOR not in terms("软件工程和内存管理", with_alternatives=True)


def test_taiwan_words_yield_the_mainland_word_as_an_alternative() -> None:
    stream = terms("軟體工程與記憶體管理", with_alternatives=True)
    assert ALT_SEPARATOR in stream
    alts = "".join(stream[stream.index(ALT_SEPARATOR) :])
    assert "软件" in alts and "内存" in alts
    assert "".join(stream[: stream.index(ALT_SEPARATOR)]) == "软体工程与记忆体管理"


def test_a_traditional_query_asks_for_the_mainland_word_too() -> None:
    asked = {t.text for t in plan("軟體").terms}
    assert {"软体", "软件"} <= asked


def test_japanese_runs_take_no_chinese_words() -> None:
    assert is_japanese("東京の大学")
    assert not is_japanese("東京大學")
    stream = terms("ソフトウェアと記憶體", with_alternatives=True)
    assert ALT_SEPARATOR not in stream  # kana in the run: Japanese, folded, no alternatives


def test_every_word_and_every_folded_character_is_cjk() -> None:
    # So every word of the table lies inside one CJK run of the folded text: words can be
    # looked for run by run (fold._words_in).
    words = fold_module._tables().words
    chars = {*fold_data.CHARS_FROM, *fold_data.CHARS_TO, *"".join(words), *"".join(words.values())}
    assert all(is_cjk_char(c) for c in chars)


# Runs of the table's words, their parts and other text, to look for the words in.
word_text = st.lists(
    st.one_of(
        st.sampled_from(sorted(fold_module._tables().words)),
        st.sampled_from(sorted(fold_module._tables().words)).map(lambda w: w[:-1]),
        st.sampled_from(["工程", "的", "東京", "，", " ", "a", "軟", "體"]),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300)
@given(word_text)
def test_words_found_in_python_are_those_the_regex_finds(text: str) -> None:
    folded = text.translate(fold_module.char_table())
    pattern = fold_module._words_re()
    assert pattern is not None
    by_regex = [m.span() for m in pattern.finditer(folded)]
    looked_up = [
        span
        for start, run in cjk_runs(text)
        for span in fold_module._longest_words(folded, start, len(run))
    ]
    assert looked_up == by_regex
