"""The postings in blocks on PostgreSQL (lore.store.pg_packs) through any sequence of large
writes (packed), small ones (rows), edits of a note in place (same id) and deletions: the
index ranks exactly as FTS5 does after every step, and its statistics stay right."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pg_support import expected_postings, postings_rows
from test_pg_ranking import random_fields, text_queries
from twin import Twin, make_twin, note_row

import lore
from lore.derive.fields import distinct_terms
from lore.store import pg_batch, pg_packs, pg_postings, pg_records
from lore.store.jieba_words import WordTerms
from lore.store.pg_schema import NOTES
from lore.store.postgres import PostgresStore
from lore.store.query import TextQuery

_examples = itertools.count()

steps = st.lists(
    st.tuples(st.sampled_from(["add", "edit", "delete"]), st.integers(1, 12), st.integers(0, 9)),
    min_size=1,
    max_size=6,
)


def edit(twin: Twin, rng: random.Random, k: int) -> None:
    """New text for up to k notes, each keeping its path and id."""
    chosen = rng.sample(sorted(twin.paths), min(k, len(twin.paths)))
    new = {note_id: random_fields(rng, rng.randint(0, 40)) for note_id in chosen}
    df: Counter[str] = Counter()
    for note_id, fields in new.items():
        df.update(distinct_terms(fields))
        df.subtract(distinct_terms(twin.fields[note_id]))
    for store in (twin.sqlite, twin.pg):
        with store.transaction():
            for note_id, fields in new.items():
                assert store.upsert_note(note_row(twin.paths[note_id], fields), note_id) == note_id
            store.apply_df(df)
    twin.fields.update(new)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=steps, query=text_queries())
def test_random_writes_keep_the_blocks_exact(
    tmp_path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    plan: list[tuple[str, int, int]],
    query: TextQuery,
) -> None:
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 4)  # 4 notes or more: a large write
    monkeypatch.setattr(pg_packs, "PACK_SIZE", 3)  # a shared term fills several blocks
    folder = tmp_path / f"example{next(_examples)}"  # a namespace of its own
    folder.mkdir()
    twin = make_twin(folder, pg_url)
    try:
        added = itertools.count()
        for action, k, seed in plan:
            rng = random.Random(seed)
            if action == "add":
                twin.add(
                    [
                        (f"n/{next(added):03d}.md", random_fields(rng, rng.randint(0, 40)))
                        for _ in range(k)
                    ]
                )
            elif action == "edit":
                edit(twin, rng, k)
            else:
                twin.delete(rng.sample(sorted(twin.paths), min(k, len(twin.paths))))
            assert twin.pg.fts_check() is None
            assert twin.pg.df_drift() == 0
            if twin.paths:
                twin.assert_same(query, 10)
    finally:  # a failing example must not keep its connections open for the next
        twin.pg.close()
        twin.sqlite.close()


def test_a_document_id_met_inside_another_record_is_not_cut_there(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record is found in a block by its document's id as packed (4 bytes); the same
    bytes can stand inside an earlier record (counts of 0 in three columns, then the id in
    the body's byte). Such a block is rebuilt record by record: the right posting goes, and
    every other stays; a block whose range holds the id but not its record stays."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 6)  # 3 notes and their parts: packed
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(4):
        (root / f"n{i:02d}.md").write_text(f"# note {i}\n\nzebra common{i % 2}\n")
    with lore.open(root, db=pg_url) as pg, lore.open(root, db=tmp_path / "i.sqlite") as sqlite:
        pg.sync()
        store = pg.store
        assert isinstance(store, PostgresStore)
        dead = int(store.query("SELECT id FROM notes WHERE path = 'n01.md'")[0][0])
        # n00's record, before n01's in the zebra block: zebra is in n00's body alone (its
        # summary is its own), as many times as n01's id.
        (root / "n00.md").write_text(
            "---\nsummary: other\n---\n# note 0\n\n" + "zebra " * dead + "\n"
        )
        pg.rebuild()
        (zebra,) = store.query("SELECT id FROM lex_terms WHERE term = 'zebra'")[0]

        def covering() -> list[tuple[Any, ...]]:
            """The zebra block whose range holds n01: the trap is set when n01's id is met
            first inside n00's record."""
            return store.query(
                f"SELECT data FROM lex_packs WHERE term_id = {int(zebra)}"
                f" AND first_doc <= {dead} AND last_doc >= {dead}"
            )

        packed = dead.to_bytes(pg_records.DOC_BYTES, "big")
        width = pg_packs.record_width(NOTES)
        # Edited again, n01's postings are rows; the block's range still holds its id.
        for edition in ("edited", "again"):
            assert [0 < bytes(d).find(packed) % width for (d,) in covering()] == [True]
            before = postings_rows(store.query, NOTES)
            (root / "n01.md").write_text(f"# note 1\n\nzebra {edition}\n")
            pg.sync()
            sqlite.sync()
            after = postings_rows(store.query, NOTES)
            assert [r for r in after if r[1] != dead] == [r for r in before if r[1] != dead]
            fields = store.query(
                f"SELECT title, tags, summary, body FROM lex_docs WHERE note_id = {dead}"
            )
            size, counts = expected_postings(fields[0])
            expected = sorted((term, dead, size, *n) for term, n in counts.items())
            assert [r for r in after if r[1] == dead] == expected  # the new version, once
            assert store.fts_check() is None and store.df_drift() == 0
            for query in ("zebra", edition, "common0"):
                got = [(h.path, round(h.score, 6)) for h in pg.search(query, mode="mode4")]
                assert got == [
                    (h.path, round(h.score, 6)) for h in sqlite.search(query, mode="mode4")
                ]


