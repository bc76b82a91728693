"""The snippet matcher looks only at the tokens of the query's terms (wanted_spans): it must
find exactly what matching over the whole token stream finds, so every snippet, highlight,
heading, line and matched-term list stays the same."""

from __future__ import annotations

from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lore.derive.tokenize import token_spans
from lore.retrieve import snippet
from lore.retrieve.query import QueryPlan, QueryTerm, plan
from lore.retrieve.search import evidence_and_held
from lore.retrieve.snippet import Match, build_evidence, find_matches
from lore.store.rows import HitRow


def whole_stream_matches(text: str, query_plan: QueryPlan) -> list[Match]:
    """The matcher as it was: every token of the text with its span, then each position;
    a phrase is a match a piece, parted where anything but spaces, tabs and -'’_./*~`
    stands between two of its tokens."""
    by_first: dict[str, list[QueryTerm]] = {}
    for term in query_plan.terms:
        by_first.setdefault(term.tokens[0], []).append(term)
    spans = token_spans(text[: snippet.SCAN_LIMIT_CHARS], with_alternatives=True)
    terms_at = [span[0] for span in spans]
    matches: list[Match] = []
    for i, (token, start, _end) in enumerate(spans):
        for term in by_first.get(token, ()):
            n = len(term.tokens)
            if n == 1 or tuple(terms_at[i : i + n]) == term.tokens:
                piece = start
                for before, after in zip(spans[i : i + n - 1], spans[i + 1 : i + n], strict=True):
                    gap = text[before[2] : after[1]]
                    if gap.strip(" \t-'’_./*~`"):
                        matches.append(Match(piece, before[2], term))
                        piece = after[1]
                matches.append(Match(piece, spans[i + n - 1][2], term))
    return matches


WORDS = [
    "北京大学", "北京", "大学", "的", "历史", "歷史", "軟體", "软件", "工程", "記憶體", "内存",
    "數據庫", "数据库", "东京", "タワー", "한국어", "ｶﾀｶﾅ", "history", "Histories",
    "historical", "University", "the", "of", "C++", "C#", ".NET", "-t", "--dry-run", "\\1",
    "&", "JIRA-1234", "v1.2", "😀", "Café", "ﬁle", "去重", "客户去重规则", "#tag",
]  # fmt: skip
GLUE = [" ", "", "\n", "\n\n", "。", "，", ", ", "\n## 标题\n", "\n# Title\n", "\t", "**", "-"]
body_text = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(GLUE)), max_size=60).map(
    "".join
)
query_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(body_text, query_text)
@example("軟體工程的歷史 北京\n\n大学", "软件 北京大学 历史")
@example("History of the university. Histories!", "history of the university")
def test_matches_are_those_of_the_whole_stream(body: str, query: str) -> None:
    query_plan = plan(query)
    assert find_matches(body, query_plan) == whole_stream_matches(body, query_plan)
    evidence_plan = query_plan.evidence
    assert find_matches(body, evidence_plan) == whole_stream_matches(body, evidence_plan)


@settings(max_examples=200, deadline=None)
@given(body_text, query_text, st.integers(min_value=10, max_value=200))
@example("# 北京大学\n\n北京大学的历史。軟體工程。\n", "北京大学的历史", 90)
def test_snippets_are_those_of_the_whole_stream(body: str, query: str, width: int) -> None:
    query_plan = plan(query).evidence
    headings = [(1, "北京大学", 0, 1)] if body.startswith("# ") else []
    fast = build_evidence(body, 1, headings, query_plan, width=width)
    with mock.patch.object(snippet, "find_matches", whole_stream_matches):
        whole = build_evidence(body, 1, headings, query_plan, width=width)
    assert fast == whole


@settings(max_examples=300, deadline=None)
@given(body_text, st.lists(st.sampled_from(WORDS), max_size=3), query_text, query_text)
@example("大学的历史。\n北京大学", ["北京"], "北京大学 历史", "北京大学")  # a word across the join
@example("軟體工程", [], "软件", "工程")  # Traditional: scanned twice, as before
def test_one_scan_finds_the_evidence_and_the_unsearched_words_of_two(
    body: str, tags: list[str], query: str, other: str
) -> None:
    title = "北京" if tags else "Title"
    row = HitRow(1, "a.md", title, None, {}, [], body, 1, tags, [], None)
    head = f"{row.title}\n{' '.join(row.tags)}"
    evidence_plan = plan(query).evidence
    unsearched = [w for w in plan(other).words if w not in evidence_plan.terms]
    got = evidence_and_held(row, head, evidence_plan, unsearched, ("«", "»"))
    two_scans = (
        build_evidence(body, 1, [], evidence_plan),
        {m.term for m in whole_stream_matches(f"{head}\n{body}", QueryPlan(query, unsearched))},
    )
    assert got == two_scans


def test_a_phrase_parted_by_a_line_end_or_a_stop_is_highlighted_a_piece_at_a_time() -> None:
    """The index finds 进程调度 where 进程 ends a sentence and 调度 starts the next line's
    list item (their tokens are next to each other, as in FTS5): the evidence marks each
    word, not the full stop, line end and bullet between them; words a space, hyphen or
    emphasis joins stay one highlight."""
    body = "利用其迅速找到最小值的进程。\n- 调度器入口是 schedule 函数"
    snippet_text = build_evidence(body, 1, [], plan("进程调度").evidence).snippet
    assert "«进程»。 - «调度»器入口" in snippet_text, snippet_text
    joined = build_evidence("把**进程**调度出去", 1, [], plan("进程调度").evidence).snippet
    assert joined == "把**«进程**调度»出去"
    english = plan('"kernel module"').evidence
    assert "«kernel module»" in build_evidence("A kernel module loads.", 1, [], english).snippet
    parted = build_evidence("Build the kernel.\nModule loading is next.", 1, [], english)
    assert "«kernel». «Module»" in parted.snippet, parted.snippet
