"""PostgreSQL ranks exactly as SQLite FTS5 does (issue 15): the same notes, in the same
order, with the same bm25 scores bit for bit, over lore's token stream; and its statistics
stay right through updates and deletes. The same for the notes' parts (issue 12)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twin import WEIGHTS, Twin, make_twin

from lore.derive.fields import fts_fields
from lore.retrieve.query import plan
from lore.store import pg_lexical
from lore.store.pg_schema import PARTS
from lore.store.query import EVERY_NOTE, Filters, Phrase, TextQuery
from lore.store.sqlite_search import fts_match

# A small vocabulary, so random notes share tokens and random phrases match: CJK
# characters (they pair into bigram terms), Latin words, a digit run.
VOCAB = ["去", "重", "客", "户", "规", "则", "的", "jira", "1234", "v1", "a", "rule"]


def random_fields(rng: random.Random, body_tokens: int) -> tuple[str, str, str, str]:
    def stream(n: int) -> str:
        return " ".join(rng.choice(VOCAB) for _ in range(n))

    body = f"{stream(body_tokens)} {EVERY_NOTE}".lstrip()
    return stream(rng.randint(0, 4)), stream(rng.randint(0, 3)), stream(rng.randint(0, 12)), body


@pytest.fixture
def corpus(tmp_path: Path, pg_url: str) -> Twin:
    """60 random notes: titles, tags, summaries, bodies of 0-80 tokens."""
    rng = random.Random(15)
    twin = make_twin(tmp_path, pg_url)
    twin.add([(f"n/{i:03d}.md", random_fields(rng, rng.randint(0, 80))) for i in range(60)])
    return twin


phrases = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4).map(tuple)


@st.composite
def text_queries(draw: st.DrawFn, fields: tuple[str, ...] | None = None) -> TextQuery:
    """Random generating, scoring and excluded phrases, some counting three times (as
    lore's planner weighs a query's words over the backup characters: TextQuery.counts)."""
    terms: list[Phrase] = draw(st.lists(phrases, min_size=1, max_size=5, unique=True))
    scoring = [p for p in draw(st.lists(phrases, max_size=3, unique=True)) if p not in terms]
    excluded = [
        p
        for p in draw(st.lists(phrases, max_size=2, unique=True))
        if p not in terms and p not in scoring
    ]
    counted = draw(st.lists(st.booleans(), max_size=8))
    counts = tuple((p, 3) for p, c in zip([*terms, *scoring], counted, strict=False) if c)
    return TextQuery(tuple(terms), tuple(scoring), tuple(excluded), fields, counts)


@settings(max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=text_queries(), limit=st.integers(1, 30))
def test_random_queries_rank_as_fts5(corpus: Twin, query: TextQuery, limit: int) -> None:
    corpus.assert_same(query, limit)


def test_real_text_queries_rank_as_fts5(tmp_path: Path, pg_url: str) -> None:
    """Chinese and English notes through lore's tokenizer and query planner."""
    texts = [
        ("客户去重规则", "客户去重规则 v2：手机号相同即视为同一客户。JIRA-1234 记录了例外。"),
        ("去重", "数据清洗时先去重，再合并客户档案。重复的客户会被标记。"),
        ("规则引擎", "规则引擎按优先级执行规则；v1 与 v2 的区别在于去重的时机。"),
        ("Retention", "Retention rules: notes older than a year are archived. JIRA-1234."),
        ("Rules", "The rule engine applies rules in order; indexing rules differ from v1."),
        ("客户", "客户关系管理。客户、客户经理与销售规则。"),
    ]
    twin = make_twin(tmp_path, pg_url)
    twin.add(
        [(f"{title}.md", fts_fields([title], ["tag"], body[:20], body)) for title, body in texts]
    )
    queries = ["客户去重规则", "去重", "JIRA-1234", "rules v1", "客户 规则 -去重", '"rule engine"']
    for text in queries:
        assert twin.assert_same(plan(text).text_query), text


