"""Entity cards in the index: alias table, relations, mentions, last activity with its
source, alias expansion on search, and rebuild == incremental for every memory table."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from backend_support import another_index, dump_vault
from conftest import write_files
from memory_support import write

import lore

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**10))


def test_alias_table_relations_and_mentions(make_vault: MakeVault, open_vault: OpenVault) -> None:
    vault = open_vault(write(make_vault()))
    vault.sync()
    aliases = vault.store.query(
        "SELECT alias, alias_key, is_name FROM entity_aliases a JOIN notes n ON n.id = a.note_id"
        " WHERE n.path = 'entities/张三.md' ORDER BY position"
    )
    assert aliases == [("张三", "张三", 1), ("Zhang San", "zhangsan", 0), ("zs", "zs", 0)]
    card = vault.lookup("Zhang San").entity
    assert card is not None
    out = [
        (r["relation"], r["target"], r["resolved"]["kind"])
        for r in card["relations"]
        if r["direction"] == "out"
    ]
    assert out == [("负责", "客户去重规则 v2", "note"), ("汇报给", "李四", "entity")]
    incoming = [(r["source"], r["relation"]) for r in card["relations"] if r["direction"] == "in"]
    assert ("李四", "管理") in incoming
    # Mentions: by any spelling, never counting the card itself.
    mentions = {m["path"]: m["count"] for m in card["mentions"]["latest"]}
    assert mentions["memory/2026-11-10.md"] == 1  # "zs"
    assert "entities/张三.md" not in mentions
    assert card["mentions"]["notes"] >= 3
    assert [e["date"] for e in card["events"]] == ["2026-09-30", "2026-09-08"]


def test_last_activity_comes_from_the_latest_dated_mention_with_its_source(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = write(make_vault())
    vault = open_vault(root)
    vault.sync()
    activity = vault.lookup("张三").entity["last_activity"]  # type: ignore[index]
    # The card says 2026-10-01; a daily note dated 2026-11-10 mentions "zs".
    assert activity == {
        "date": "2026-11-10",
        "source": "mention",
        "path": "memory/2026-11-10.md",
        "line": 3,
        "declared": "2026-10-01",
    }
    # A card date newer than every mention wins, and says so.
    edit(root / "entities/张三.md", "last_activity: 2026-10-01", "last_activity: 2026-11-18")
    vault.sync()
    activity = vault.lookup("张三").entity["last_activity"]  # type: ignore[index]
    assert (activity["date"], activity["source"], activity["path"]) == (
        "2026-11-18",
        "card",
        "entities/张三.md",
    )
    # A note dated only by its mtime is not a dated mention; a note after "today" is ignored.
    write_files(root, {"memory/2026-12-01.md": "# 2026-12-01\n\n- zs 的未来日记\n"})
    vault.sync()
    assert vault.lookup("张三").entity["last_activity"]["date"] == "2026-11-18"  # type: ignore[index]


def test_search_expands_aliases(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = write(make_vault())
    write_files(root, {"meetings/sync.md": "# Sync\n\n张三 presented the dedupe rollout.\n"})
    vault = open_vault(root)
    vault.sync()
    for query in ("Zhang San", "zs", "zhang-san"):
        paths = [h.path for h in vault.search(query)]
        assert "meetings/sync.md" in paths, (query, paths)
        assert paths[0] == "entities/张三.md"
    plain = [h.path for h in vault.search("Zhang San", expand_aliases=False)]
    assert "meetings/sync.md" not in plain
    explained = vault.search("zs", explain=True)
    assert explained.query == "zs"
    assert explained[0].explain is not None
    assert "张三" in explained[0].explain.query_terms


def test_rebuild_equals_incremental_for_memory_tables(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    root = write(make_vault())
    vault = open_vault(root)
    vault.sync()
    vault.remember("和 Li Si 对齐了预算", entities=["四哥"])
    # An alias added to a card changes other notes' mentions without touching them.
    edit(root / "entities/李四.md", "aliases: [Li Si, 四哥]", "aliases: [Li Si, 四哥, 老李]")
    write_files(root, {"memory/2026-11-15.md": "# 2026-11-15\n\n- 老李 批了预算。\n"})
    vault.sync()
    edit(root / "people.md", "- **别名**：Wang Wu, 老王", "- **别名**：Wang Wu")
    (root / "rules/客户去重规则 v2.md").unlink()
    vault.sync()
    incremental = dump_vault(vault)
    memory = incremental["memory"]
    assert memory["entity_defs"] and memory["entity_mentions"] and memory["memory_entries"]
    assert any(
        row[0] == "memory/2026-11-15.md" and row[1] == "李四" for row in memory["entity_mentions"]
    )
    assert not any(row[0] == "rules/客户去重规则 v2.md" for rows in memory.values() for row in rows)

    vault.rebuild()
    assert dump_vault(vault) == incremental
    fresh = open_vault(root, db=another_index(tmp_path))
    fresh.sync()
    assert dump_vault(fresh) == incremental


def test_custom_layout_is_read_and_a_layout_change_rederives(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = write(make_vault())
    vault = open_vault(root)
    vault.sync()
    assert vault.lookup("Wang Wu").level == "L1"
    (root / "people").mkdir()
    (root / "entities").rename(root / "people" / "cards")
    config = root / ".lore/config.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace(
            "[memory]\n", '[memory]\nentities = "people/cards"\n'
        ),
        encoding="utf-8",
    )
    vault.sync()
    card = vault.lookup("zs").entity
    assert card is not None and card["path"] == "people/cards/张三.md"
    assert vault.store.get_meta("memory_layout") == "memory|people/cards|MEMORY.md"
