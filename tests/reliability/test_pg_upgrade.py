"""Upgrades on PostgreSQL (test_upgrade.py's for an SQLite file of lore 0.1.0): a vault's
schema made by a lore of fewer migrations is brought up to date when it is opened, with
its rows as they were; a migration that fails leaves the schema as it was (PostgreSQL's
DDL is transactional, so the whole upgrade is one transaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import build_vault, lore_namespace
from pg_support import postings_rows, schema_rows

import lore
import lore.store.postgres as pg_mod
from lore.store import pg_batch, pg_packs, pg_records
from lore.store.pg_schema import (
    MIGRATIONS,
    NOTES,
    PARTS,
    RECORDS_META,
    SCHEMA_VERSION,
    m006_packs,
)

FILES = {
    "rules/dedupe.md": (
        "---\ntitle: 客户去重规则 v2\ntags: [规则]\n---\n# 去重\n\n手机号相同才合并。\n"
    ),
    "entities/张三.md": "---\naliases: [zs]\n---\n# 张三\n\n负责 [[客户去重规则 v2]]。\n",
    "memory/2026-11-20.md": "# 2026-11-20\n\n- 和 zs 讨论了去重灰度。\n",
}
# m001_core..m003_sections: before the postings by term (m004), tokens (m005), blocks (m006)
# and the terms' room (m007)
OLDER = 3


def older_schema(
    root: Path, url: str, monkeypatch: pytest.MonkeyPatch, migrations: list[Any]
) -> None:
    """Index `root` as a lore that knew only `migrations` did. Today's code reads the
    postings' blocks (m006), which a lore before them never wrote: the tables are there
    for its sync (it writes rows, as older ones did), then gone."""
    with monkeypatch.context() as older:
        older.setattr(pg_mod, "MIGRATIONS", migrations)
        older.setattr(pg_mod, "SCHEMA_VERSION", len(migrations))
        with lore.open(root, db=url) as vault:
            store = vault.store
            assert isinstance(store, pg_mod.PostgresStore)
            with store.transaction():
                m006_packs(store.execute)
            vault.sync()
            assert store.query("SELECT count(*) FROM lex_packs") == [(0,)]
            with store.transaction():
                store.execute("DROP TABLE lex_packs, part_packs")


def wide_blocks(older: pytest.MonkeyPatch) -> None:
    """Pack blocks as lore did before block records (lore.store.pg_records): in row
    records (an 8-byte document, 4-byte counts), every posting fitting one."""
    older.setattr(pg_records, "block_sql", pg_records.row_sql)
    older.setattr(pg_records, "fits_sql", lambda alias, doc, columns: "true")
    older.setattr(pg_packs, "record_width", lambda lx: pg_records.row_width(lx.width))
    older.setattr(pg_packs, "_doc_at", lambda data, offset: pg_records.int_at_sql(data, offset, 8))


def every_posting(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    """The notes' and the parts' postings, wherever they are."""
    return {lx.packs: postings_rows(store.query, lx) for lx in (NOTES, PARTS)}


def test_an_older_schema_is_migrated_on_open_with_its_rows_intact(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_vault(tmp_path / "vault", FILES)
    older_schema(root, pg_url, monkeypatch, MIGRATIONS[:OLDER])
    before = schema_rows(pg_url, lore_namespace(root))
    assert "tokens" not in before and before["notes"]
    with lore.open(root, db=pg_url) as vault:
        assert vault.status().schema_version == SCHEMA_VERSION
        after = schema_rows(pg_url, lore_namespace(root))
        for table in ("tokens", "lex_packs", "part_packs"):
            assert after.pop(table) == []  # the later migrations' tables, empty
        # What the upgrade's transaction changes: the version, and (as any write) the
        # generation readers' caches follow.
        for rows in (before["meta"], after["meta"]):
            rows[:] = [r for r in rows if "'schema_version'" not in r]
        assert int(after.pop("generation")[0][1:-2]) > int(before.pop("generation")[0][1:-2])
        assert after == before  # every row of the older schema, as it was
        assert [h.path for h in vault.search("去重")][:1] == ["rules/dedupe.md"]
        assert vault.lookup("zs").level == "L1"
        assert vault.sync().wrote is False  # the same notes, derived the same way
        assert vault.doctor().ok
        store = vault.store
        assert isinstance(store, pg_mod.PostgresStore)
        room = store.query(
            "SELECT relname, reloptions FROM pg_class"
            " WHERE relnamespace = current_schema()::regnamespace"
            " AND relname IN ('lex_terms', 'part_terms') ORDER BY relname"
        )
        assert room == [("lex_terms", ["fillfactor=50"]), ("part_terms", ["fillfactor=50"])]
        vault.add_token("agent", principal=None)  # the new table works
        assert [t.name for t in vault.tokens()] == ["agent"]


def test_a_failing_migration_leaves_the_schema_as_it_was(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_vault(tmp_path / "vault", FILES)
    older_schema(root, pg_url, monkeypatch, MIGRATIONS[:OLDER])
    before = schema_rows(pg_url, lore_namespace(root))

    def m999_broken(execute: Any) -> None:
        execute("CREATE TABLE half_done (x integer)")
        raise RuntimeError("migration m999 failed halfway")

    with monkeypatch.context() as newer:
        newer.setattr(pg_mod, "MIGRATIONS", [*MIGRATIONS, ("m999_broken", m999_broken)])
        newer.setattr(pg_mod, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
        with pytest.raises(RuntimeError, match="m999"):
            lore.open(root, db=pg_url)
    # Not m004, m005 nor half of m999: the schema of the older lore, row for row.
    assert schema_rows(pg_url, lore_namespace(root)) == before
    with lore.open(root, db=pg_url) as vault:
        assert vault.status().schema_version == SCHEMA_VERSION
        assert vault.doctor().ok


def test_blocks_packed_before_their_ranges_were_indexed_are_cut_after_the_upgrade(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema of m007 whose postings are in blocks gets the blocks' last documents in
    their key's index (m008_pack_ranges), every row as it was; a note edited after the
    upgrade is cut out of the blocks found through it."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 4)  # a large sync: postings in blocks
    files = {f"n{i:02d}.md": f"# note {i}\n\ncommon words 共同 note{i}\n" for i in range(24)}
    root = build_vault(tmp_path / "vault", files)
    with monkeypatch.context() as older:
        older.setattr(pg_mod, "MIGRATIONS", MIGRATIONS[:7])
        older.setattr(pg_mod, "SCHEMA_VERSION", 7)
        wide_blocks(older)
        with lore.open(root, db=pg_url) as vault:
            vault.sync()
            postings = every_posting(vault.store)
    before = schema_rows(pg_url, lore_namespace(root))
    assert before["lex_packs"] and not before["lex_postings"]
    with lore.open(root, db=pg_url) as vault:
        assert vault.status().schema_version == SCHEMA_VERSION
        store = vault.store
        assert isinstance(store, pg_mod.PostgresStore)
        keys = store.query(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema()"
            " AND tablename IN ('lex_packs', 'part_packs') ORDER BY tablename"
        )
        assert [str(k).split(" USING ")[1] for (k,) in keys] == [
            "btree (term_id, first_doc) INCLUDE (last_doc)"
        ] * 2
        after = schema_rows(pg_url, lore_namespace(root))
        for rows in (before, after):
            rows["meta"] = [r for r in rows["meta"] if "'schema_version'" not in r]
            del rows["generation"]
        assert after == before
        assert every_posting(store) == postings
        (root / "n05.md").write_text("# note 5\n\nzebra\n", encoding="utf-8")
        vault.sync()
        assert store.fts_check() is None and store.df_drift() == 0
        assert [h.path for h in vault.search("zebra")] == ["n05.md"]
        assert "n05.md" not in [h.path for h in vault.search("共同", limit=50)]
        assert len(vault.search("共同", limit=50)) == 23


def test_blocks_of_row_records_are_read_and_cut_beside_block_records(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index whose blocks an older lore packed in row records (28 bytes a note's
    posting) is read and edited as it is: a note's postings are cut out of such blocks in
    their record, new postings are packed in block records beside them (those a block
    record cannot hold, a count over 255 or an id over 2^31 - 1, as rows), and the index
    ranks as SQLite's throughout; a rebuild packs every block in block records."""
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 4)  # a large sync: postings in blocks
    real_ids = pg_mod.PostgresStore.new_ids
    past = pg_records.MAX_DOC - 6  # ids on both sides of the block record's top

    def high_ids(self: pg_mod.PostgresStore, table: str, n: int) -> list[int]:
        return [past + i for i in real_ids(self, table, n)]

    monkeypatch.setattr(pg_mod.PostgresStore, "new_ids", high_ids)
    files = {
        f"n{i:02d}.md": f"# note {i}\n\n{'zebra ' * (240 + 5 * i)}common 共同 note{i}\n"
        for i in range(12)
    }
    root = build_vault(tmp_path / "vault", files)
    with monkeypatch.context() as older:
        wide_blocks(older)
        with lore.open(root, db=pg_url) as vault:
            store = vault.store
            assert isinstance(store, pg_mod.PostgresStore)
            vault.sync()
            with store.transaction():
                store.delete_meta(RECORDS_META)  # no older lore wrote it
            postings = every_posting(store)
    unfit = [
        r
        for r in postings["lex_packs"]
        if r[1] > pg_records.MAX_DOC or max(r[3:]) > pg_records.MAX_COUNT
    ]
    assert any(r[1] <= pg_records.MAX_DOC for r in unfit)  # by a count alone
    assert any(max(r[3:]) <= pg_records.MAX_COUNT for r in unfit)  # by the id alone
    with (
        lore.open(root, db=pg_url) as vault,
        lore.open(root, db=tmp_path / "i.sqlite") as sqlite,
    ):
        store = vault.store
        assert isinstance(store, pg_mod.PostgresStore)

        def records() -> set[int]:
            """The bytes of a note's posting in the notes' blocks."""
            found = store.query("SELECT DISTINCT length(data) / n FROM lex_packs")
            return {int(w) for (w,) in found}

        assert records() == {pg_records.row_width(NOTES.width)}
        assert every_posting(store) == postings
        assert "lore rebuild" in store.engine()["postings blocks"]

        def same_answers() -> None:
            for index in (vault, sqlite):
                index.sync()
            assert store.fts_check() is None and store.df_drift() == 0
            for query in ("zebra", "共同", "common", "note5", "note 7", "fresh"):
                got = [(h.path, round(h.score, 6)) for h in vault.search(query, mode="mode4")]
                assert got == [
                    (h.path, round(h.score, 6)) for h in sqlite.search(query, mode="mode4")
                ], query

        same_answers()
        (root / "n05.md").write_text("# note 5\n\nzebra\n", encoding="utf-8")
        (root / "n01.md").write_text("# note 1\n\n" + "共同 " * 300, encoding="utf-8")
        (root / "n09.md").unlink()
        same_answers()  # cut out of the older blocks
        for i in range(12, 20):  # a large sync: its postings in block records
            text = f"# note {i}\n\nfresh {'zebra ' * (250 + i)}共同 note{i}\n"
            (root / f"n{i:02d}.md").write_text(text, encoding="utf-8")
        same_answers()
        assert records() == {pg_records.row_width(4), pg_records.block_width(4)}
        (root / "n14.md").write_text("# note 14\n\nzebra again\n", encoding="utf-8")
        (root / "n02.md").write_text("# note 2\n\nzebra fresh\n", encoding="utf-8")
        same_answers()  # cut out of blocks of both records
        vault.rebuild()
        sqlite.rebuild()
        same_answers()
        assert records() == {pg_records.block_width(NOTES.width)}
        assert store.engine()["postings blocks"] == "12 bytes a note's posting"
