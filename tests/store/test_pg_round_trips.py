"""What a search and a sync cost in round trips to PostgreSQL (issue 15), and that the
savings change no answer: statistics read once per generation of the index and never
served stale, exact scores whatever the weights, a sync of changed notes that deletes
their old rows with the batch (round trips per batch, not per note); and, on both backends,
the old fields of many notes read at once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_pg_batches import answers, write_notes
from test_pg_ranking import corpus  # noqa: F401 (a fixture)
from twin import Twin

import lore
from bench.round_trips import counted
from lore.store import pg_cache
from lore.store.postgres import PostgresStore
from lore.store.query import Filters, TextQuery
from lore.store.sqlite import SqliteStore


@contextmanager
def synced_pair(tmp_path: Path, pg_url: str, notes: int) -> Iterator[tuple[lore.Vault, ...]]:
    """The vault of `notes` notes indexed on SQLite and on PostgreSQL, both synced."""
    root = tmp_path / "vault"
    write_notes(root, notes, "first")
    with lore.open(root, db=tmp_path / "index.sqlite") as sqlite, lore.open(root, db=pg_url) as pg:
        sqlite.sync()
        pg.sync()
        yield sqlite, pg


def round_trips(store: Any) -> AbstractContextManager[list[int]]:
    """The times the client waits for the server inside the block (bench.round_trips)."""
    assert isinstance(store, PostgresStore)
    return counted(store.conn)


def test_a_search_reads_the_statistics_once_per_generation(tmp_path: Path, pg_url: str) -> None:
    with synced_pair(tmp_path, pg_url, 30) as (sqlite, pg):
        root = pg.root
        with round_trips(pg.store) as first:
            pg.search("客户去重规则 budget")
        with round_trips(pg.store) as again:
            pg.search("客户去重规则 budget")
        assert 0 < again[0] < first[0]  # the terms, counts and phrases were kept
        # Another process changes the index: the next search sees it, not the cache.
        with lore.open(root, db=pg_url) as writer:
            (root / "n0" / "note000.md").write_text("# 客户去重规则\n\nbudget 客户去重规则\n")
            writer.sync()
            sqlite.sync()
        assert answers(pg) == answers(sqlite)
        assert pg.search("客户去重规则 budget")[0].path == "n0/note000.md"


def test_the_note_count_is_read_once_per_generation(tmp_path: Path, pg_url: str) -> None:
    """Every search asks how many notes there are (a pass over them on the server): the
    answer is kept for the generation, per access rule, and a sync's notes are counted."""
    with synced_pair(tmp_path, pg_url, 30) as (sqlite, pg):
        allow = ("n0/*",)
        with pg.store.snapshot():
            with round_trips(pg.store) as first:
                counts = (pg.store.note_count(), pg.store.note_count(allow))
            with round_trips(pg.store) as again:
                assert (pg.store.note_count(), pg.store.note_count(allow)) == counts
        assert counts == (30, 10) and first[0] == 2 and again[0] == 0
        with lore.open(pg.root, db=pg_url) as writer:
            (pg.root / "n0" / "new.md").write_text("# 新笔记\n\n客户\n", encoding="utf-8")
            writer.sync()
        sqlite.sync()
        with pg.store.snapshot(), sqlite.store.snapshot():
            assert pg.store.note_count() == sqlite.store.note_count() == 31
            assert pg.store.note_count(allow) == sqlite.store.note_count(allow) == 11


def test_the_same_answers_whatever_the_cache_has_room_for(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches keep postings for the next, up to a bound (lore.store.pg_cache): with room
    for none of them, some or all, the same answers; a write lets them go as it begins."""
    with synced_pair(tmp_path, pg_url, 30) as (sqlite, pg):
        expected = answers(sqlite)
        assert expected[0]
        store = pg.store
        assert isinstance(store, PostgresStore)
        trips: dict[int, int] = {}
        full = pg_cache.MAX_BYTES
        for room in (0, 4_000, full):
            monkeypatch.setattr(pg_cache, "MAX_BYTES", room)
            store.read_cache.clear()
            assert answers(pg) == expected
            with round_trips(store) as again:
                assert answers(pg) == expected  # from what the first searches kept
            assert store.read_cache.size <= room
            trips[room] = again[0]
        assert trips[0] > trips[full]  # with no room, the postings were read again
        assert 0 < store.read_cache.size
        with store.transaction():
            assert store.read_cache.size == 0


def test_weights_the_server_cannot_sum_as_fts5_are_summed_exactly(
    corpus: Twin,  # noqa: F811 (the fixture imported above)
) -> None:
    """f(p) of a weight that is not a multiple of 1/1024 is FTS5's repeated sum: the
    scores are still FTS5's bit for bit, and the order is SQLite's."""
    weights = [0.3, 0.7, 1.1, 0.9]
    query = TextQuery((("去", "重"), ("rule",), ("jira", "1234")), (("的",),))
    fts5 = corpus.fts5_scores(query, weights)
    assert fts5
    assert corpus.pg_scores(query, list(fts5), weights) == fts5
    for limit in (1, 5, 30):
        expected = corpus.sqlite.rank(query, Filters(), limit, weights)
        assert corpus.pg.rank(query, Filters(), limit, weights) == expected


def test_an_edit_sync_costs_round_trips_per_batch_not_per_note(tmp_path: Path, pg_url: str) -> None:
    with synced_pair(tmp_path, pg_url, 40) as (sqlite, pg):
        root = pg.root
        trips = []
        for edited, edition in ((2, "second"), (30, "third")):
            write_notes(root, edited, edition)
            with round_trips(pg.store) as box:
                report = pg.sync()
            assert len(report.changed) == edited
            trips.append(box[0])
            sqlite.sync()
            assert answers(pg) == answers(sqlite)
        # 28 more notes, less than a round trip more each (it was about 24 each)
        assert trips[1] - trips[0] < 28
        store = pg.store
        assert isinstance(store, PostgresStore)
        assert store.fts_check() is None and store.df_drift() == 0


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_old_fields_of_many_notes_at_once(tmp_path: Path, pg_url: str, backend: str) -> None:
    root = tmp_path / "vault"
    write_notes(root, 12, "first")
    db = tmp_path / "index.sqlite" if backend == "sqlite" else pg_url
    with lore.open(root, db=db) as vault:
        vault.sync()
        store = vault.store
        assert isinstance(store, SqliteStore | PostgresStore)
        ids = [int(r[0]) for r in store.query("SELECT id FROM notes ORDER BY path")]
        many = store.notes_fields([*ids[::2], 10**6])  # an id no note has is left out
        assert many == {nid: store.note_fields(nid) for nid in ids[::2]}
        assert many[ids[0]][3] == ["规则", "t0"]  # the tags, in order
