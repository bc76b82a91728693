"""Search over a small real vault: CJK phrases, exact identifiers, folding, weights, filters,
reasons for empty results, evidence (snippet, heading, line) and explain; on each storage
backend (SQLite and PostgreSQL: the same answers)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import build_vault, one_line_naming
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lore
from lore.derive.tokenize import tokenize
from lore.ingest.parse import parse_note
from lore.retrieve.query import plan
from lore.retrieve.snippet import build_evidence
from lore.store.sqlite_search import fts_match

pytestmark = pytest.mark.usefixtures("on_backend")  # every vault opened here, both backends
OpenVault = Callable[..., lore.Vault]
MakeVault = Callable[..., Path]

NOTES = {
    "rules/客户去重规则 v1.md": (
        "---\ntitle: 客户去重规则 v1\ntags: [rules, 客户]\ndate: 2026-09-01\nstatus: superseded\n"
        "---\n# 客户去重规则 v1\n\n按手机号合并客户。v1 只看手机号。\n"
    ),
    "rules/客户去重规则 v2.md": (
        "---\ntitle: 客户去重规则 v2\ntags: [rules, 客户, project/crm]\ndate: 2026-10-15\n"
        "owner: 张三\n---\n# 客户去重规则 v2\n\n## 背景\n\n"
        "手机号加邮箱一起判断。\n\n## 规则\n\n同一手机号且同一邮箱视为同一客户。\n"
    ),
    "people/蔺霁川.md": "# 人物卡片\n\n负责人：蔺霁川，负责数据治理。\n",
    "misc/四川.md": "# 出差\n\n去四川出差，川菜很好吃。\n",
    "misc/去年.md": "# 回顾\n\n去年的重点是招聘。\n",
    "nature/whale.md": "---\ndate: 2026-08-08\n---\n# 海边\n\n今天看到了一头鲸。\n",
    "meetings/2026-09-15-weekly.md": (
        "# Weekly sync\n\nDiscussed JIRA-1234 and the plan for 2026-09-15.\n"
    ),
    "projects/rec.md": (
        "---\ndate: 2026-11-02\ntags: [project/rec]\n---\n# Recommendation slot\n\n"
        "Experiment tracked in JIRA-1243, review on 2026-10-09.\n"
    ),
    "reading/retention.md": (
        "---\ntitle: Retention cohorts\ndate: 2026-10-01\n---\nDefinitions for weekly users.\n"
    ),
    "reading/metrics.md": (
        "---\ntitle: Metrics glossary\ndate: 2026-10-02\n---\n"
        "A long page about many things, among them retention, conversion and revenue.\n"
    ),
    "inbox/untagged.md": "---\ndate: 2026-12-01\n---\nretention idea with #Idea inline tag\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory, backend_db: Any) -> Iterator[lore.Vault]:
    root = build_vault(tmp_path_factory.mktemp("search") / "vault", NOTES)
    opened = lore.open(root, db=backend_db)
    report = opened.sync()
    assert len(report.added) == len(NOTES)
    yield opened
    opened.close()


def paths(result: lore.SearchResult) -> list[str]:
    return [hit.path for hit in result]


# -- CJK --------------------------------------------------------------------------------------


def test_two_char_word_inside_a_longer_run(vault: lore.Vault) -> None:
    result = paths(vault.search("去重"))
    assert set(result[:2]) == {"rules/客户去重规则 v1.md", "rules/客户去重规则 v2.md"}
    # 去 and 重 apart (去年的重点) is at best a weaker match than the phrase.
    assert "misc/去年.md" not in result[:2]


def test_full_title_query_prefers_the_right_version(vault: lore.Vault) -> None:
    assert paths(vault.search("客户去重规则 v2"))[0] == "rules/客户去重规则 v2.md"
    assert paths(vault.search("客户去重规则 v1"))[0] == "rules/客户去重规则 v1.md"


def test_single_chinese_character(vault: lore.Vault) -> None:
    assert paths(vault.search("鲸")) == ["nature/whale.md"]


def test_name_not_in_any_dictionary(vault: lore.Vault) -> None:
    assert paths(vault.search("蔺霁川"))[0] == "people/蔺霁川.md"
    assert paths(vault.search("霁川"))[0] == "people/蔺霁川.md"


def test_spoken_query_with_filler(vault: lore.Vault) -> None:
    assert paths(vault.search("我记得那个鲸来着"))[0] == "nature/whale.md"


# -- exact identifiers ------------------------------------------------------------------------


def test_v1_and_v2_are_distinct(vault: lore.Vault) -> None:
    assert paths(vault.search("v1")) == ["rules/客户去重规则 v1.md"]
    assert paths(vault.search("v2")) == ["rules/客户去重规则 v2.md"]


def test_ticket_ids_are_exact(vault: lore.Vault) -> None:
    assert paths(vault.search("JIRA-1234")) == ["meetings/2026-09-15-weekly.md"]
    assert paths(vault.search("JIRA-1243")) == ["projects/rec.md"]
    assert paths(vault.search("JIRA-1324")) == []


def test_partial_dates(vault: lore.Vault) -> None:
    # "2026-09" is in 2026-09-15, not in 2026-10-09 (09 there is a day, not adjacent).
    assert paths(vault.search("2026-09")) == ["meetings/2026-09-15-weekly.md"]
    assert paths(vault.search("2026-10-09")) == ["projects/rec.md"]


@pytest.mark.parametrize("query", ["jira-1234", "Jira-1234", "ＪＩＲＡ－１２３４", "ｊｉｒａ-1234"])
def test_case_and_width_folding_in_queries(vault: lore.Vault, query: str) -> None:
    assert paths(vault.search(query))[0] == "meetings/2026-09-15-weekly.md"


def test_case_folding_and_stemming_of_words(vault: lore.Vault) -> None:
    assert paths(vault.search("RETENTION")) == paths(vault.search("retention"))
    assert "reading/retention.md" in paths(vault.search("Definition"))


# -- ranking ----------------------------------------------------------------------------------


def test_title_match_beats_body_match(vault: lore.Vault) -> None:
    result = vault.search("retention", explain=True)
    assert paths(result)[0] == "reading/retention.md"
    assert set(paths(result)) == {
        "reading/retention.md",
        "reading/metrics.md",
        "inbox/untagged.md",
    }
    assert result[0].score > result[1].score > 0


def test_field_weights_are_applied(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault(
        {
            "title.md": "---\ntitle: Quokka facts\n---\nan island animal\n",
            "body.md": "---\ntitle: Island trip\n---\nwe saw a quokka there\n",
            "other.md": "nothing relevant\n",
        }
    )
    default = open_vault(root)
    default.sync()
    assert paths(default.search("quokka")) == ["title.md", "body.md"]
    no_title = open_vault(root, field_weights={"title": 0.0})
    assert paths(no_title.search("quokka"))[0] == "body.md"


def test_field_weights_from_the_environment(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(
        {
            "title.md": "---\ntitle: Quokka facts\n---\nan island animal\n",
            "body.md": "---\ntitle: Island trip\n---\nwe saw a quokka there\n",
        }
    )
    monkeypatch.setenv("LORE_FIELD_WEIGHTS", "title=0, body=5")
    vault = open_vault(root)
    vault.sync()
    assert vault.settings.field_weights["body"] == 5.0
    assert paths(vault.search("quokka"))[0] == "body.md"


def test_ties_break_by_path(make_vault: MakeVault, open_vault: OpenVault) -> None:
    same = "---\ntitle: Same\n---\nidentical words in identical notes\n"
    root = make_vault({"b.md": same, "a.md": same, "sub/c.md": same})
    vault = open_vault(root)
    vault.sync()
    for _ in range(3):
        result = vault.search("identical words")
        assert paths(result) == ["a.md", "b.md", "sub/c.md"]
        assert len({hit.score for hit in result}) == 1


def test_limit(vault: lore.Vault) -> None:
    assert len(vault.search("retention", limit=2)) == 2
    with pytest.raises(lore.QueryError) as caught:
        vault.search("retention", limit=0)
    assert "--limit" in str(caught.value)


# -- filters ----------------------------------------------------------------------------------


def test_tag_filter(vault: lore.Vault) -> None:
    assert set(paths(vault.search("手机号", tag="rules"))) == {
        "rules/客户去重规则 v1.md",
        "rules/客户去重规则 v2.md",
    }
    assert list(vault.search("鲸", tag="rules")) == []
    assert paths(vault.search("手机号", tags=["#RULES", "project/crm"])) == [
        "rules/客户去重规则 v2.md"
    ]
    assert paths(vault.search("retention", tag="idea")) == ["inbox/untagged.md"]  # inline tag
    assert set(paths(vault.search("JIRA", tag="project"))) == {"projects/rec.md"}  # hierarchy


def test_path_filter(vault: lore.Vault) -> None:
    assert set(paths(vault.search("retention", path="reading/"))) == {
        "reading/retention.md",
        "reading/metrics.md",
    }
    assert paths(vault.search("retention", path="./inbox/")) == ["inbox/untagged.md"]
    assert paths(vault.search("retention", path="*/metrics.md")) == ["reading/metrics.md"]


def test_since_and_until_filters(vault: lore.Vault) -> None:
    everything = set(paths(vault.search("retention")))
    assert set(paths(vault.search("retention", since="2026-10-02"))) == {
        "reading/metrics.md",
        "inbox/untagged.md",
    }
    assert paths(vault.search("retention", until="2026-10-01")) == ["reading/retention.md"]
    assert paths(vault.search("retention", since="2026-10", until="2026-10")) == [
        "reading/retention.md",
        "reading/metrics.md",
    ]
    assert set(paths(vault.search("retention", since="2026"))) == everything
    assert paths(vault.search("JIRA-1234", until="2026-09")) == ["meetings/2026-09-15-weekly.md"]


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"since": "yesterday"}, "--since"),
        ({"since": "2026-13"}, "--since"),
        ({"since": "2026-02-30"}, "--since"),
        ({"until": "2026/09/01"}, "--until"),
        ({"since": "2026-10", "until": "2026-09"}, "--since"),
    ],
)
def test_bad_date_filter_raises_query_error(
    vault: lore.Vault, kwargs: dict[str, str], named: str
) -> None:
    with pytest.raises(lore.QueryError) as caught:
        vault.search("retention", **kwargs)
    one_line_naming(str(caught.value), named)


def test_empty_results_say_why(vault: lore.Vault) -> None:
    nothing = vault.search("zzyzx")
    assert list(nothing) == []
    assert nothing.reason == "nothing matched"

    filtered = vault.search("retention", path="nowhere/")
    assert list(filtered) == []
    assert filtered.reason is not None
    assert "filtered out" in filtered.reason
    assert filtered.reason.startswith("3 note(s) matched")

    assert vault.search("").reason == "empty query"
    assert vault.search("?!  ...").reason == "the query has no searchable words"
    assert vault.search("zzyzx", path="nowhere/").reason == "nothing matched"


# -- evidence ---------------------------------------------------------------------------------

_MARKERS = re.compile("[«»]")
_WS = re.compile(r"\s+")
# Snippets may drop Markdown decoration (heading marks, quote marks, emphasis); compare the
# texts with those characters deleted on both sides and whitespace collapsed.
_DECORATION = re.compile(r"[#>*_]")


def _norm(text: str) -> str:
    return _WS.sub(" ", _DECORATION.sub("", text)).strip()


def _unmarked(snippet: str) -> str:
    text = _MARKERS.sub("", snippet)
    return _norm(text.removeprefix("…").removesuffix("…"))


def assert_cut_from(snippet: str, original: str) -> None:
    assert _unmarked(snippet) in _norm(original), (snippet, original)


def test_snippets_are_cut_from_the_original_text(vault: lore.Vault) -> None:
    for query in ["去重", "手机号", "retention", "JIRA-1234", "鲸", "蔺霁川", "2026-09", "规则"]:
        hits = vault.search(query, limit=20)
        assert hits
        for hit in hits:
            assert_cut_from(hit.snippet, (vault.root / hit.path).read_text(encoding="utf-8"))


def test_snippet_highlights_the_matched_text(vault: lore.Vault) -> None:
    hit = vault.search("JIRA-1234")[0]
    assert "«JIRA-1234»" in hit.snippet
    hit = vault.search("jira-1234")[0]
    assert "«JIRA-1234»" in hit.snippet  # the snippet shows what the note says, not the query


EVIDENCE_NOTE = (
    "---\ntitle: Field notes\ndate: 2026-09-09\n---\n"  # body starts on line 5
    "Intro paragraph without the words.\n"
    "\n"
    "## Alpha section\n"
    "The walrus sleeps on the ice.\n"
    "\n"
    "## Beta section\n"
    "\n"
    "A narwhal was seen.\n"
    "### 海洋\n"
    "我们看到了独角鲸。\n"
)


def test_heading_and_line_of_the_evidence(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({"field.md": EVIDENCE_NOTE})
    vault = open_vault(root)
    vault.sync()
    lines = EVIDENCE_NOTE.split("\n")
    for query, heading, needle in [
        ("walrus", "Alpha section", "walrus"),
        ("narwhal", "Beta section", "narwhal"),
        ("独角鲸", "海洋", "独角鲸"),
        ("intro paragraph", None, "Intro"),
    ]:
        [hit] = vault.search(query)
        assert hit.heading == heading, query
        assert needle in lines[hit.line - 1], (query, hit.line)
        assert_cut_from(hit.snippet, EVIDENCE_NOTE)


def test_a_hit_names_its_heading_as_it_reads(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault(
        {"n.md": "# Top\n\n## Using [[dataview|Dataview]] **queries**\n\nquokka here\n"}
    )
    vault = open_vault(root)
    vault.sync()
    [hit] = vault.search("quokka")
    assert hit.heading == "Using Dataview queries"


def test_note_without_a_match_in_its_body_gets_its_head_as_snippet(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault({"tagged.md": "---\ntags: [zeppelin]\n---\n\nFirst real line.\nSecond.\n"})
    vault = open_vault(root)
    vault.sync()
    [hit] = vault.search("zeppelin")
    assert hit.snippet.startswith("First real line.")
    assert hit.line == 5
    assert hit.heading is None


def test_a_title_heading_holding_a_word_beats_its_lone_characters_below() -> None:
    """Below a first heading that repeats the title, the text is the better evidence,
    but not when all it holds is a lone character backing up a word the heading holds
    whole: a note titled 学习笔记, searched for 读书笔记, shows its heading, not a 读 of
    读者 further down."""
    body = "# Linux 内核学习笔记\n\n## RCU\n\nRCU 是一种读者无锁的设计思想。\n"
    headings = [(1, "Linux 内核学习笔记", 0, 1), (2, "RCU", body.index("## RCU"), 3)]
    evidence = build_evidence(body, 1, headings, plan("读书笔记").evidence)
    assert "«笔记»" in evidence.snippet and evidence.line == 1, evidence
    # A word below still wins over the heading.
    body = body.replace("读者", "读书的人")
    evidence = build_evidence(body, 1, headings, plan("读书笔记").evidence)
    assert "«读书»" in evidence.snippet and evidence.line == 5, evidence


@pytest.mark.parametrize(
    ("body", "query", "kept"),
    [
        ("p99 latency > 200ms on the API\n", "latency", "«latency» > 200ms"),
        ("score # of users\n", "score", "«score» # of users"),
    ],
)
def test_snippet_keeps_text_after_a_highlight(body: str, query: str, kept: str) -> None:
    assert kept in build_evidence(body, 1, [], plan(query)).snippet


@pytest.mark.parametrize(
    ("body", "query", "kept"),
    [
        ("edit __init__.py to export it\n", "export", "__init__.py"),
        ("the budget is 2**10 units\n", "budget", "2**10"),
    ],
)
def test_snippet_keeps_identifiers_with_underscores_and_stars(
    body: str, query: str, kept: str
) -> None:
    assert kept in build_evidence(body, 1, [], plan(query)).snippet


def test_a_query_words_characters_are_not_highlighted_beside_the_word() -> None:
    """消 of 消息 backs up 消费者 in the ranking; in a snippet that shows 消费者 itself, the
    lone 消 and 者 are not marked. A character that is a query word of its own is."""
    body = "消费者从 Kafka 拉取消息，生产者发布消息。每个组有一个消费者。\n"
    snippet = build_evidence(body, 1, [], plan("kafka 消费者")).snippet
    assert "«消费者»" in snippet and "«Kafka»" in snippet
    assert "«消»" not in snippet and "«者»" not in snippet
    alone = build_evidence("拉取消息，生产者发布。\n", 1, [], plan("消费者")).snippet
    assert "«消»" in alone  # without the word in the window, its characters are the evidence
    own = build_evidence("每个组有一个消费者。\n", 1, [], plan("消费者 组")).snippet
    assert "«组»" in own and "«消费者»" in own


def test_the_snippet_is_where_the_note_says_the_words_not_its_badge_urls() -> None:
    """A plugin note opens with badges whose URLs hold every word of its name; the evidence
    is the sentence that says them. A word the note has only in a URL is still evidence."""
    body = (
        "![downloads](https://img.shields.io/github/downloads/me/word-count-heatmap/total)\n"
        "![stars](https://img.shields.io/github/stars/me/word-count-heatmap?style=badge)\n"
        "<!-- word count heatmap -->\n\n"
        "By [me](https://github.com/me/word-count-heatmap).\n\n"
        + "Some text about other things. " * 8
        + "\n\nVisualize the daily word count as a heatmap.\n"
    )
    evidence = build_evidence(body, 1, [], plan("word count heatmap"))
    assert "«word» «count» as a «heatmap»" in evidence.snippet
    assert "shields" not in evidence.snippet and evidence.line == 9
    only_url = build_evidence(body, 1, [], plan("shields"))
    assert "«shields»" in only_url.snippet and only_url.line == 1


def test_a_snippet_leaves_out_the_comments_a_reader_never_sees() -> None:
    """Obsidian hides `%% … %%` (and HTML `<!-- … -->`) when a note is read: a snippet leaves
    them out, even one the window cuts off, unless the query's word is inside it."""
    body = (
        "Visualize the daily word count as a heatmap. %% ----- Do not edit above ----- %%"
        " <!-- hub footer --> Made by me. %% Does the author have any sponsoring links? Add"
        " them to the author's note, then remove this line and the next, which is long. %%\n"
    )
    snippet = build_evidence(body, 1, [], plan("word count heatmap"), width=120).snippet
    assert snippet.startswith("Visualize the daily «word» «count» as a «heatmap».")
    assert "%%" not in snippet and "<!--" not in snippet and "Do not edit" not in snippet
    assert "Made by me." in snippet and "sponsoring" not in snippet
    inside = build_evidence(body, 1, [], plan("sponsoring links"), width=120).snippet
    assert "«sponsoring» «links»" in inside


