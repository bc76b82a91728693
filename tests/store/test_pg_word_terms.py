"""Three or four adjacent one-character tokens spelling a word of jieba's dictionary are a
term of their own on PostgreSQL (issue 15): a Chinese word of three or four characters is
looked up like a two-character one, not counted in the token streams of every note holding
its bigrams (at 100k notes, most of the slowest searches' time); any other run of three or
more is counted, as before. An index made before holds no such terms, and one made with
another dictionary uses none of its own: both count, with the same answers, until a
rebuild (by any process) makes the installed dictionary's words terms; writers follow what
the index holds, read under the write lock."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pg_support import expected_postings, postings_rows

import lore
from lore.store import pg_phrases
from lore.store.jieba_words import NO_WORDS, WordTerms, installed_words
from lore.store.pg_phrases import LexicalQuery, resolve
from lore.store.pg_schema import NOTES, PARTS, WORDS_META, Lexicon
from lore.store.postgres import PostgresStore

# What `lore status` and `lore doctor` say of them (the engine's "dictionary words").
WORDS = "dictionary words"
SIZES = "words of three and four characters)"
COUNTED_IN = "counted in the notes (an index made"
REBUILD = ": `lore rebuild` makes them terms)"

NOTES_TEXT = {
    "sport/a.md": "# 运动员\n\n游泳运动员的训练。运动员 运动员\n\n## 记录\n\n他是运动员吗",
    "sport/b.md": "# 运动\n\n运动和动员和员工\n",  # 运动员's bigrams, apart
    "bio/c.md": "# 古生物学家\n\n古生物学家命名了浮龙。生物学 生物学家\n",
    "mixed/d.md": "# jira 1234\n\n运动员 jira 1234 基督教 的 教 基 督，动员大会\n",
    "geo/f.md": "# 巴黎\n\n巴黎的地理位置。地理 位置 理位\n",  # 地理位置, and its bigrams apart
}
QUERIES = (
    "运动员",
    "古生物学家",
    "生物学",
    "基督教",
    "运动 员工",
    "jira 1234",
    "动员大会",
    "地理位置",
    "地理 位置",
)
# Words of the dictionary but the last two: 古生物学家 is counted in the notes holding its
# words of four 古生物学 and 生物学家; 动员大 in those holding 动员 and 员大.
PHRASES = [
    ("运", "动", "员"),
    ("生", "物", "学"),
    ("地", "理", "位", "置"),
    ("动", "员", "大", "会"),
    ("古", "生", "物", "学", "家"),
    ("动", "员", "大"),
]
COUNTED = PHRASES[4:]


def write_vault(root: Path) -> None:
    for rel, text in NOTES_TEXT.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@contextmanager
def indexed(root: Path, pg_url: str) -> Iterator[tuple[lore.Vault, lore.Vault, PostgresStore]]:
    """The vault indexed on PostgreSQL and on SQLite (beside it), and the PostgreSQL store."""
    with (
        lore.open(root, db=pg_url) as pg,
        lore.open(root, db=root.parent / "i.sqlite") as sqlite,
    ):
        pg.sync()
        sqlite.sync()
        assert isinstance(pg.store, PostgresStore)
        yield pg, sqlite, pg.store


def answers(vault: lore.Vault) -> list[list[tuple[str, float]]]:
    return [
        [(hit.path, round(hit.score, 6)) for hit in vault.search(q, mode="mode4")] for q in QUERIES
    ]


def counted_in_streams(store: PostgresStore, lx: Lexicon) -> list[tuple[str, ...]]:
    """Which of PHRASES a search resolves by counting them in the token streams."""
    resolved = resolve(store.lexical(), LexicalQuery(tuple(PHRASES)), [1.0] * lx.width, lx)
    return [PHRASES[i] for i in sorted(resolved.counted)]


def word_terms(store: PostgresStore) -> dict[int, int]:
    """How many terms the index holds of three tokens and of four."""
    sql = (
        "SELECT cardinality(string_to_array(term, ' ')) AS n, count(*) FROM lex_terms"
        " GROUP BY n HAVING cardinality(string_to_array(term, ' ')) IN (3, 4)"
    )
    return {int(n): int(count) for n, count in store.query(sql)}


def postings_of(store: PostgresStore, path: str) -> list[tuple[object, ...]]:
    (note_id,) = store.query("SELECT id FROM notes WHERE path = ?", (path,))[0]
    return [row for row in postings_rows(store.query, NOTES) if row[1] == note_id]


def as_written(
    store: PostgresStore, path: str, word_terms: WordTerms | None = None
) -> list[tuple[object, ...]]:
    """The postings the note's token streams make (pg_support's reference; by default with
    the installed dictionary's words)."""
    note_id, *fields = store.query(
        "SELECT d.note_id, d.title, d.tags, d.summary, d.body FROM lex_docs d"
        " JOIN notes n ON n.id = d.note_id WHERE n.path = ?",
        (path,),
    )[0]
    size, counts = expected_postings(fields, word_terms)
    return sorted((term, note_id, size, *n) for term, n in counts.items())


