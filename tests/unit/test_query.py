"""Query planning: any text becomes a safe FTS5 query; CJK words become character phrases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from conftest import build_vault
from hypothesis import example, given, settings
from hypothesis import strategies as st

import lore
from lore.retrieve.query import BACKUP_SHARE, MAX_QUERY_CHARS, MAX_TERMS, plan

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
    found = _run(con, query_plan.fts_query)  # must not raise
    if query_plan.empty:  # the empty phrase (maybe NOT the excluded): matches nothing
        assert found == []
    # The query that ranks weighs terms differently but matches the very same notes.
    assert sorted(_run(con, query_plan.ranking_query)) == sorted(found)


@pytest.mark.parametrize("text", NASTY, ids=lambda t: repr(t[:20]))
def test_nasty_strings_plan_queries_fts5_accepts(
    index: tuple[lore.Vault, apsw.Connection], text: str
) -> None:
    _vault, con = index
    query_plan = plan(text)
    if not query_plan.empty:
        _run(con, query_plan.fts_query)
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
    assert _run(con, plan(text).fts_query) == []


def test_the_characters_of_a_word_only_back_it_up() -> None:
    query_plan = plan("journalctl 按时间段过滤日志")
    backup = {t.text for t in query_plan.backup_chars}
    # 按 is in no word of the query: it counts in full, as every word does (过 is a
    # function character, never searched alone).
    assert backup == set("时间段滤日志")
    ranking = query_plan.ranking_query.split(" OR ")
    for term in query_plan.terms:
        share = 1 if term.text in backup else BACKUP_SHARE
        assert ranking.count(term.fts()) == share, term.text
    # A query without dictionary words ranks by its plain query.
    english = plan("journalctl since boot")
    assert not english.backup_chars and english.ranking_query == english.fts_query


def test_two_char_cjk_word_plans_a_character_phrase() -> None:
    query_plan = plan("去重")
    assert ("去", "重") in [t.tokens for t in query_plan.terms]
    assert '"去 重"' in query_plan.fts_query.split(" OR ")


def test_joined_latin_pieces_plan_one_exact_phrase() -> None:
    assert plan("JIRA-1234").fts_query == '"jira 1234"'
    assert plan("jira-1234").fts_query == '"jira 1234"'
    assert plan("2026-09").fts_query == '"2026 09"'
    assert plan("v1.2").fts_query == '"v1 2"'


def test_full_width_query_plans_the_same_phrase() -> None:
    assert plan("ＪＩＲＡ－１２３４").fts_query == plan("JIRA-1234").fts_query


def test_case_does_not_change_the_plan() -> None:
    assert plan("Reciprocal RANK Fusion").fts_query == plan("reciprocal rank fusion").fts_query


def test_versions_stay_distinct_terms() -> None:
    assert plan("v1").fts_query == '"v1"'
    assert plan("v2").fts_query == '"v2"'


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
    assert plan("the retention of users").fts_query == '"retent" OR "user"'
    assert plan("the").fts_query == '"the"'


def test_quoted_text_is_one_phrase() -> None:
    query_plan = plan('"rank fusion" extra')
    assert query_plan.terms[0].tokens == ("rank", "fusion")
    assert query_plan.terms[0].kind == "phrase"
    assert ("extra",) in [t.tokens for t in query_plan.terms]
    assert plan("「去重规则」").terms[0].tokens == ("去", "重", "规", "则")


def test_duplicate_terms_are_planned_once() -> None:
    assert plan("rank rank RANK").fts_query == '"rank"'


def test_term_count_is_capped() -> None:
    text = " ".join(f"w{i}x" for i in range(200))
    assert len(plan(text).terms) == MAX_TERMS


def test_plan_runs_against_the_index(index: tuple[lore.Vault, apsw.Connection]) -> None:
    vault, con = index
    [rules_id] = [
        int(i) for (i,) in vault.store.query("SELECT id FROM notes WHERE path LIKE 'rules/%'")
    ]
    assert _run(con, '"去 重"') == [rules_id]
    assert rules_id in _run(con, plan("去重").fts_query)
    assert _run(con, plan("JIRA-1234").fts_query) == [rules_id]
    assert _run(con, plan("JIRA-1243").fts_query) == []


def test_query_text_is_capped_but_still_searchable(tmp_path: Path) -> None:
    query_plan = plan("rank " + "x" * 100_000)
    assert ("rank",) in [t.tokens for t in query_plan.terms]