def test_hit_carries_its_metadata(vault: lore.Vault) -> None:
    hit = vault.search("客户去重规则 v2")[0]
    assert hit.title == "客户去重规则 v2"
    assert hit.date == "2026-10-15"
    assert hit.frontmatter["owner"] == "张三"
    assert hit.tags == ["rules", "客户", "project/crm"]
    assert hit.mode == vault.mode
    assert hit.explain is None
    data = hit.to_dict()
    assert {"path", "title", "date", "score", "snippet", "heading", "line", "frontmatter"} <= set(
        data
    )


def test_explain_has_per_field_scores_and_matched_terms(vault: lore.Vault) -> None:
    result = vault.search("retention weekly", explain=True)
    top = result[0]
    assert top.path == "reading/retention.md"
    assert top.explain is not None
    assert set(top.explain.fields) == {"title", "tags", "summary", "body"}
    assert top.explain.fields["title"] > 0
    assert top.explain.fields["tags"] == 0
    assert top.explain.query_terms == ["retent", "week"]
    assert top.explain.matched_terms == ["retent", "week"]
    assert top.explain.fts_query == fts_match(plan("retention weekly").text_query)
    body_hit = next(h for h in result if h.path == "reading/metrics.md")
    assert body_hit.explain is not None
    assert body_hit.explain.fields["title"] == 0
    assert body_hit.explain.fields["body"] > 0
    assert body_hit.explain.matched_terms == ["retent"]


