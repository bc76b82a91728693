"""Pure parts of the semantic layer: passage splitting, heuristic tags, query planning,
fusion."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lore.derive.passages import PASSAGE_TOKENS, estimate_tokens, note_texts, split_passages
from lore.derive.tags import heuristic_tags, query_keywords, tag_key
from lore.retrieve.fuse import channel_weights, compress, rrf, weighted
from lore.retrieve.plan import heuristic_plan, strip_filler


def test_short_note_is_one_passage_and_its_own_summary() -> None:
    texts = note_texts("T", "one short paragraph", [], "one short paragraph", ["a", "b"])
    kinds = [(t.kind, t.seq) for t in texts]
    assert kinds == [("passage", 0), ("summary", 0), ("tags", 0)]
    assert texts[0].hash == texts[1].hash  # embedded once
    assert texts[2].text == "a, b" and texts[2].space == "tags"


def test_long_note_is_cut_at_headings_and_paragraphs() -> None:
    body = "# A\n\n" + "这是一个很长的段落。" * 80 + "\n\n## B\n\n" + "Plain English words. " * 40
    b_at = body.index("## B")
    spans = split_passages(body, [(1, "A", 0, 1), (2, "B", b_at, 5)])
    assert len(spans) >= 3
    assert all(estimate_tokens(body[s:e]) <= PASSAGE_TOKENS for s, e, _h in spans)
    assert spans[-1][2] == "B" and spans[0][2] == "A"
    assert all(e <= s2 for (_s, e, _h), (s2, _e2, _h2) in zip(spans, spans[1:], strict=False))
    texts = note_texts("Title", body, [(1, "A", 0, 1), (2, "B", b_at, 5)], body[:1200], [])
    summary = next(t for t in texts if t.kind == "summary")
    assert summary.hash not in {t.hash for t in texts if t.kind == "passage"}
    assert estimate_tokens(summary.text) < PASSAGE_TOKENS


def test_the_llm_summary_is_one_more_text_beside_the_head_and_tail() -> None:
    """A long note with the LLM's summary keeps its head-and-tail summary text (the same
    text, the same vector) and gets the LLM's as a text of its own; a short note is still
    its own single text, whatever the LLM said."""
    body = "\n\n".join(f"Paragraph {i}: " + "Plain English words. " * 60 for i in range(6))
    plain = note_texts("Title", body, [], body[:1200], ["a"])
    fused = note_texts("Title", body, [], body[:1200], ["a"], "The LLM says this note is X.")
    assert [t for t in fused if t.kind != "llm_summary"] == plain
    [llm] = [t for t in fused if t.kind == "llm_summary"]
    assert llm.text == "Title\nThe LLM says this note is X." and llm.space == "doc"
    short = note_texts("T", "one short paragraph", [], "one short paragraph", [], "LLM text")
    assert [t.kind for t in short] == ["passage", "summary"]


@given(st.lists(st.text(min_size=0, max_size=400), min_size=1, max_size=12))
@example(["0/0/0/0˥0/0/0/0/0/0/0/0 0/0/0/0/0/0/0/0/0/0/0/0/0:0:0´0/0/0/0:0:0:0´0", "0"])
def test_passages_cover_the_text_in_order_within_budget(paragraphs: list[str]) -> None:
    body = "\n\n".join(paragraphs)
    spans = split_passages(body, [], budget=60)
    covered = "".join(body[s:e] for s, e, _h in spans)
    assert "".join(covered.split()) == "".join("".join(body[s:e].split()) for s, e, _ in spans)
    for word in body.split():
        if any(c.isalnum() for c in word):
            assert (
                any(word in body[s:e] or body[s:e] in word for s, e, _ in spans) or len(word) > 50
            )
    starts = [s for s, _e, _h in spans]
    assert starts == sorted(starts)
    for s, e, _h in spans:
        assert 0 <= s < e <= len(body)


def test_heuristic_tags_are_deterministic_and_language_aware() -> None:
    zh = heuristic_tags(
        "客户去重规则", "客户去重规则：同一手机号视为同一客户。客户合并时保留最早的记录。"
    )
    assert "客户" in zh and zh == heuristic_tags(
        "客户去重规则", "客户去重规则：同一手机号视为同一客户。客户合并时保留最早的记录。"
    )
    en = heuristic_tags(
        "Armenian Apostolic Church",
        "The Armenian Apostolic Church is led by the Catholicos. The church has brotherhoods.",
    )
    assert "armenian" in en and "church" in en and "the" not in en
    assert tag_key("Churches") == tag_key("church")


def test_a_named_files_extension_is_no_keyword() -> None:
    """An index note whose links are its files' names ("[01-core.md](01-core.md)") is not
    about "md"; the names' words still count."""
    index = "\n".join(
        f"| [{i:02d}-{name}.md]({i:02d}-{name}.md) | {name.title()} |"
        for i, name in enumerate(["core-concept", "netdev-case", "skb-case", "antipatterns"])
    )
    for title in ("Factory Pattern", "工厂模式"):
        tags = heuristic_tags(title, f"# {title}\n\n{index}\n\nSee README.md and notes.PDF.\n")
        assert not {"md", "pdf"} & {tag_key(t) for t in tags}, tags
        assert any("netdev" in tag_key(t) for t in tags), tags