_tokens = st.lists(
    st.sampled_from(
        ["中", "国", "人", "a", "ab", "\\", "b\\c", "é", "word", "C:\\path", "12", "ゟ"]
    ),
    max_size=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fields=st.lists(_tokens.map(" ".join), min_size=1, max_size=4),
    load=st.none() | st.integers(1, 99),
    # Words of three and four characters; "ab中国" has four, but its tokens are three.
    words=st.sets(
        st.sampled_from(
            ["中国人", "国人中", "人人人", "中中国", "a中国", "中国人民", "人人人人", "ab中国"]
        )
    ),
)
@example(fields=["ab 中 国 人 民", "a 中 国"], load=None, words={"ab中国", "中国人民", "a中国"})
def test_postings_as_copy_text_are_the_documents_postings(
    pg_url: str, fields: list[str], load: int | None, words: set[str]
) -> None:
    """The sync's postings, written as COPY text (pg_postings.postings_text), arrive in
    PostgreSQL as the reference's (pg_support.expected_postings): each term, backslashes
    included, with its counts per column, the batch and the document's length; the runs
    of three or four one-character tokens spelling one of the index's dictionary words."""
    import psycopg

    word_terms = WordTerms.of(frozenset(words), "test")
    size, text = pg_postings.postings_text(7, fields, load, word_terms=word_terms)
    tf = ", ".join(f"tf{i} integer" for i in range(len(fields)))
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            f'CREATE TEMP TABLE p (term text COLLATE "C", batch integer, doc bigint,'
            f" len integer, {tf})"
        )
        columns = "term, doc, len" if load is None else "term, batch, doc, len"
        names = ", ".join(f"tf{i}" for i in range(len(fields)))
        with conn.cursor() as cur, cur.copy(f"COPY p ({columns}, {names}) FROM STDIN") as copy:
            copy.write(text)
        got = conn.execute(f"SELECT term, batch, doc, len, {names} FROM p").fetchall()
    expected_size, counts = expected_postings(fields, word_terms)
    assert size == expected_size
    assert sorted(got) == sorted((t, load, 7, size, *n) for t, n in counts.items())


def unfit_postings(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Those of these postings (term, document, length, counts) no block record holds."""
    return [
        r for r in rows if r[1] > pg_records.MAX_DOC or max(r[3:], default=0) > pg_records.MAX_COUNT
    ]


def test_postings_a_block_record_cannot_hold_stay_rows(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count over 255 and a document id over 2^31 - 1 do not fit a block record
    (lore.store.pg_records): a large sync keeps such postings as rows, every other in
    blocks, and the index ranks as FTS5 does through edits, deletions and a rebuild."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 4)  # a large sync: postings in blocks
    monkeypatch.setattr(pg_packs, "PACK_SIZE", 3)  # a shared term fills several blocks
    real_ids = PostgresStore.new_ids
    past = pg_records.MAX_DOC - 8  # the notes' and parts' ids cross the block record's top

    def high_ids(self: PostgresStore, table: str, n: int) -> list[int]:
        return [past + i for i in real_ids(self, table, n)]

    monkeypatch.setattr(PostgresStore, "new_ids", high_ids)
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(16):
        many = "zebra " * (250 + 3 * i)  # 250 to 295 times: some counts fit a byte
        (root / f"n{i:02d}.md").write_text(f"# note {i}\n\n{many}common 共同 word{i % 3}\n")
    queries = ["zebra", "common", "共同", "word1", "zebra word2", "note"]
    with lore.open(root, db=pg_url) as pg, lore.open(root, db=tmp_path / "i.sqlite") as sqlite:

        def same_everywhere() -> None:
            pg.sync()
            sqlite.sync()
            store = pg.store
            assert isinstance(store, PostgresStore)
            assert store.fts_check() is None and store.df_drift() == 0
            rows = postings_rows(store.query, NOTES, blocks=False)
            assert set(unfit_postings(postings_rows(store.query, NOTES))) <= set(rows)
            for query in queries:
                got = [(h.path, round(h.score, 6)) for h in pg.search(query, mode="mode4")]
                want = [(h.path, round(h.score, 6)) for h in sqlite.search(query, mode="mode4")]
                assert got == want, query

        pg.sync()
        store = pg.store
        assert isinstance(store, PostgresStore)
        ids = sorted(int(i) for (i,) in store.query("SELECT id FROM notes"))
        assert ids[0] <= pg_records.MAX_DOC < ids[-1]
        unfit = unfit_postings(postings_rows(store.query, NOTES))
        assert any(r[1] <= pg_records.MAX_DOC for r in unfit)  # by a count alone
        assert any(max(r[3:]) <= pg_records.MAX_COUNT for r in unfit)  # by the id alone
        # After a large sync, the postings a block record cannot hold are the rows, alone.
        assert postings_rows(store.query, NOTES, blocks=False) == unfit
        same_everywhere()
        (root / "n03.md").write_text("# note 3\n\n" + "zebra " * 400 + "edited\n")
        (root / "n15.md").write_text("# note 15\n\nzebra once common\n")
        (root / "n07.md").unlink()
        same_everywhere()
        pg.rebuild()
        sqlite.rebuild()
        same_everywhere()