def test_a_phrase_deep_in_a_long_note(tmp_path: Path, pg_url: str) -> None:
    """Past 16,383 tokens (where a tsvector stops counting positions) and past 256
    occurrences of a token, phrases are found and counted exactly."""
    twin = make_twin(tmp_path, pg_url)
    filler = " ".join(["的", "a"] * 9000)
    deep = f"{filler} 去 重 规 则 去 重 jira 1234 {' '.join(['客'] * 400)} {EVERY_NOTE}"
    short = f"去 重 rule {EVERY_NOTE}"
    twin.add([("long.md", ("", "", "", deep)), ("short.md", ("去 重", "", "", short))])
    for terms in [[("去", "重", "规", "则")], [("jira", "1234")], [("客", "客", "客")], [("的",)]]:
        assert twin.assert_same(TextQuery(tuple(terms))), terms


def test_overlapping_occurrences_count(tmp_path: Path, pg_url: str) -> None:
    twin = make_twin(tmp_path, pg_url)
    twin.add(
        [
            ("a.md", ("", "", "", "a a a a rule a a")),
            ("b.md", ("", "", "", "a rule a")),
            ("c.md", ("", "", "", "去 去 去 重")),
        ]
    )
    for terms in [[("a", "a")], [("a", "a", "a")], [("去", "去")], [("去", "去", "重")]]:
        assert twin.assert_same(TextQuery(tuple(terms))), terms


def test_score_only_terms_and_the_every_note_token(corpus: Twin) -> None:
    """`(rare) AND (common OR <every note>)`: the every-note token is a phrase of its own
    with FTS5's floor IDF; its share (~1e-6) orders notes that would otherwise tie."""
    corpus.assert_same(TextQuery((("jira",),), (("的",), ("a",))), 30)


def test_ties_are_ordered_by_path(tmp_path: Path, pg_url: str) -> None:
    twin = make_twin(tmp_path, pg_url)
    # 40 notes of equal score (past the tie margin) under reversed paths.
    twin.add([(f"z{40 - i:02d}.md", ("", "", "", "rule x")) for i in range(40)])
    got = twin.assert_same(TextQuery((("rule",),)), 5)
    assert [twin.paths[n] for n, _s in got] == [f"z{i:02d}.md" for i in range(1, 6)]


def test_filters_deep_in_the_ranking_and_ties_at_the_cut(tmp_path: Path, pg_url: str) -> None:
    """Filters are asked of the best candidates a chunk at a time (pg_lexical.FILTER_CHUNK):
    the notes they let through may all rank below the first chunks, and the last place
    may be shared by notes a later chunk brings; both stores agree on every one."""
    twin = make_twin(tmp_path, pg_url)
    many = pg_lexical.FILTER_CHUNK * 2 - 20  # the tied notes straddle two chunks
    strong = [(f"a/{i:04d}.md", ("rule", "", "", "rule rule x")) for i in range(many)]
    # equal scores under reversed paths, then one weaker note
    tied = [(f"b/{40 - i:02d}.md", ("", "", "", "rule x y")) for i in range(40)]
    twin.add([*strong, *tied, ("b/zz.md", ("", "", "", "rule x y z w v u"))])
    query = TextQuery((("rule",),))
    for folder, limit in (("b/", 5), ("b/", 41), ("a/", 3), ("c/", 5)):
        expected = twin.sqlite.rank(query, Filters(path=folder), limit, WEIGHTS)
        assert twin.pg.rank(query, Filters(path=folder), limit, WEIGHTS) == expected
        assert twin.pg.count_matches(query, Filters(path=folder)) == twin.sqlite.count_matches(
            query, Filters(path=folder)
        )
    got = twin.pg.rank(query, Filters(path="b/"), 5, WEIGHTS)
    assert [twin.paths[n] for n, _s in got] == [f"b/{i:02d}.md" for i in range(1, 6)]
    assert twin.pg.count_matches(query, Filters(path="b/")) == 41


def test_the_title_field_alone_as_the_name_channel_asks(corpus: Twin) -> None:
    """FTS5's `title : (...)` with bm25(fts, 1, 0, 0, 0) (lore.retrieve.names)."""
    query = TextQuery((("去", "重"), ("rule",), ("jira", "1234")), fields=("title",))
    assert corpus.pg.name_candidates(query, Filters(), 100) == corpus.sqlite.name_candidates(
        query, Filters(), 100
    )
    weights = [1.0, 0.0, 0.0, 0.0]
    fts5 = corpus.fts5_scores(query, weights)
    assert fts5
    assert corpus.pg_scores(query, list(fts5), weights) == fts5