def test_search_result_to_dict(vault: lore.Vault) -> None:
    data = vault.search("鲸").to_dict()
    assert data["query"] == "鲸"
    assert data["matched"] == 1
    assert data["reason"] is None
    assert data["hits"][0]["path"] == "nature/whale.md"


# -- snippet property -------------------------------------------------------------------------

words = st.sampled_from(
    ["alpha", "beta", "去重", "客户", "v1", "JIRA-1234", "规则", "the", "#tag", "鲸", "x"]
)
body_parts = st.lists(
    st.one_of(
        words, st.sampled_from([" ", "  ", "\n", "\n\n", "。", ", ", "\n## Head\n", "\t", "**"])
    ),
    min_size=1,
    max_size=80,
).map("".join)


@settings(max_examples=200)
@given(body=body_parts, query=words, width=st.integers(min_value=10, max_value=200))
def test_snippet_is_a_substring_of_the_body(body: str, query: str, width: int) -> None:
    query_plan = plan(query)
    assume(not query_plan.empty)
    parsed = parse_note(body, "x.md")
    headings = [(h.level, h.text, h.offset, h.line) for h in parsed.headings]
    evidence = build_evidence(parsed.body, parsed.body_line, headings, query_plan, width=width)
    assert_cut_from(evidence.snippet, parsed.body)
    if evidence.matched:
        assert "«" in evidence.snippet
        assert 1 <= evidence.line <= parsed.body.count("\n") + 1
        first_line = parsed.body.split("\n")[evidence.line - 1]
        assert any(
            tuple(t.term for t in tokenize(first_line)[i : i + len(term.tokens)]) == term.tokens
            for term in evidence.matched
            for i in range(len(tokenize(first_line)))
        )