def test_the_keyword_idf_table_is_jieba_analyse_s() -> None:
    """Chinese keywords weigh words by jieba's own TF-IDF table, read without importing
    jieba.analyse (which builds a part-of-speech tagger keywords never use): the same
    weights, median and stop words as jieba.analyse's."""
    import jieba.analyse

    from lore.derive.tags import _tfidf

    table, jieba_table = _tfidf(), jieba.analyse.default_tfidf
    assert table.idf_freq == jieba_table.idf_freq and len(table.idf_freq) > 100_000
    assert table.median_idf == jieba_table.median_idf
    assert table.stop_words == jieba_table.stop_words


def test_query_planning_strips_filler() -> None:
    assert strip_filler("我记得之前存过卫星图的内容，帮我找找") == "存过卫星图的内容"
    assert strip_filler("Can you find the note about Kubernetes?") == "the note about Kubernetes"
    plan = heuristic_plan("我记得之前存过一些跟卫星图、新闻查询、情报收集有关的内容，你帮我找找")
    assert plan.planner == "heuristic"
    assert {"卫星", "新闻", "情报"} & set(" ".join(plan.tags).split()) or any(
        "卫星" in t for t in plan.tags
    )
    assert len(plan.tags) <= 12
    assert query_keywords("What revolution led to the annexation of Armenia?", 3) == [
        "armenia",
        "annexation",
        "revolution",
    ]


def test_compress_and_weights() -> None:
    assert compress(0.0, 5) == 0.0 and compress(1.0, 5) == 1.0
    assert compress(0.2, 5) == math.log(2) / math.log(6)
    assert compress(0.3, 0) == 0.3
    w = channel_weights({"vec": 0.45, "fts": 0.25, "tag": 0.15}, 0.7)
    assert w["tag_vec"] == 0.15 * 0.7 and math.isclose(w["tag_lex"], 0.15 * 0.3)
    assert channel_weights({"fts": 0.6, "tag": 0.25}, 0.7)["tag_lex"] == 0.25  # no vectors


def test_fusion_is_deterministic_with_ties_by_path() -> None:
    raw = {"fts": {1: 2.0, 2: 2.0, 3: 1.0}, "vec": {1: 0.9, 2: 0.9, 3: 0.8}}
    paths = {1: "b.md", 2: "a.md", 3: "c.md"}
    weights = {"fts": 0.5, "vec": 0.5}
    first = weighted([1, 2, 3], raw, weights, paths)
    assert [f.note_id for f in first][:2] == [2, 1]  # equal scores: a.md before b.md
    assert first == weighted([3, 2, 1], raw, weights, paths)
    top = first[0]
    assert set(top.weighted) == {"fts", "vec"} and top.raw["fts"] == 2.0
    by_rank = rrf([1, 2, 3], raw, weights, paths)
    assert by_rank == rrf([2, 3, 1], raw, weights, paths)
    assert by_rank[0].note_id == 2
    assert by_rank[0].score == pytest.approx(0.5 / 61 + 0.5 / 61, abs=1e-5)


def test_llm_answers_are_parsed_strictly() -> None:
    from lore.index.llm_cache import parse_json_answer
    from lore.providers.base import ProviderError

    assert parse_json_answer('```json\n{"tags": ["a"]}\n```', "LLM x") == {"tags": ["a"]}
    for bad in ("Sure, here you go: tags a, b", "[1, 2]"):
        try:
            parse_json_answer(bad, "LLM x")
        except ProviderError as exc:
            assert "LLM x" in str(exc) and "\n" not in str(exc)
        else:
            raise AssertionError(f"accepted {bad!r}")


def test_semantic_settings_are_validated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lore.config import load_lore_settings
    from lore.errors import ConfigError

    monkeypatch.setenv("LORE_SCORE_WEIGHTS_MODE3", "vec=0.5,fts=0.3,tag=0.2")
    monkeypatch.setenv("LORE_EMBED_PROVIDER", "Local")
    settings = load_lore_settings(tmp_path)
    assert settings.score_weights_mode3 == {"vec": 0.5, "fts": 0.3, "tag": 0.2}
    assert settings.embed_provider == "local"
    for env, value, named in [
        ("LORE_SCORE_WEIGHTS_MODE1", "vec=0.5,bm25=1", "bm25"),
        ("LORE_EMBED_PROVIDER", "cohere", "LORE_EMBED_PROVIDER"),
        ("LORE_FUSION", "max", "LORE_FUSION"),
        ("LORE_TAG_VEC_FRACTION", "1.5", "LORE_TAG_VEC_FRACTION"),
    ]:
        monkeypatch.setenv(env, value)
        with pytest.raises(ConfigError, match=named):
            load_lore_settings(tmp_path)
        monkeypatch.delenv(env)
