"""The notes' parts ranked on SQLite's second connection (lore.store.sqlite_parts): what
start_sections(...).finish(ids) gives is what rank_sections gives and what FTS5's own
part scores give by brute force; the second connection's rows are used only when they
are the state the store's snapshot sees; a large sync leaves the full text merged, with
the same rankings."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pg_ranking import random_fields, random_parts, text_queries
from twin import note_row

from lore.derive.fields import distinct_terms
from lore.store import sqlite_notes
from lore.store.query import Filters, TextQuery
from lore.store.sqlite import SqliteStore
from lore.store.sqlite_search import fts_match

NOTES = 120


def write_notes(store: SqliteStore, seed: int, count: int, prefix: str = "") -> None:
    """`count` random notes in folders a/ and b/, each with one to four parts."""
    rng = random.Random(seed)
    notes = [(f"{prefix}{'ab'[i % 2]}/{i:03d}.md", random_fields(rng, 20)) for i in range(count)]
    with store.transaction():
        for path, fields in notes:
            store.upsert_note(note_row(path, fields, random_parts(rng)), None)
        store.apply_df(Counter(t for _path, fields in notes for t in distinct_terms(fields)))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    folder = tmp_path_factory.mktemp("parts")
    store = SqliteStore(folder / "index.sqlite", folder, bound_to_vault=False)
    write_notes(store, 12, NOTES)
    yield store
    store.close()


def brute_force(
    store: SqliteStore, query: TextQuery, folder: str, limit: int, ids: list[int]
) -> dict[int, tuple[float, int, int]]:
    """rank_sections from FTS5's score of every matching part, in Python: the best `limit`
    parts under `folder` (ties by part id) and every part of the `ids` notes, and of each
    of their notes the first best part."""
    scores = {
        int(pid): float(b)
        for pid, b in store.query(
            "SELECT rowid, bm25(fts_sections) FROM fts_sections WHERE fts_sections MATCH ?",
            [fts_match(query._replace(fields=None), scored=True)],
        )
    }
    parts = {
        int(pid): (int(nid), str(path), int(start), int(end))
        for pid, nid, path, start, end in store.query(
            'SELECT s.id, s.note_id, n.path, s.start, s."end" FROM sections s'
            " JOIN notes n ON n.id = s.note_id"
        )
    }
    passing = sorted((b, pid) for pid, b in scores.items() if parts[pid][1].startswith(folder))
    chosen = {pid for _b, pid in passing[:limit]} | {p for p in scores if parts[p][0] in ids}
    best: dict[int, tuple[float, int, int]] = {}
    for pid in sorted(chosen):
        nid, _path, start, end = parts[pid]
        found = (round(-scores[pid], 6), start, end)
        if nid not in best or found[0] > best[nid][0]:
            best[nid] = found
    return best


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=text_queries(),
    limit=st.integers(1, 60),
    folder=st.sampled_from(["", "b/"]),
    among=st.lists(st.integers(1, NOTES), max_size=12),
)
def test_the_second_connection_ranks_parts_as_one_pass_does(
    store: SqliteStore, query: TextQuery, limit: int, folder: str, among: list[int]
) -> None:
    filters = Filters(path=folder or None)
    expected = brute_force(store, query, folder, limit, among)
    assert store.rank_sections(query, filters, limit, among) == expected
    with store.snapshot():
        assert store.start_sections(query, filters, limit).finish(among) == expected
    assert store.start_sections(query, filters, limit).finish(among) == expected


def test_the_second_connections_rows_are_what_is_returned(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing committed between the steps: the store's own connection ranks nothing."""
    query = TextQuery((("jira",), ("rule",)))
    expected = store.rank_sections(query, Filters(), 30, [3, 4])
    assert expected

    def ranked_here(*_args: object) -> None:
        raise AssertionError("ranked on the store's connection")

    monkeypatch.setattr(store, "rank_sections", ranked_here)
    with store.snapshot():
        assert store.start_sections(query, Filters(), 30).finish([3, 4]) == expected


def test_a_commit_between_the_steps_is_not_mixed_in(tmp_path: Path) -> None:
    """Another process's sync commits after the search's snapshot began: the parts are
    those of the snapshot (ranked again on the store's connection), not of the newer
    state the second connection would read; outside a snapshot, those of the newer one."""
    db = tmp_path / "index.sqlite"
    reader = SqliteStore(db, tmp_path, bound_to_vault=False)
    writer = SqliteStore(db, tmp_path, bound_to_vault=False)
    write_notes(writer, 1, 40)
    query = TextQuery((("jira",),))
    before = reader.rank_sections(query, Filters(), 50, [])
    with reader.snapshot():
        assert reader.note_count() == 40  # the snapshot begins here
        write_notes(writer, 2, 40, prefix="new/")
        assert reader.start_sections(query, Filters(), 50).finish([]) == before
    after = reader.rank_sections(query, Filters(), 50, [])
    assert after != before and max(after) > 40  # the new notes' parts rank too
    pending = reader.start_sections(query, Filters(), 50)
    write_notes(writer, 3, 10, prefix="newer/")  # between the two steps
    assert pending.finish([]) == reader.rank_sections(query, Filters(), 50, [])
    reader.close()
    writer.close()