def test_path_filter_with_dot_folder(make_vault: MakeVault, open_vault: OpenVault) -> None:
    # Hidden folders are left out by default (as Obsidian does); .loreignore takes one back.
    root = make_vault(
        {
            ".loreignore": "!.archive/\n",
            ".archive/old.md": "walrus old",
            "archive/new.md": "walrus new",
        }
    )
    vault = open_vault(root)
    vault.sync()
    assert paths(vault.search("walrus", path=".archive/")) == [".archive/old.md"]
    assert paths(vault.search("walrus", path="./.archive/")) == [".archive/old.md"]


def test_the_note_count_follows_every_write(make_vault: MakeVault, open_vault: OpenVault) -> None:
    """The count every search asks for is kept between searches, never past a write: its
    own connection's, or another's."""
    root = make_vault({"a/one.md": "# One\n\nalpha\n", "b/two.md": "# Two\n\nalpha\n"})
    reader, writer = open_vault(root), open_vault(root)
    reader.sync()
    assert reader.store.note_count(("a/**",)) == 1
    assert reader.store.note_count() == reader.store.note_count() == 2  # the second is kept
    (root / "a/three.md").write_text("# Three\n\nalpha\n", encoding="utf-8")
    assert writer.sync().added == ["a/three.md"]  # another connection's commit
    assert reader.store.note_count(("a/**",)) == 2
    assert reader.store.note_count() == 3
    (root / "b/two.md").unlink()
    assert reader.sync().deleted == ["b/two.md"]  # its own
    assert reader.store.note_count() == 2
    assert reader.search("alpha").matched == 2
