"""Upgrades on PostgreSQL (test_upgrade.py's for an SQLite file of lore 0.1.0): a vault's
schema made by a lore of fewer migrations is brought up to date when it is opened, with
its rows as they were; a migration that fails leaves the schema as it was (PostgreSQL's
DDL is transactional, so the whole upgrade is one transaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import build_vault, lore_namespace
from pg_support import schema_rows

import lore
import lore.store.postgres as pg_mod
from lore.store.pg_schema import MIGRATIONS, SCHEMA_VERSION, m006_packs

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
