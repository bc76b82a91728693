"""Scale and limits: the per-file size cap, and queries that never load every row.

The 100k-note memory figure comes from bench/scale.py (bench/reliability.py quotes it);
here the same property is proven on a smaller index by counting the rows every search
statement hands to Python and reading SQLite's query plans.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import lore
from lore.cli import main
from lore.index.sync import sync as core_sync
from lore.retrieve import snippet
from lore.retrieve.hybrid import CANDIDATES_WANTED
from lore.retrieve.query import QueryTerm

# -- the size cap -----------------------------------------------------------------------------

CAP = 4096


def _note_of_size(size: int, tail: str) -> bytes:
    head = "# Big\n" + "中文 headword " * 2000
    data = head.encode()[: size - len(tail.encode())]
    data = data.decode("utf-8", "ignore").encode()  # whole characters only
    return data + b" " * (size - len(data) - len(tail.encode())) + tail.encode()


@pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL
def test_files_over_the_cap_are_indexed_by_their_head_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "at-cap.md").write_bytes(_note_of_size(CAP, "capword"))
    (root / "over-cap.md").write_bytes(_note_of_size(CAP + 1, "lostword"))
    (root / "small.md").write_text("small note")
    result = CliRunner().invoke(
        main, ["index", str(root), "--json"], env={"LORE_MAX_FILE_BYTES": str(CAP)}
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    warned = {w["path"]: w["reason"] for w in report["warnings"]}
    assert list(warned) == ["over-cap.md"]
    assert "only its head is indexed" in warned["over-cap.md"]
    assert "4,096 bytes" in warned["over-cap.md"] and "4,097 bytes" in warned["over-cap.md"]

    with lore.open(root, max_file_bytes=CAP) as vault:
        assert vault.note("at-cap.md")["truncated"] is False
        over = vault.note("over-cap.md")
        assert over["truncated"] is True and over["size"] == CAP + 1
        assert len(over["body"].encode()) <= CAP
        assert [h.path for h in vault.search("capword")] == ["at-cap.md"]
        assert list(vault.search("lostword")) == []  # past the head
        assert "over-cap.md" in [h.path for h in vault.search("headword", limit=5)]
        # Reported again by doctor long after the sync that warned, and not a problem.
        assert vault.sync().wrote is False
        doctor = vault.doctor()
        assert doctor.ok and doctor.truncated == ["over-cap.md"]
    # Raising the cap re-reads nothing by itself (the stat did not change); rebuild does.
    with lore.open(root, max_file_bytes=CAP * 4) as vault:
        vault.rebuild()
        assert vault.note("over-cap.md")["truncated"] is False
        assert [h.path for h in vault.search("lostword")] == ["over-cap.md"]


# -- queries never load every row -------------------------------------------------------------
# SQLite only: the rows apsw hands to Python and SQLite's query plans. PostgreSQL's search
# reads are counted in statements and round trips instead (tests/store/test_pg_round_trips.py).


@dataclass
class Trace:
    """Rows each statement hands to Python, and the statements (with their bindings)."""

    rows: int = 0
    statements: list[tuple[str, Any]] = field(default_factory=list)


def traced(db: apsw.Connection) -> Trace:
    trace = Trace()

    def on_exec(_cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        trace.statements.append((sql, bindings))
        return True

    def on_row(_cursor: apsw.Cursor, row: Any) -> Any:
        trace.rows += 1
        return row

    db.exec_trace = on_exec
    db.row_trace = on_row
    return trace


def plans(db: apsw.Connection, trace: Trace) -> list[tuple[str, list[str]]]:
    db.exec_trace = None
    db.row_trace = None
    out = []
    for sql, bindings in trace.statements:
        head = sql.lstrip().split(None, 1)[0].upper()
        if head in ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "CREATE", "DROP"):
            continue
        detail = [str(r[3]) for r in db.execute("EXPLAIN QUERY PLAN " + sql, bindings)]
        out.append((sql, detail))
    return out


def _many_notes(root: Path, n: int) -> None:
    for i in range(n):
        folder = root / "notes" / f"{i // 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i:05d}.md").write_text(
            f"---\ntitle: note {i}\ntags: [common, t{i % 7}]\ndate: 2026-01-{1 + i % 28:02d}\n"
            f"---\nshared words walrus{i} common 共同 内容 客户\n",
            encoding="utf-8",
        )


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, Path]]:
    """Two indexes, 500 and 2000 notes (both larger than the candidate pool), every note
    sharing words, a tag and Chinese."""
    out = {}
    for n in (500, 2000):
        root = tmp_path_factory.mktemp(f"rows{n}") / "vault"
        _many_notes(root, n)
        with lore.open(root) as vault:
            core_sync(vault.store, vault.root, views=vault.derived_views)  # the core transaction
        out[n] = root
    yield out


SEARCHES = [
    pytest.param("shared", {}, id="word in every note"),
    pytest.param("common", {}, id="tag of every note"),
    pytest.param("shared common 共同 内容", {}, id="mixed"),
    pytest.param("客户", {}, id="chinese in every note"),
    pytest.param("note", {}, id="title word of every note"),
    pytest.param("walrus12", {}, id="one note"),
    pytest.param("shared", {"tags": ["common"]}, id="tag filter"),
    pytest.param("shared", {"path": "notes/"}, id="path filter"),
    pytest.param("shared", {"since": "2026-01-01", "until": "2026-12"}, id="date filter"),
    pytest.param("shared", {"explain": True}, id="explain"),
]
# Rows for the candidate pool (BM25-ranked CANDIDATES_WANTED = 500 deep whatever the limit,
# then each channel's reads of the pool: about three rows per ranked note), the parts
# ranked as deep (lore.retrieve.sections: one row each) and the hits; and no more at 2,000
# notes than at 500 (below): what a search reads does not grow with the vault.
MAX_ROWS = 4 * CANDIDATES_WANTED + 300
# Entity cards are loaded whole to recognise entity names (one row per card, not per note);
# test_entity_registry_read_does_not_scan_notes covers how that read is planned.
ENTITY_TABLES = ("entity_defs", "entity_aliases")


# Not passes over the vault: FTS5's own tables answering MATCH (the notes, and their parts:
# lore.derive.sections; `part_hits` holds the parts' matches with their bm25, read once for
# the best and once for the other channels' candidates: store.sqlite_parts), and json_each
# over one hit's key claims (store.note_llm).
NOT_SCANS = (
    "SCAN fts VIRTUAL TABLE",
    "SCAN fts_sections VIRTUAL TABLE INDEX 0:M",
    "SCAN temp.part_hits",
    "SCAN claim VIRTUAL TABLE",
)


def _scans(db: apsw.Connection, trace: Trace) -> list[str]:
    """Full passes over a table other than FTS5's own (BM25 scores its matches) and
    count(*) over the smallest index (SQLite keeps no row count)."""
    found = []
    for sql, detail in plans(db, trace):
        if any(table in sql for table in ENTITY_TABLES):
            continue
        for step in detail:
            if not step.startswith("SCAN ") or step.startswith(NOT_SCANS):
                continue
            if step.startswith("SCAN notes USING COVERING INDEX") and "count(" in sql:
                continue
            found.append(f"{step} in {sql}")
    return found


@pytest.mark.parametrize(("query", "options"), SEARCHES)
def test_a_search_fetches_rows_for_its_hits_not_for_the_vault(
    indexes: dict[int, Path], query: str, options: dict[str, Any]
) -> None:
    fetched = {}
    for n, root in indexes.items():
        with lore.open(root) as vault:
            vault.search(query, **options)  # warm caches (term_df, jieba)
            # the store's connection and the one it ranks the parts on (store.sqlite_parts)
            reader = vault.store.part_reader
            assert reader is not None
            connections = [vault.store.db, reader.db]
            traces = [traced(db) for db in connections]
            result = vault.search(query, limit=10, **options)
            fetched[n] = sum(trace.rows for trace in traces)
            assert result, result.reason
            assert [_scans(db, t) for db, t in zip(connections, traces, strict=True)] == [[], []]
            assert traces[1].statements  # the parts were ranked there
    assert fetched[2000] <= MAX_ROWS, fetched
    assert fetched[2000] <= fetched[500] + 20, fetched  # does not grow with the vault


def test_entity_registry_read_does_not_scan_notes(indexes: dict[int, Path]) -> None:
    with lore.open(indexes[2000]) as vault:
        trace = traced(vault.store.db)
        vault.search("shared")
        reads = [(sql, d) for sql, d in plans(vault.store.db, trace) if "entity_defs" in sql]
    assert reads
    for sql, detail in reads:
        assert not any(step.startswith("SCAN n") for step in detail), (sql, detail)


# -- snippet windows stay linear --------------------------------------------------------------

_TERMS = [
    QueryTerm(("a",), "word"),
    QueryTerm(("中",), "cjk_char"),
    QueryTerm(("中", "文"), "cjk_word"),
    QueryTerm(("x", "y"), "phrase"),
]


def _brute_force(matches: list[snippet.Match], width: int) -> tuple[int, int]:
    """The definition: the window [lo, hi) starting at each match (holding at least that
    match), best by the weight of its distinct terms, earliest on ties."""
    best = (-1.0, 0, 0)
    for lo in range(len(matches)):
        hi = lo + 1
        while hi < len(matches) and matches[hi].end - matches[lo].start <= width:
            hi += 1
        distinct = {m.term for m in matches[lo:hi]}
        score = sum(snippet._WEIGHTS.get(t.kind, 1.0) * len(t.tokens) for t in distinct)
        if score > best[0]:
            best = (score, lo, hi)
    return best[1], best[2]


@settings(max_examples=300)
@given(
    spans=st.lists(
        st.tuples(st.integers(0, 400), st.integers(1, 30), st.integers(0, len(_TERMS) - 1)),
        max_size=40,
    ),
    width=st.integers(1, 120),
)
def test_best_window_is_the_brute_force_window(
    spans: list[tuple[int, int, int]], width: int
) -> None:
    matches = sorted(
        (snippet.Match(s, s + n, _TERMS[t]) for s, n, t in spans), key=lambda m: (m.start, m.end)
    )
    assert snippet._best_window(matches, width) == _brute_force(matches, width)