def test_a_new_index_looks_words_up_as_one_term(tmp_path: Path, pg_url: str) -> None:
    root = tmp_path / "vault"
    write_vault(root)
    with indexed(root, pg_url) as (pg, sqlite, store):
        assert store.get_meta(WORDS_META) == installed_words().digest != ""
        assert store.engine()[WORDS] == f"terms ({len(installed_words()):,} {SIZES}"
        assert answers(pg) == answers(sqlite)
        assert answers(pg)[0][0][0] == "sport/a.md"
        assert answers(pg)[QUERIES.index("地理位置")][0][0] == "geo/f.md"
        assert counted_in_streams(store, NOTES) == COUNTED
        assert counted_in_streams(store, PARTS) == COUNTED
        for path in NOTES_TEXT:
            assert postings_of(store, path) == as_written(store, path)
        # 运动员 古生物 生物学 基督教; 古生物学 生物学家 动员大会 地理位置
        assert word_terms(store) == {3: 4, 4: 4}
        assert store.fts_check() is None and store.df_drift() == 0


def test_an_older_index_counts_them_until_a_rebuild(tmp_path: Path, pg_url: str) -> None:
    """Made without word terms (as before this change: the mark taken away before the
    first sync), an index keeps writing none, so no note is missing one it should hold,
    and counts such phrases in the streams; another process's rebuild adds them, and a
    handle opened before writes them from then on."""
    root = tmp_path / "vault"
    write_vault(root)
    with (
        lore.open(root, db=pg_url) as old,
        lore.open(root, db=tmp_path / "i.sqlite") as sqlite,
    ):
        store = old.store
        assert isinstance(store, PostgresStore)
        store.delete_meta(WORDS_META)
        old.sync()
        sqlite.sync()
        assert word_terms(store) == {}
        assert store.engine()[WORDS] == f"{COUNTED_IN} before they were terms{REBUILD}"
        assert counted_in_streams(store, NOTES) == PHRASES
        assert answers(old) == answers(sqlite)
        (root / "sport" / "b.md").write_text("# 运动员\n\n员工 运动员 运动\n", encoding="utf-8")
        old.sync()
        sqlite.sync()
        assert word_terms(store) == {}
        assert postings_of(store, "sport/b.md") == as_written(store, "sport/b.md", NO_WORDS)
        assert answers(old) == answers(sqlite)

        with lore.open(root, db=pg_url) as other:
            other.rebuild()
        assert word_terms(store) == {3: 4, 4: 4}
        assert store.engine()[WORDS].startswith("terms (")
        assert counted_in_streams(store, NOTES) == COUNTED
        (root / "sport" / "b.md").write_text("# 动员\n\n动员 运动员 员工\n", encoding="utf-8")
        old.sync()  # opened before the rebuild: it writes what the index holds now
        sqlite.sync()
        assert postings_of(store, "sport/b.md") == as_written(store, "sport/b.md")
        assert answers(old) == answers(sqlite)
        assert store.fts_check() is None and store.df_drift() == 0


