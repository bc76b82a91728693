"""Query planning: any text becomes a safe FTS5 query; CJK words become character phrases."""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from conftest import build_vault
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lore
from lore.derive.tokenize import OPTION_SIGN
from lore.derive.tokenize import terms as terms_of
from lore.retrieve.query import _EN_STOP, BACKUP_SHARE, MAX_QUERY_CHARS, MAX_TERMS, plan
from lore.store.sqlite_search import fts_match

VAULT_FILES = {
    "rules/客户去重规则 v2.md": (
        "---\ntitle: 客户去重规则 v2\ntags: [rules]\n---\n手机号去重，JIRA-1234。\n"
    ),
    "reading/rrf.md": "# Reciprocal rank fusion\nNEAR AND OR NOT are just words here. v1 v2.\n",
    "emoji.md": "😀 party 🎉 and 我记得 something\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[lore.Vault, apsw.Connection]]:
    root = build_vault(tmp_path_factory.mktemp("query") / "vault", VAULT_FILES)
    vault = lore.open(root)
    vault.sync()
    con = apsw.Connection(str(vault.db_path), flags=apsw.SQLITE_OPEN_READONLY)
    yield vault, con
    con.close()
    vault.close()


FTS_NOISE = [
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(",
    "and",
    '"',
    "'",
    "“",
    "”",
    "「",
    "」",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "*",
    "^",
    ":",
    "title:",
    "body:",
    "-",
    "+",
    ",",
    "\\",
    "😀",
    "\u200f",
    "\x00",
    " ",
    "\n",
    "去重",
    "我记得",
    "v1",
    "JIRA-1234",
    "rank",
]

queries = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(st.sampled_from(FTS_NOISE), st.text(max_size=5)), max_size=25).map("".join),
)

NASTY = [
    "",
    " ",
    '"',
    '""',
    '"unclosed',
    "NEAR(rank fusion, 2)",
    "title:rank",
    "rank*",
    "^rank",
    "rank AND OR NOT",
    "(((",
    "- + * ^",
    "😀🎉",
    "x" * 10_000,
    "去重" * 5_000,
    "rank " * 2_000,
    "“去重”「规则」",
]


def _run(con: apsw.Connection, fts_query: str) -> list[int]:
    return [int(r) for (r,) in con.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (fts_query,))]


@settings(max_examples=300)
@given(queries)
def test_any_string_plans_a_query_fts5_accepts(
    index: tuple[lore.Vault, apsw.Connection], text: str
) -> None:
    _vault, con = index
    query_plan = plan(text)
    found = _run(con, fts_match(query_plan.text_query))  # must not raise
    if query_plan.empty:  # the empty phrase (maybe NOT the excluded): matches nothing
        assert found == []
    # The query that ranks weighs terms differently but matches the very same notes.
    assert sorted(_run(con, fts_match(query_plan.text_query, scored=True))) == sorted(found)


@pytest.mark.parametrize("text", NASTY, ids=lambda t: repr(t[:20]))
def test_nasty_strings_plan_queries_fts5_accepts(
    index: tuple[lore.Vault, apsw.Connection], text: str
) -> None:
    _vault, con = index
    query_plan = plan(text)
    if not query_plan.empty:
        _run(con, fts_match(query_plan.text_query))
    assert len(query_plan.terms) <= MAX_TERMS


