"""A long phrase is counted in the notes' token streams on the server (issue 15) by the
cheapest exact form: a plain substring count when characters that are always a whole
token end it, a regular expression resuming after each occurrence when occurrences
cannot overlap, one testing every token when they can. Each form counts what FTS5 does;
and the union of a query's postings is found without a sort where it can be."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twin import Twin, make_twin

from lore.derive.tokenize import index_text
from lore.store import pg_bm25
from lore.store.pg_phrases import _ALONE, _counter
from lore.store.query import EVERY_NOTE, TextQuery

# Characters and words that make the forms differ: よ and り are also inside the token より
# (as NFKC writes ゟ), which a substring count would wrongly find "り 基" in.
VOCAB = ["基", "督", "教", "的", "り", "より", "jira", "1234", "a"]


def test_a_character_alone_is_never_inside_a_longer_token() -> None:
    """What the substring count relies on, for every code point next to a letter and a
    digit and for Traditional words (their mainland spellings follow as alternatives)."""
    chars = [chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = " ".join(f"{c}a{c}1{c}" for c in chars) + " 軟體 資料庫 網路 滑鼠 硬碟"
    inside = {x for token in index_text(text).split(" ") if len(token) > 1 for x in token}
    assert {"よ", "り", "一"} <= inside  # the check sees them (ゟ → より, ㊀ → 一)
    assert sorted(x for x in inside if _ALONE.fullmatch(x)) == []
    assert all(_ALONE.fullmatch(c) for c in "基督教软件ひらがなカタカナ")


# A phrase and a piece of the form it is counted by.
FORMS = [
    (("基", "督", "教"), "replace"),
    (("教", "的", "基", "督"), "replace"),
    (("基", "jira", "教"), "replace"),
    (("り", "基", "督"), "(?<= )"),  # り is also inside より
    (("jira", "1234"), "(?<= )"),
    (("基", "督", "基"), " (?="),  # "基 督 基 督 基" holds it twice
    (("a", "a"), " (?="),
]


@pytest.mark.parametrize(("phrase", "form"), FORMS)
def test_each_phrase_gets_its_form(phrase: tuple[str, ...], form: str) -> None:
    sql, pattern = _counter(phrase)
    assert form in sql + pattern


def test_each_form_counts_what_fts5_counts(tmp_path: Path, pg_url: str) -> None:
    twin = make_twin(tmp_path, pg_url)
    streams = [
        "基 督 教 基 督 教 的 基 督 基 督 基",
        "より 基 督 的 り 基 督 教 的 基 督",
        "jira 1234 jira 1234 1234 jira",
        "基 jira 教 基 jira 教 a a a",
        "教 的 基 督 教 的 基 督",
    ]
    twin.add(
        [
            (f"n{i}.md", (stream, "", stream, f"{stream} {EVERY_NOTE}"))
            for i, stream in enumerate(streams)
        ]
    )
    for phrase, _form in FORMS:
        assert twin.assert_same(TextQuery((phrase,))), phrase


@pytest.fixture
def corpus(tmp_path: Path, pg_url: str) -> Twin:
    """50 random notes over VOCAB: titles, summaries and bodies of 0-60 tokens."""
    rng = random.Random(15)

    def stream(n: int) -> str:
        return " ".join(rng.choice(VOCAB) for _ in range(n))

    twin = make_twin(tmp_path, pg_url)
    twin.add(
        [
            (f"n/{i:02d}.md", (stream(rng.randint(0, 5)), "", stream(rng.randint(0, 8)), body))
            for i in range(50)
            for body in [f"{stream(rng.randint(0, 60))} {EVERY_NOTE}".lstrip()]
        ]
    )
    return twin


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(phrase=st.lists(st.sampled_from(VOCAB), min_size=2, max_size=5).map(tuple))
def test_random_phrases_count_as_fts5(corpus: Twin, phrase: tuple[str, ...]) -> None:
    corpus.assert_same(TextQuery((phrase,)), limit=50)


@given(
    st.lists(
        st.lists(st.integers(0, 2**40), unique=True).map(sorted)
        | st.lists(st.integers(10**6, 10**6 + 50), unique=True),
        max_size=6,
    )
)
def test_the_slots_of_postings_hold_what_np_unique_gives(lists: list[list[int]]) -> None:
    """Both ways _slots places documents (a table over a narrow range, a sort over a wide
    one): each posting's slot holds its document, and the slots named hold the distinct
    documents in ascending order."""
    arrays = [np.array(values, dtype=np.int64) for values in lists]
    every = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    slots = pg_bm25._slots(arrays)
    assert len(slots.places) == len(arrays)
    for values, places in zip(arrays, slots.places, strict=True):
        assert slots.documents(places).tolist() == values.tolist()
    named = np.zeros(slots.size, dtype=bool)
    for places in slots.places:
        named[places] = True
    assert slots.documents(np.flatnonzero(named)).tolist() == np.unique(every).tolist()