def test_inside_a_write_transaction_its_own_rows_count(tmp_path: Path) -> None:
    """What a write transaction has written and not committed is ranked too: the second
    connection, which cannot see it, is not used."""
    store = SqliteStore(tmp_path / "index.sqlite", tmp_path, bound_to_vault=False)
    write_notes(store, 9, 20)
    query = TextQuery((("jira",),))
    with store.transaction():
        store.upsert_note(note_row("new.md", ("", "", "", "jira"), [(0, 4, "jira")]), None)
        expected = store.rank_sections(query, Filters(), 50)
        assert any(part[1:] == (0, 4) for part in expected.values())
        assert store.start_sections(query, Filters(), 50).finish([]) == expected
    store.close()


def test_a_ranking_left_unfinished_does_not_stop_the_next(store: SqliteStore) -> None:
    """A search that failed between the two steps: the next one waits for its first step
    and then ranks its own query."""
    store.start_sections(TextQuery((("jira",),)), Filters(), 10)
    query = TextQuery((("rule",), ("去", "重")))
    assert store.start_sections(query, Filters(), 10).finish([5]) == brute_force(
        store, query, "", 10, [5]
    )


def test_closing_the_store_closes_the_second_connection(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "index.sqlite", tmp_path, bound_to_vault=False)
    write_notes(store, 4, 10)
    store.start_sections(TextQuery((("rule",),)), Filters(), 5).finish([])
    reader = store.part_reader
    assert reader is not None
    store.close()
    with pytest.raises(apsw.ConnectionClosedError):
        reader.db.execute("SELECT 1")


def statements_of(store: SqliteStore) -> list[str]:
    """Every statement the store's connection runs from now on."""
    seen: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        seen.append(sql)
        return True

    store.db.exec_trace = trace
    return seen


def merges(statements: list[str]) -> list[str]:
    """The full-text tables the statements merged (FTS5's 'optimize' command)."""
    return [s.split("(")[1].split(")")[0] for s in statements if "VALUES ('optimize')" in s]


def test_a_large_sync_leaves_the_full_text_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing a quarter of the notes or more merges both full-text tables; a smaller
    write does not; the rankings are those of an index never merged."""
    merged = SqliteStore(tmp_path / "merged.sqlite", tmp_path, bound_to_vault=False)
    seen = statements_of(merged)
    write_notes(merged, 6, 80)
    assert merges(seen) == ["fts", "fts_sections"]
    seen.clear()
    write_notes(merged, 7, 10, prefix="more/")  # 10 of 90 notes
    assert merges(seen) == []
    write_notes(merged, 8, 30, prefix="most/")  # 30 of 120
    assert merges(seen) == ["fts", "fts_sections"]

    monkeypatch.setattr(sqlite_notes, "COMPACT_SHARE", 0)  # never merged
    plain = SqliteStore(tmp_path / "plain.sqlite", tmp_path, bound_to_vault=False)
    seen = statements_of(plain)
    write_notes(plain, 6, 80)
    write_notes(plain, 7, 10, prefix="more/")
    write_notes(plain, 8, 30, prefix="most/")
    assert merges(seen) == []
    for store in (merged, plain):
        assert store.fts_check() is None and store.df_drift() == 0
    for query in (TextQuery((("jira",), ("rule",))), TextQuery((("去", "重"),), (("的",),))):
        weights = [4.0, 3.0, 1.0, 1.0]
        assert merged.rank(query, Filters(), 50, weights) == plain.rank(
            query, Filters(), 50, weights
        )
        assert merged.rank_sections(query, Filters(), 50) == plain.rank_sections(
            query, Filters(), 50
        )


OPEN_A_STORE = """
import sys
from pathlib import Path

import apsw

{before}
from lore.store.sqlite import SqliteStore

root = Path(sys.argv[1])
store = SqliteStore(root / "index.sqlite", root, bound_to_vault=False)
store.query("SELECT count(*) FROM notes")
print(apsw.memory_used() > 0)
"""


@pytest.mark.parametrize(
    ("before", "counted"),
    [
        pytest.param("", False, id="first connection"),
        pytest.param("held = apsw.Connection(':memory:')", True, id="a connection open before"),
        pytest.param("apsw.soft_heap_limit(1 << 30)", True, id="a heap limit set"),
    ],
)
def test_sqlite_counts_allocations_only_where_something_needs_it(
    tmp_path: Path, before: str, counted: bool
) -> None:
    """The memory statistic (one mutex for every allocation of the process: lore.store.
    sqlite_parts.unshared_allocator) is off when lore opens the process's first
    connection, and left on where SQLite cannot be configured or a heap limit needs it."""
    run = subprocess.run(
        [sys.executable, "-c", OPEN_A_STORE.format(before=before), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.split() == [str(counted)]
