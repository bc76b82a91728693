"""The sync's writes on PostgreSQL in batches (issue 15): many batches index what one does,
a large sync sets its terms' counts in place, a batch that fails takes the whole sync with
it, new ids are given as SQLite gives rowids,
an up-to-date vault opens while another process syncs it; and what both backends share:
a note's repeated tags and links kept as first written, tags looked up many at a time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import build_vault
from pg_support import expected_postings, postings_rows, schema_rows

import lore
from lore.index import sync as sync_module
from lore.store import pg_base, pg_batch, pg_packs, pg_postings
from lore.store.pg_base import PgBase
from lore.store.pg_packs import Postings
from lore.store.pg_schema import NOTES, PARTS, Lexicon
from lore.store.postgres import PostgresStore

QUERIES = ("客户去重规则", "step7", "budget 记录", "规则 第三节", "missing-word")


def write_notes(root: Path, n: int, edition: str) -> None:
    for i in range(n):
        path = root / f"n{i // 10}" / f"note{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntags: [规则, t{i % 3}]\n---\n# 笔记 {i}\n\n第 {i} 条记录 {edition}：客户去重规则"
            f" step{i} budget{i * 7}.\n\n## 第三节\n\n规则 {edition} 的第三节 part{i}.\n",
            encoding="utf-8",
        )


def answers(vault: lore.Vault) -> list[list[tuple[str, float]]]:
    return [
        [(hit.path, round(hit.score, 6)) for hit in vault.search(q, mode="mode4")] for q in QUERIES
    ]


def test_many_small_batches_index_what_sqlite_does(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 7)  # dozens of batches, a thread each
    root = tmp_path / "vault"
    write_notes(root, 40, "first")
    with lore.open(root, db=tmp_path / "index.sqlite") as sqlite, lore.open(root, db=pg_url) as pg:
        sqlite.sync()
        pg.sync()
        assert answers(pg) == answers(sqlite) and answers(pg)[0]
        write_notes(root, 25, "second")  # changed notes, some gone
        for gone in sorted(root.rglob("note03*.md")):
            gone.unlink()
        sqlite.sync()
        pg.sync()
        assert answers(pg) == answers(sqlite)
        store = pg.store
        assert isinstance(store, PostgresStore)
        assert store.fts_check() is None and store.df_drift() == 0


def test_a_large_sync_packs_its_postings_and_holds_every_one_the_direct_path_does(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync of many batches puts its postings in once, at the end, packed in blocks
    (lore.store.pg_packs): every posting (term ids included) what writing them batch by
    batch as rows gives, every other row the same, in a fraction of the space. A sync
    loading more than MAX_LOAD_CHARACTERS puts them in each time it has loaded that much
    (the server's disk holds a bounded load): the same postings and term ids again, in
    blocks in document order, a term's partly filled one once per load."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 9)  # dozens of batches
    monkeypatch.setattr(pg_packs, "PACK_SIZE", 16)  # a common term fills several blocks
    root = tmp_path / "vault"
    write_notes(root, 240, "first")
    flushes: list[int] = []
    real_flush = pg_postings.flush_loaded

    def counted(lexicons: Any) -> str:
        flushes.append(len(lexicons))
        return real_flush(lexicons)

    monkeypatch.setattr("lore.store.pg_base.flush_loaded", counted)
    sizes, postings = {}, {}
    for namespace in ("direct", "deferred", "bounded"):
        with monkeypatch.context() as patch:
            if namespace == "direct":  # each batch's postings written as it is sent
                patch.setattr(PgBase, "_send_deferred", PgBase._send)
            if namespace == "bounded":  # a few batches' documents at a time
                patch.setattr(pg_base, "MAX_LOAD_CHARACTERS", 3000)
            flushes.clear()
            url = f"{pg_url}{'&' if '?' in pg_url else '?'}vault={namespace}"
            with lore.open(root, db=url) as vault:
                vault.sync()
                store = vault.store
                assert isinstance(store, PostgresStore)
                assert store.fts_check() is None and store.df_drift() == 0
                sizes[namespace] = int(
                    store.query(
                        "SELECT sum(pg_total_relation_size(t)) FROM unnest(ARRAY['lex_postings',"
                        " 'lex_packs', 'part_postings', 'part_packs']) t"
                    )[0][0]
                )
                postings[namespace] = [postings_rows(store.query, lx) for lx in (NOTES, PARTS)]
                for lx in (NOTES, PARTS):
                    assert_blocks_in_order(store.query, lx)
        if namespace == "bounded":  # several loads of both, and the rest at the end
            assert len(flushes) > 5 and set(flushes) <= {1, 2}, flushes
        else:
            assert flushes == ([] if namespace == "direct" else [2])  # notes' and parts', once
    assert postings["direct"] == postings["deferred"] == postings["bounded"]
    assert all(postings["direct"])
    blocks = {"lex_postings", "lex_packs", "part_postings", "part_packs"}
    direct, deferred, bounded = (schema_rows(pg_url, n) for n in ("direct", "deferred", "bounded"))
    assert direct["lex_postings"] and not direct["lex_packs"]
    for rows in (deferred, bounded):
        assert rows["lex_packs"] and not rows["lex_postings"]
    for table in ("lex_packs", "part_packs"):
        assert len(bounded[table]) > len(deferred[table]), table
    for rows in (direct, deferred, bounded):  # but the time of the sync
        rows["meta"] = [r for r in rows["meta"] if not r.startswith("('last_sync'")]
        for table in blocks:
            del rows[table]
    assert direct == deferred == bounded
    assert sizes["deferred"] < sizes["direct"] / 2, sizes


def assert_blocks_in_order(query: Any, lx: Lexicon) -> None:
    """Each of the lexicon's blocks holds its records in document order, from its first
    document to its last, as many as it says."""
    for first, last, n, data in query(f"SELECT first_doc, last_doc, n, data FROM {lx.packs}"):
        docs = list(Postings.decode(bytes(data), b"", lx.width).docs)
        assert docs == sorted(set(docs)) and len(docs) == n and (first, last) == (docs[0], docs[-1])


def test_a_large_sync_writes_each_term_row_once(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large sync's load writes each of its terms' rows once, at its end: a new term is
    inserted with its document frequencies, an old one updated once whatever the number
    of batches holding it (a batch sent before the load began, directly, writes its own
    terms' rows once more). Their pages keep room for it (m007_terms_room), so an updated
    row's new version stays on its page and no index of the table changes (a HOT
    update); a row written twice in the sync may find its page full."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 9)  # dozens of batches: a deferred load
    direct: dict[str, set[str]] = {"lex_terms": set(), "part_terms": set()}
    real = pg_postings.write_documents

    def write(conn: Any, documents: Any, lx: Any = NOTES, **kwargs: Any) -> None:
        if kwargs["load"] is None:
            for _doc, fields in documents:
                direct[lx.terms].update(expected_postings(fields)[1])
        real(conn, documents, lx, **kwargs)

    monkeypatch.setattr(pg_postings, "write_documents", write)

    def counts(store: PostgresStore) -> dict[str, tuple[int, int, int, int]]:
        store.query("SELECT pg_stat_force_next_flush()")  # this session's counts, shared
        rows = store.query(
            "SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
            " WHERE schemaname = current_schema() AND relname IN ('lex_terms', 'part_terms')"
        )
        return {
            str(t): (int(i), int(u), int(h), int(store.query(f"SELECT count(*) FROM {t}")[0][0]))
            for t, i, u, h in rows
        }

    root = tmp_path / "vault"
    write_notes(root, 240, "first")
    with lore.open(root, db=pg_url) as pg:
        store = pg.store
        assert isinstance(store, PostgresStore)
        pg.sync()
        first = counts(store)
        before = {table: len(terms) for table, terms in direct.items()}
        for terms in direct.values():
            terms.clear()
        write_notes(root / "more", 240, "second")  # new notes, most of their terms old
        pg.sync()
        second = counts(store)
    assert sorted(first) == sorted(second) == ["lex_terms", "part_terms"]
    for table, (inserted, updated, hot, terms) in first.items():
        assert inserted == terms > 500, (table, first)
        assert updated == hot <= before[table] < terms / 10, (table, first, before)
    for table, (inserted, updated, hot, terms) in second.items():
        was = first[table]
        new_terms, old_terms = inserted - was[0], updated - was[1]
        assert new_terms == terms - was[3], (table, first, second)
        sent_directly = len(direct[table])
        assert 500 < old_terms <= was[3] + sent_directly, (table, first, second, sent_directly)
        # A row written once finds room on its page; one written twice (by a batch sent
        # directly, then by the load) may not.
        assert old_terms - (hot - was[2]) <= sent_directly, (table, first, second)


def test_notes_changed_and_removed_leave_their_blocks_as_if_never_packed(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A changed or removed note is taken out of the blocks holding it (a block left empty
    goes): the index then holds exactly the postings a vault indexed row by row holds."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 9)
    monkeypatch.setattr(pg_packs, "PACK_SIZE", 4)
    root = tmp_path / "vault"
    write_notes(root, 60, "first")
    with lore.open(root, db=pg_url) as pg, lore.open(root, db=tmp_path / "i.sqlite") as sqlite:
        pg.sync()
        sqlite.sync()
        store = pg.store
        assert isinstance(store, PostgresStore)

        def rows() -> int:
            return int(store.query("SELECT count(*) FROM lex_postings")[0][0])

        packed = store.query("SELECT sum(n) FROM lex_packs")[0][0]
        assert packed and rows() == 0
        write_notes(root, 7, "second")  # an edit: rows beside the blocks
        for gone in sorted(root.rglob("note03*.md")):
            gone.unlink()
        pg.sync()
        sqlite.sync()
        assert rows() > 0
        assert store.query("SELECT sum(n) FROM lex_packs")[0][0] < packed
        assert answers(pg) == answers(sqlite)
        assert store.fts_check() is None and store.df_drift() == 0
        edited = postings_rows(store.query, NOTES)
        assert len(edited) == len({(t, d) for t, d, *_ in edited})  # no posting twice
        for i in range(30):  # new notes, a large sync: the edits' rows packed with them
            (root / "extra").mkdir(exist_ok=True)
            (root / "extra" / f"x{i}.md").write_text(f"# 新增 {i}\n\n客户去重规则 x{i}\n")
        pg.sync()
        sqlite.sync()
        assert rows() == 0
        known = {d for _t, d, *_ in edited}
        assert [r for r in postings_rows(store.query, NOTES) if r[1] in known] == edited
        assert answers(pg) == answers(sqlite)
        assert store.fts_check() is None and store.df_drift() == 0
        edited = postings_rows(store.query, NOTES)
        pg.rebuild()  # parts get new ids; notes keep theirs
        assert postings_rows(store.query, NOTES) == edited
        assert answers(pg) == answers(sqlite)
        # Out of any sync (autocommit): a note's text indexed again, out of its blocks.
        note_id, *fields = store.query(
            "SELECT note_id, title, tags, summary, body FROM lex_docs ORDER BY note_id LIMIT 1"
        )[0]
        retitled = ("retitled zebra", *fields[1:])
        store.reinsert_fts(note_id, retitled)  # (term_df is the sync's to change)
        assert store.fts_check() is None
        size, counts = expected_postings(retitled)
        held = [row for row in postings_rows(store.query, NOTES) if row[1] == note_id]
        assert held == sorted((term, note_id, size, *n) for term, n in counts.items())


def test_a_failing_batch_rolls_the_whole_sync_back(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 5)
    root = tmp_path / "vault"
    write_notes(root, 12, "first")
    with lore.open(root, db=pg_url) as vault:
        vault.sync()
        before = answers(vault)
        write_notes(root, 30, "second")
        real = pg_postings.write_documents
        calls: list[int] = []

        def fails_on_the_fourth(*args: Any, **kwargs: Any) -> None:
            calls.append(1)
            if len(calls) == 4:  # sent by the sender's thread, mid-sync
                raise RuntimeError("the disk is full")
            real(*args, **kwargs)

        monkeypatch.setattr(pg_postings, "write_documents", fails_on_the_fourth)
        with pytest.raises(RuntimeError, match="the disk is full"):
            vault.sync()
        assert answers(vault) == before  # nothing of the failed sync is in
        monkeypatch.setattr(pg_postings, "write_documents", real)
        assert not vault.search("second", mode="mode4")
        report = vault.sync()
        assert len(report.added) == 18 and len(report.changed) == 12
        assert len(vault.search("second", mode="mode4", limit=50)) == 30
        store = vault.store
        assert isinstance(store, PostgresStore)
        assert store.fts_check() is None and store.df_drift() == 0


@pytest.mark.usefixtures("on_backend")
def test_new_ids_follow_the_largest_as_sqlite_rowids_do(tmp_path: Path, backend: str) -> None:
    root = build_vault(tmp_path / "v", {f"n{i}.md": f"# n{i}\n\n## a\n\nx{i}\n" for i in range(3)})
    with lore.open(root) as vault:
        vault.sync()
        ids = {p: vault.store.note_record(p).id for p in ("n0.md", "n1.md", "n2.md")}  # type: ignore[union-attr]
        assert sorted(ids.values()) == [1, 2, 3]
        (root / "n2.md").unlink()
        (root / "n9.md").write_text("# n9\n\nnew\n", encoding="utf-8")
        vault.sync()
        record = vault.store.note_record("n9.md")
        # one past the largest: the sync writes new notes before it deletes vanished ones
        assert record is not None and record.id == 4
        if backend == "postgresql":
            store = vault.store
            assert isinstance(store, PostgresStore)
            for table in ("notes", "sections"):
                last, largest = store.query(
                    "SELECT pg_sequence_last_value(pg_get_serial_sequence(?, 'id')::regclass),"
                    f" (SELECT max(id) FROM {table})",
                    (table,),
                )[0]
                assert last >= largest  # an insert taking the default never collides


@pytest.mark.usefixtures("on_backend")
def test_repeated_tags_and_links_are_kept_as_first_written(tmp_path: Path) -> None:
    text = "---\ntags: [Alpha, beta, alpha, BETA]\n---\n# t\n\n[[Target]] and [[target]] #gamma\n"
    root = build_vault(tmp_path / "v", {"t.md": text})
    with lore.open(root) as vault:
        vault.sync()
        record = vault.store.note_record("t.md")
        assert record is not None
        assert record.tags == [
            ("Alpha", "frontmatter"),
            ("beta", "frontmatter"),
            ("gamma", "inline"),
        ]
        assert record.links == ["Target"]
        holders = vault.store.tag_holders(["alpha", "gamma", "none"], derived=False, limit=5)
        assert holders == {
            "alpha": [(record.id, "alpha")],
            "gamma": [(record.id, "gamma")],
            "none": [],
        }


@pytest.mark.usefixtures("on_backend")
def test_document_frequencies_handed_over_in_parts_end_where_one_handover_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync hands its document-frequency changes to the store whenever it holds
    DF_HELD_TERMS terms, not all at its end (a first index of a million notes meets
    millions): indexed, edited and pruned that way, a vault holds the counts one handover
    gives, and they match its full-text index."""

    def history(root: Path) -> tuple[list[tuple[Any, ...]], int]:
        write_notes(root, 40, "first")
        handovers = 0
        with lore.open(root) as vault:
            real = vault.store.apply_df

            def counted(delta: dict[str, int]) -> None:
                nonlocal handovers
                handovers += 1
                real(delta)

            monkeypatch.setattr(vault.store, "apply_df", counted)
            vault.sync()
            write_notes(root, 25, "second")  # changed notes: old terms out, new ones in
            for gone in sorted(root.rglob("note03*.md")):
                gone.unlink()
            vault.sync()
            assert vault.store.df_drift() == 0
            rows = vault.store.query("SELECT term, df FROM term_df ORDER BY term")
        return [tuple(r) for r in rows], handovers

    whole, once = history(tmp_path / "whole")
    monkeypatch.setattr(sync_module, "DF_HELD_TERMS", 3)
    parts, many = history(tmp_path / "parts")
    assert once == 2 and many > 40  # one per sync; many per sync
    assert parts == whole and len(whole) > 100