def test_explain_scores_per_field(corpus: Twin) -> None:
    query = TextQuery((("去", "重"), ("jira",)), (("的",),))
    ids = [n for n, _s in corpus.sqlite.rank(query, Filters(), 10, WEIGHTS)]
    assert ids
    assert corpus.pg.field_scores(query, ids, WEIGHTS) == corpus.sqlite.field_scores(
        query, ids, WEIGHTS
    )


def test_statistics_follow_updates_and_deletes(corpus: Twin) -> None:
    rng = random.Random(7)
    corpus.delete(sorted(corpus.paths)[::3])
    corpus.add([(f"m/{i}.md", random_fields(rng, 20)) for i in range(10)])
    pg, sqlite = corpus.pg, corpus.sqlite
    assert pg.query("SELECT docs, tokens FROM lex_stats") == [
        (len(corpus.paths), sum(len(" ".join(f).split()) for f in corpus.fields.values()))
    ]
    tokens = [*VOCAB, EVERY_NOTE]
    assert pg.document_frequencies(tokens) == sqlite.document_frequencies(tokens)
    assert pg.fts_check() is None and pg.df_drift() == 0
    corpus.assert_same(TextQuery((("去", "重"), ("jira",)), (("的",),)), 20)
    corpus.delete(sorted(corpus.paths))  # deleting every note leaves no term behind
    assert pg.query("SELECT docs, tokens FROM lex_stats") == [(0, 0)]
    assert pg.query("SELECT count(*) FROM lex_terms") == [(0,)]
    assert pg.query("SELECT count(*) FROM lex_postings") == [(0,)]
    assert pg.query("SELECT count(*) FROM lex_packs") == [(0,)]


def test_a_damaged_statistic_is_found(corpus: Twin) -> None:
    pg = corpus.pg
    pg.execute("UPDATE lex_terms SET df = df + 1 WHERE term = 'jira'")
    assert "differs from their postings" in (pg.fts_check() or "")
    assert pg.df_drift() == 1
    # lore's own rows, which `lore rebuild` makes again: not the server's storage, which
    # a reset would be for (tests/reliability/test_doctor.py)
    assert pg.integrity_problems() == ["ok"]


def test_lexical_query_of_a_text_query() -> None:
    query = TextQuery((("a",), ("b",)), (("c",),), (("d",),), ("title",), ((("a",), 2),))
    lexical = pg_lexical.LexicalQuery.of(query)
    assert lexical.phrases() == [("a",), ("a",), ("b",), ("c",), (EVERY_NOTE,)]
    assert lexical.columns == (0,) and lexical.excluded == (("d",),)
    assert pg_lexical.LexicalQuery.of(query, scored=False).generating == (("a",), ("b",))


# -- the notes' parts (issue 12): rank_sections over fts_sections and over PARTS -----------


def random_parts(rng: random.Random) -> list[tuple[int, int, str]]:
    """One to four parts of 0-40 tokens, each ending with the every-note token (as
    lore.derive.sections writes them), at made-up spans."""
    parts = []
    for i in range(rng.randint(1, 4)):
        tokens = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 40)))
        parts.append((i * 100, i * 100 + 99, f"{tokens} {EVERY_NOTE}".lstrip()))
    return parts


@pytest.fixture
def parts_corpus(tmp_path: Path, pg_url: str) -> Twin:
    """50 random notes in folders a/ and b/, each with its parts."""
    rng = random.Random(12)
    twin = make_twin(tmp_path, pg_url)
    notes = [(f"{'ab'[i % 2]}/{i:03d}.md", random_fields(rng, 10)) for i in range(50)]
    twin.add(notes, [random_parts(rng) for _ in notes])
    return twin


