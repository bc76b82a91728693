"""Pinyin of names (lore.derive.pinyin) and how a query word spells them
(lore.retrieve.pinyin): properties over names of common characters and heteronyms."""

from __future__ import annotations

from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from lore.derive.pinyin import SYLLABLES, decode_units, encode_units, keys, name_units
from lore.retrieve.pinyin import _full, _initials, match, may_spell, pinyin_words

# Common characters, heteronyms among them (重 行 乐 曾 长 还 了 的 得), none read with ü.
COMMON = "张三重庆行长乐曾还了得数据库客户去规则银东西南北"
names = st.text(st.sampled_from(COMMON), min_size=1, max_size=6)
short = st.text(st.sampled_from("重行乐曾长还"), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(names)
def test_units_survive_storage(name: str) -> None:
    units = name_units(name)
    assert decode_units(encode_units(units)) == units
    assert [u.literal for u in units] == list(name)  # one unit per character, as indexed


@settings(max_examples=150, deadline=None)
@given(names)
def test_a_name_is_a_key_in_full_pinyin_and_initials_and_spells_itself(name: str) -> None:
    units = name_units(name)
    found = keys(units)
    full = "".join(u.readings[0] for u in units)
    assert full in found
    if len(units) > 1:
        assert "".join(u.readings[0][0] for u in units) in found
    # The whole name typed as its pinyin covers the whole name.
    assert match([full], set(), 1, units, frozenset())[0] == 1.0


@settings(max_examples=100, deadline=None)
@given(short)
def test_every_reading_combination_of_a_short_name_is_a_key(name: str) -> None:
    units = name_units(name)
    found = keys(units)
    for readings in product(*(u.readings for u in units)):
        assert "".join(readings) in found
        assert match(list(readings), set(), len(readings), units, frozenset())[0] == 1.0


def test_query_words_drop_tones_and_case() -> None:
    assert pinyin_words("Zhāng Sān zhang1san1 LÜ") == ["zhang", "san", "zhangsan", "lv"]


def test_a_function_word_is_spelled_but_never_counted() -> None:
    units = name_units("我的笔记")
    # "wobiji" skips 的: the three characters that count are covered.
    share, spelled = match(["wo", "biji"], set(), 2, units, frozenset("的"))
    assert share == 1.0 and spelled == ("wo", "biji")


def test_every_reading_is_a_syllable() -> None:
    # pypinyin's readings without tones, as name_units writes them (ü as v, and u for v):
    # may_spell relies on SYLLABLES holding every one a query word can type.
    from pypinyin import Style, pinyin_dict
    from pypinyin.phrases_dict import phrases_dict
    from pypinyin.style import convert

    marked = {r for v in pinyin_dict.pinyin_dict.values() for r in v.split(",")}
    marked |= {r for readings in phrases_dict.values() for one in readings for r in one}
    plain = {convert(r, Style.NORMAL, strict=True) for r in marked}
    plain |= {r.replace("v", "u") for r in plain}
    assert {r for r in plain if r.isascii()} == SYLLABLES


@settings(max_examples=300, deadline=None)
@given(names, st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=1, max_size=12))
def test_a_word_may_spell_refuses_spells_nothing_and_begins_no_key(name: str, word: str) -> None:
    units = name_units(name)
    if may_spell(word):
        return
    assert match([word], set(), 1, units, frozenset()) == (0.0, ())
    assert not any(key.startswith(word) for key in keys(units))


@settings(max_examples=300, deadline=None)
@given(names, st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz"), min_size=1, max_size=8))
def test_a_word_spells_nothing_from_a_unit_no_reading_of_which_it_begins(
    name: str, word: str
) -> None:
    """What `match` relies on to skip such units."""
    units = name_units(f"x{name}")  # a Latin token, no readings, first
    for i, unit in enumerate(units):
        if word[0] not in {r[0] for r in unit.readings}:
            assert _full(word, units, i) == -1 and _initials(word, units, i) == -1


def test_spellings_and_their_beginnings_may_spell() -> None:
    for name in ("张三", "重庆银行", "客户去重规则", "数据库", "吕布"):
        for key in keys(name_units(name)):
            assert all(may_spell(key[:n]) for n in range(1, len(key) + 1)), key
    assert not may_spell("history") and not may_spell("university")