def test_an_up_to_date_vault_opens_while_another_process_syncs_it(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    write_notes(root, 3, "first")
    writer = PostgresStore(pg_url, root)
    monkeypatch.setattr(PgBase, "busy_timeout_ms", 50)  # waiting would fail at once
    with writer.transaction():  # holds the vault's write lock, as a sync does
        reader = PostgresStore(pg_url, root)
        assert reader.get_meta("vault_root") == str(root)
        reader.close()
    writer.close()


def test_a_rebuild_never_blocks_the_vaults_readers(tmp_path: Path, pg_url: str) -> None:
    """Readers never wait for a sync, a rebuild's included: while a rebuild has cleared the
    full text in its open transaction, another connection searches the vault and gets the
    committed answers (its lock_timeout turns any wait into an error)."""
    root = tmp_path / "vault"
    write_notes(root, 12, "first")
    with lore.open(root, db=pg_url) as writer, lore.open(root, db=pg_url) as reader:
        writer.sync()
        before = answers(reader)
        assert before[0]
        reader.store.execute("SET lock_timeout = '2s'")
        with pytest.raises(_Abandoned), writer.store.transaction():
            writer.store.clear_search_index()
            assert answers(reader) == before
            raise _Abandoned  # rolled back: the reader's answers were never in question
        writer.rebuild()
        assert answers(reader) == before


class _Abandoned(Exception):
    pass


def _analysed(store: PostgresStore) -> dict[str, Any]:
    """When each of the vault's tables was last ANALYZEd and VACUUMed by hand (not by
    autovacuum)."""
    store.query("SELECT pg_stat_clear_snapshot()")
    rows = store.query(
        "SELECT relname, last_analyze, last_vacuum FROM pg_stat_user_tables"
        " WHERE schemaname = current_schema()"
    )
    return {str(name): (analysed, vacuumed) for name, analysed, vacuumed in rows}


def _visible_pages(store: PostgresStore, table: str) -> tuple[int, int]:
    """A table's pages, and those its visibility map marks all-visible (what VACUUM sets:
    an index-only scan reads only those without visiting the row)."""
    row = store.query(
        "SELECT relpages, relallvisible FROM pg_class"
        " WHERE relname = ? AND relnamespace = current_schema()::regnamespace",
        (table,),
    )
    return int(row[0][0]), int(row[0][1])


def test_a_large_sync_gives_the_planner_its_statistics_a_small_one_does_not(
    tmp_path: Path, pg_url: str
) -> None:
    """Right after a first index PostgreSQL had no statistics for the vault's tables until
    autovacuum came by, and planned searches for empty tables (seconds each at 10k notes):
    a sync that changes many notes analyses them before it commits, and vacuums them once
    committed (a first index left them for autovacuum, dead rows and all); an edit does
    neither."""
    root = tmp_path / "vault"
    write_notes(root, 60, "first")
    with lore.open(root, db=pg_url) as pg:
        store = pg.store
        assert isinstance(store, PostgresStore)
        # The test server commits without waiting for its log (tests/pg_support.py), and a
        # row is not marked visible to all before its commit is on disk: as a server does.
        store.execute("SET synchronous_commit = on")
        pg.sync()
        first = _analysed(store)
        assert all(analysed and vacuumed for analysed, vacuumed in first.values()), first
        held = store.query(
            "SELECT count(*) FROM pg_stats WHERE schemaname = current_schema()"
            " AND tablename = 'lex_postings'"
        )
        assert held[0][0] > 0  # the statistics are there for the next reader's plan
        for table in ("notes", "lex_postings"):
            pages, visible = _visible_pages(store, table)
            assert pages > 0 and visible == pages, (table, pages, visible)
        write_notes(root, 2, "second")  # 2 of 60 notes changed: below the threshold
        pg.sync()
        assert _analysed(store) == first
        pg.rebuild()  # every note's rows deleted and written again: vacuumed after
        rebuilt = _analysed(store)
        assert all(rebuilt[t][1] > first[t][1] for t in first), (first, rebuilt)
        pages, visible = _visible_pages(store, "lex_postings")
        assert pages > 0 and visible == pages


def test_the_vacuum_after_a_write_leaves_a_table_another_session_holds(
    tmp_path: Path, pg_url: str
) -> None:
    """The write is committed when its tables are vacuumed: a table another session holds
    (another sync's ANALYZE, to its commit) is left after the write lock's wait, and the
    others are vacuumed all the same; the connection's lock timeout is its own again."""
    import psycopg

    root = tmp_path / "vault"
    write_notes(root, 60, "first")
    with lore.open(root, db=pg_url) as pg:
        store = pg.store
        assert isinstance(store, PostgresStore)
        pg.sync()
        before = _analysed(store)
        store.execute("SET statement_timeout = '30s'")  # a VACUUM that waits fails the test
        with psycopg.connect(pg_url, autocommit=True) as other, other.transaction():
            other.execute(f'LOCK TABLE "{store.namespace}".notes IN SHARE UPDATE EXCLUSIVE MODE')
            store.busy_timeout_ms = 200
            store._vacuum_due = ('"notes"', '"tags"')  # as a large write leaves them
            store._vacuum()
        after = _analysed(store)
        assert after["notes"] == before["notes"]
        assert after["tags"][1] > before["tags"][1]
        assert store.query("SHOW lock_timeout") == [("0",)]