def fts5_part_scores(twin: Twin, query: TextQuery) -> dict[int, float]:
    """Every matching part's bm25 as FTS5 computes it over fts_sections (positive); the
    query's fields are ignored, as rank_sections ignores them."""
    rows = twin.sqlite.query(
        "SELECT rowid, bm25(fts_sections) FROM fts_sections WHERE fts_sections MATCH ?",
        [fts_match(query._replace(fields=None), scored=True)],
    )
    return {int(r): -float(s) for r, s in rows}


def assert_same_parts(
    twin: Twin, query: TextQuery, limit: int
) -> dict[int, tuple[float, int, int]]:
    """Both stores pick the same best part of the same notes, with the same scores, and
    every part's PostgreSQL score is FTS5's bit for bit."""
    sqlite, pg = twin.sqlite, twin.pg
    expected = sqlite.rank_sections(query, Filters(), limit)
    assert pg.rank_sections(query, Filters(), limit) == expected, fts_match(query)
    folder = Filters(path="b/")
    assert pg.rank_sections(query, folder, limit) == sqlite.rank_sections(query, folder, limit)
    among = sorted(twin.paths)[::3]
    assert pg.rank_sections(query, Filters(), limit, among) == sqlite.rank_sections(
        query, Filters(), limit, among
    )
    # begun before the other channels' candidates are known (lore.store.sqlite_parts)
    for store in (sqlite, pg):
        assert store.start_sections(query, folder, limit).finish(among) == sqlite.rank_sections(
            query, folder, limit, among
        )
    fts5 = fts5_part_scores(twin, query)
    lexical = pg_lexical.LexicalQuery.of(query._replace(fields=None))
    assert pg_lexical.scores(pg.conn, lexical, [1.0], list(fts5), lx=PARTS) == fts5
    return expected


# A field restriction is ignored for parts (a part is body text), on both backends.
@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=text_queries(fields=("title",)), limit=st.integers(1, 40))
def test_random_queries_rank_parts_as_fts5(
    parts_corpus: Twin, query: TextQuery, limit: int
) -> None:
    assert_same_parts(parts_corpus, query, limit)


def test_parts_follow_updates_and_deletes(parts_corpus: Twin) -> None:
    rng = random.Random(3)
    twin, pg = parts_corpus, parts_corpus.pg
    twin.delete(sorted(twin.paths)[::4])
    notes = [(f"a/new{i}.md", random_fields(rng, 10)) for i in range(8)]
    twin.add(notes, [random_parts(rng) for _ in notes])
    stored = twin.sqlite.query("SELECT count(*) FROM sections")[0][0]
    assert pg.query("SELECT docs FROM part_stats") == [(stored,)]
    query = TextQuery((("去", "重"), ("jira",)), (("的",),))
    assert assert_same_parts(twin, query, 15)
    twin.delete(sorted(twin.paths))  # deleting every note leaves no part and no term
    assert pg.query("SELECT docs, tokens FROM part_stats") == [(0, 0)]
    assert pg.query("SELECT count(*) FROM part_terms") == [(0,)]
    assert pg.query("SELECT count(*) FROM sections") == [(0,)]


def test_ties_between_parts_go_by_part_id(tmp_path: Path, pg_url: str) -> None:
    """30 notes of two equal parts each: the cut and each note's best part fall alike."""
    twin = make_twin(tmp_path, pg_url)
    notes = [(f"z{30 - i:02d}.md", ("", "", "", f"rule {EVERY_NOTE}")) for i in range(30)]
    same = [(0, 9, f"rule x {EVERY_NOTE}"), (10, 19, f"rule x {EVERY_NOTE}")]
    twin.add(notes, [list(same) for _ in notes])
    got = assert_same_parts(twin, TextQuery((("rule",),)), 7)
    assert len(got) == 4 and all(span[1:] == (0, 9) for span in got.values())


def test_a_damaged_part_statistic_is_found(parts_corpus: Twin) -> None:
    pg = parts_corpus.pg
    assert pg.fts_check() is None
    pg.execute("UPDATE part_terms SET df = df + 1 WHERE term = 'jira'")
    pg.execute("UPDATE part_stats SET tokens = tokens + 1")
    problem = pg.fts_check() or ""
    assert "part count differs from their postings" in problem and "parts and" in problem