def test_an_index_made_with_another_dictionary_uses_none_of_its_words(
    tmp_path: Path, pg_url: str
) -> None:
    """Its word terms are not the installed dictionary's: readers count every such
    phrase, the next writer marks it as holding none and writes none (the old terms stay,
    unread and consistent), and a rebuild makes the installed words terms."""
    root = tmp_path / "vault"
    write_vault(root)
    with indexed(root, pg_url) as (pg, sqlite, store):
        made = word_terms(store)
        store.set_meta(WORDS_META, "another-dictionary")
        assert store.engine()[WORDS] == f"{COUNTED_IN} with another jieba dictionary{REBUILD}"
        (root / "sport" / "b.md").write_text("# 运动员\n\n员工 运动员 运动\n", encoding="utf-8")
        assert counted_in_streams(store, NOTES) == PHRASES
        assert answers(pg) == answers(sqlite)
        pg.sync()
        sqlite.sync()
        assert store.get_meta(WORDS_META) is None
        assert postings_of(store, "sport/b.md") == as_written(store, "sport/b.md", NO_WORDS)
        assert word_terms(store) == made  # sport/b.md held no dictionary word before
        assert counted_in_streams(store, NOTES) == PHRASES
        assert answers(pg) == answers(sqlite)
        assert store.fts_check() is None and store.df_drift() == 0
        pg.rebuild()
        assert store.get_meta(WORDS_META) == installed_words().digest
        assert counted_in_streams(store, NOTES) == COUNTED
        assert postings_of(store, "sport/b.md") == as_written(store, "sport/b.md")
        assert answers(pg) == answers(sqlite)


def test_a_phrase_counted_in_the_streams_reads_only_its_words_notes(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A longer phrase is counted in the notes holding its dictionary words and the bigrams
    they do not cover (运动员工: 运动员 and 员工): a note holding its bigrams apart (b.md:
    运动, 动员, 员工) is not read, nor one holding its word alone (a.md: 运动员)."""
    root = tmp_path / "vault"
    write_vault(root)
    (root / "sport" / "e.md").write_text("# 运动员工\n\n运动员工会\n", encoding="utf-8")
    asked: list[list[int]] = []
    real = pg_phrases._count_statement

    def spy(*args: object) -> object:
        statement = real(*args)  # type: ignore[arg-type]
        if statement is not None:
            asked.append(statement[1]["docs"])
        return statement

    monkeypatch.setattr(pg_phrases, "_count_statement", spy)
    with indexed(root, pg_url) as (pg, sqlite, store):
        ids = {str(p): int(i) for i, p in store.query("SELECT id, path FROM notes")}
        query = LexicalQuery((("运", "动", "员", "工"),))
        resolve(store.lexical(), query, [1.0] * NOTES.width, NOTES)
        assert asked == [[ids["sport/e.md"]]]
        hits = [h.path for h in pg.search("运动员工", mode="mode4")]
        assert hits == [h.path for h in sqlite.search("运动员工", mode="mode4")]
        assert hits[0] == "sport/e.md"


@pytest.mark.parametrize(
    ("phrase", "anchors"),
    [
        ("古生物学家", ["古 生 物 学", "生 物 学 家"]),  # its words of three are inside them
        ("运动员工", ["运 动 员", "员 工"]),
        ("在地理位置", ["地 理 位 置", "在 地"]),
        ("动员大", ["动 员", "员 大"]),
    ],
)
def test_a_counted_phrase_is_anchored_on_its_longest_words(phrase: str, anchors: list[str]) -> None:
    assert pg_phrases._anchors(tuple(phrase), installed_words()) == anchors