@settings(max_examples=100)
@given(queries)
@example("")
@example("x" * MAX_QUERY_CHARS)
@example("客户" * (MAX_QUERY_CHARS // 2))
@example("x" * (MAX_QUERY_CHARS + 1))
def test_search_accepts_any_string(index: tuple[lore.Vault, apsw.Connection], text: str) -> None:
    """Any string up to MAX_QUERY_CHARS is searched; a longer one is refused in one line,
    by the library, so the Python API has the cap the CLI and MCP have."""
    vault, _con = index
    if len(text) > MAX_QUERY_CHARS:
        with pytest.raises(lore.QueryError, match=f"; at most {MAX_QUERY_CHARS:,} "):
            vault.search(text)
        return
    result = vault.search(text)
    assert result.query == text
    assert bool(result) or result.reason


@pytest.mark.parametrize("text", ["", "   ", "!!! ???"])
def test_empty_plan_fts_query_is_still_a_valid_query(
    index: tuple[lore.Vault, apsw.Connection], text: str
) -> None:
    _vault, con = index
    assert _run(con, fts_match(plan(text).text_query)) == []


def test_the_characters_of_a_word_only_back_it_up() -> None:
    query_plan = plan("journalctl 按时间段过滤日志")
    backup = {t.text for t in query_plan.backup_chars}
    # 按 is in no word of the query: it counts in full, as every word does (过 is a
    # function character, never searched alone).
    assert backup == set("时间段滤日志")
    ranking = fts_match(query_plan.text_query, scored=True).split(" OR ")
    for term in query_plan.terms:
        share = 1 if term.text in backup else BACKUP_SHARE
        assert ranking.count('"' + " ".join(term.tokens) + '"') == share, term.text
    # A query without dictionary words ranks by its plain query.
    english = plan("journalctl since boot")
    assert not english.backup_chars
    assert fts_match(english.text_query, scored=True) == fts_match(english.text_query)


def test_two_char_cjk_word_plans_a_character_phrase() -> None:
    query_plan = plan("去重")
    assert ("去", "重") in [t.tokens for t in query_plan.terms]
    assert '"去 重"' in fts_match(query_plan.text_query).split(" OR ")


def test_joined_latin_pieces_plan_one_exact_phrase() -> None:
    assert fts_match(plan("JIRA-1234").text_query) == '"jira 1234"'
    assert fts_match(plan("jira-1234").text_query) == '"jira 1234"'
    assert fts_match(plan("2026-09").text_query) == '"2026 09"'
    assert fts_match(plan("v1.2").text_query) == '"v1 2"'


def test_full_width_query_plans_the_same_phrase() -> None:
    assert fts_match(plan("ＪＩＲＡ－１２３４").text_query) == fts_match(
        plan("JIRA-1234").text_query
    )


def test_case_does_not_change_the_plan() -> None:
    assert fts_match(plan("Reciprocal RANK Fusion").text_query) == fts_match(
        plan("reciprocal rank fusion").text_query
    )


def test_versions_stay_distinct_terms() -> None:
    assert fts_match(plan("v1").text_query) == '"v1"'
    assert fts_match(plan("v2").text_query) == '"v2"'


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("我记得去重规则", "我记得"),
        ("帮我找找去重规则来着", "帮我找找来着"),
        ("那个GMV到底算不算退款", "那个到底"),
    ],
)
def test_spoken_filler_is_removed(text: str, dropped: str) -> None:
    tokens = {tok for term in plan(text).terms for tok in term.tokens}
    assert not tokens & set(dropped), plan(text).terms
    assert {"去", "重"} <= tokens or "gmv" in tokens


def test_filler_only_query_has_no_terms_left() -> None:
    assert plan("我记得").empty


def test_english_stop_words_dropped_unless_nothing_else() -> None:
    assert fts_match(plan("the retention of users").text_query) == '"retent" OR "user"'
    assert fts_match(plan("the").text_query) == '"the"'


def test_quoted_text_is_one_phrase() -> None:
    query_plan = plan('"rank fusion" extra')
    assert query_plan.terms[0].tokens == ("rank", "fusion")
    assert query_plan.terms[0].kind == "phrase"
    assert ("extra",) in [t.tokens for t in query_plan.terms]
    assert plan("「去重规则」").terms[0].tokens == ("去", "重", "规", "则")


def test_duplicate_terms_are_planned_once() -> None:
    assert fts_match(plan("rank rank RANK").text_query) == '"rank"'


def test_term_count_is_capped() -> None:
    text = " ".join(f"w{i}x" for i in range(200))
    assert len(plan(text).terms) == MAX_TERMS


def test_plan_runs_against_the_index(index: tuple[lore.Vault, apsw.Connection]) -> None:
    vault, con = index
    [rules_id] = [
        int(i) for (i,) in vault.store.query("SELECT id FROM notes WHERE path LIKE 'rules/%'")
    ]
    assert _run(con, '"去 重"') == [rules_id]
    assert rules_id in _run(con, fts_match(plan("去重").text_query))
    assert _run(con, fts_match(plan("JIRA-1234").text_query)) == [rules_id]
    assert _run(con, fts_match(plan("JIRA-1243").text_query)) == []


def test_query_text_is_capped_but_still_searchable(tmp_path: Path) -> None:
    query_plan = plan("rank " + "x" * 100_000)
    assert ("rank",) in [t.tokens for t in query_plan.terms]


def test_short_options_are_searched_and_stop_words_said() -> None:
    query_plan = plan("SSH 的 -t 和 -T 选项")
    assert [t.text for t in query_plan.terms][:3] == ["ssh", "−t", "选项"]
    assert not query_plan.excluded
    assert set(query_plan.left_out) == {"的", "和"}  # listed by --explain, not silent


@pytest.mark.parametrize(
    ("text", "terms", "excluded"),
    [
        ("python -django", ["python"], ["django"]),
        ("笔记 -草稿", ["笔记", "笔", "记"], ["草稿"]),
        ("rm -rf", ["rm", "−rf", "rf"], []),
        ("kill -9", ["kill", "−9", "9"], []),
        ("git push --force", ["git", "push", "−−force", "forc"], []),
        ('find "-name"', ["−name name", "find"], []),  # a long option, searched in quotes
    ],
)
def test_minus_excludes_a_word_and_searches_an_option(
    text: str, terms: list[str], excluded: list[str]
) -> None:
    query_plan = plan(text)
    assert [t.text for t in query_plan.terms] == terms
    assert [t.text for t in query_plan.excluded] == excluded


_WORDS = st.text(st.sampled_from(string.ascii_lowercase), min_size=3, max_size=10)


@settings(max_examples=300)
@given(_WORDS.filter(lambda w: w not in _EN_STOP), _WORDS, st.booleans())
def test_minus_word_excludes_it_and_a_short_flag_is_searched(
    base: str, word: str, upper: bool
) -> None:
    """The rule (docs/search.md): `-word` of three letters or more excludes the word; a
    flag of one or two characters (`-t`, `-rf`) or after two dashes is searched."""
    excluded = plan(f"{base} -{word}")
    assert [t.tokens for t in excluded.excluded] == [tuple(terms_of(word))]
    assert all(t.tokens != tuple(terms_of(word)) for t in excluded.terms) or word == base
    flag = word[:2].upper() if upper else word[:2]
    for option in (f"-{flag[:1]}", f"-{flag}", f"--{word}"):
        searched = plan(f"{base} {option}")
        assert not searched.excluded, option
        name = option.lstrip("-")
        wanted = OPTION_SIGN * (len(option) - len(name)) + name.casefold()
        assert (wanted,) in [t.tokens for t in searched.terms], option


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(sorted(_EN_STOP)),
            _WORDS,
            st.sampled_from(["的", "和", "为什么", "怎么", "我记得", "去重", "规则"]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_no_word_of_a_query_vanishes_silently(words: list[str]) -> None:
    """Each word is searched, or listed as left out (a stop word, filler)."""
    query_plan = plan(" ".join(words))
    searched = {tok for t in query_plan.terms for tok in t.tokens}
    left_out = {tok for text in query_plan.left_out for tok in terms_of(text)}
    for word in words:
        assert set(terms_of(word)) <= searched | left_out, (word, query_plan)
