"""`Vault.lookup`: the fixed L1 → L2 → L3 → L4 path, each level reached and named, with what
was tried; trust over recency for conflicting statements; decay without deletion."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_files
from memory_support import write

import lore
from lore.memory.decay import decay_weight
from lore.memory.settings import MemorySettings

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


@pytest.fixture
def vault(make_vault: MakeVault, open_vault: OpenVault) -> lore.Vault:
    opened = open_vault(write(make_vault()))
    opened.sync()
    return opened


def test_l1_entity_card_by_name_or_alias(vault: lore.Vault) -> None:
    for query in ("张三", "zs", "Zhang San", "ZHANG-SAN"):
        result = vault.lookup(query)
        assert result.level == "L1", query
        assert result.entity is not None and result.entity["name"] == "张三"
        assert result.hits[0].path == "entities/张三.md"
        assert result.hits[0].kind == "entity"  # type: ignore[attr-defined]
        assert result.tried[0].startswith("L1 entity cards: 张三 (entities/张三.md:1)")
    section = vault.lookup("老王")
    assert section.level == "L1" and section.entity["path"] == "people.md"  # type: ignore[index]
    assert section.entity["kind"] == "section"  # type: ignore[index]


def test_l1_answers_a_question_its_card_covers(vault: lore.Vault) -> None:
    result = vault.lookup("张三负责的是哪个规则")
    assert result.level == "L1"
    assert "负责" in result.tried[0]
    data = result.to_dict()
    assert data["level"] == "L1" and data["found"] is True
    assert data["entity"]["relations"][0]["target"] == "客户去重规则 v2"


def test_l2_when_the_card_does_not_answer(vault: lore.Vault) -> None:
    result = vault.lookup("zs 回滚开关")
    assert result.level == "L2"
    assert result.entity is not None and result.entity["name"] == "张三"  # still identified
    assert (
        result.tried[0].startswith("L1 entity cards: 张三") and "does not answer" in result.tried[0]
    )
    assert result.hits[0].path == "memory/2026-11-10.md"
    assert result.hits[0].line == 3  # the item itself, not the note's title


def test_l2_plain_question(vault: lore.Vault) -> None:
    result = vault.lookup("Redis 扩容")
    assert result.level == "L2"
    assert "no entity named" in result.tried[0]
    assert {h.path for h in result.hits} == {"memory/2026-11-12.md", "MEMORY.md"}
    assert all(h.level == "L2" for h in result.hits)  # type: ignore[attr-defined]


def test_l3_finds_what_the_index_missed(vault: lore.Vault) -> None:
    # Written after the last sync: the index does not know it yet.
    write_files(vault.root, {"inbox/new.md": "# 新想法\n\n用 Flink 做实时去重 QX-9931。\n"})
    result = vault.lookup("QX-9931")
    assert result.level == "L3"
    assert result.hits[0].path == "inbox/new.md"
    assert result.hits[0].line == 3
    assert "«QX-9931»" in result.hits[0].snippet
    assert [t.split(":")[0] for t in result.tried] == [
        "L1 entity cards",
        "L2 index (mode4)",
        "L3 raw scan",
    ]
    # Text inside a word, which no token boundary exposes, is found the same way.
    inside = vault.lookup("abaseline")
    assert inside.level == "L4"
    write_files(vault.root, {"inbox/words.md": "the databaseline thing\n"})
    assert vault.lookup("abaseline").level == "L3"


def test_l4_says_what_was_tried(vault: lore.Vault) -> None:
    result = vault.lookup("完全不存在的话题 xyzzy")
    assert (result.level, result.hits, result.entity, result.found) == ("L4", [], None, False)
    assert len(result.tried) == 3
    assert result.tried[0].startswith("L1 entity cards: no entity named or aliased")
    assert result.tried[1].startswith("L2 index")
    assert result.tried[2].startswith("L3 raw scan:") and "no match" in result.tried[2]


def test_bad_lookup_arguments(vault: lore.Vault) -> None:
    with pytest.raises(lore.QueryError, match="empty"):
        vault.lookup("   ")
    with pytest.raises(lore.QueryError, match="--limit"):
        vault.lookup("x", limit=0)


def test_conflicts_rank_by_trust_not_recency(vault: lore.Vault) -> None:
    base = dt.datetime(2026, 11, 15, 9, 0, 0)
    confirmed = vault.remember("机房迁移日期定为 12 月 5 日", trust="confirmed", at=base)
    imported = vault.remember(
        "机房迁移日期定为 12 月 9 日", trust="imported", at=base + dt.timedelta(days=2)
    )
    hits = vault.lookup("机房迁移日期").hits
    anchors = [h.anchor for h in hits]  # type: ignore[attr-defined]
    assert anchors[:2] == [confirmed.pointer, imported.pointer]
    assert hits[0].trust == "confirmed" and hits[1].trust == "imported"  # type: ignore[attr-defined]
    assert hits[0].score > hits[1].score


def test_decay_lowers_rank_and_never_deletes(make_vault: MakeVault, open_vault: OpenVault) -> None:
    settings = MemorySettings(half_life_days=30, decay_floor=0.3, pinned_priority=4)
    today = dt.date(2026, 11, 20)
    assert decay_weight(settings, "2026-11-20", today) == 1.0
    assert decay_weight(settings, "2026-10-21", today) == pytest.approx(0.65)
    assert decay_weight(settings, "2020-01-01", today) == pytest.approx(0.3, abs=1e-3)
    assert decay_weight(settings, "2020-01-01", today, pinned=True) == 1.0
    assert decay_weight(settings, "2020-01-01", today, priority=5) == 1.0
    assert decay_weight(settings, "2020-01-01", today, priority=3) < 1.0

    root = make_vault(
        {
            ".lore/config.toml": '[memory]\ntoday = "2026-11-20"\ndecay_floor = 0.3\n',
            "old.md": "---\ndate: 2025-01-01\n---\n季度目标 复盘 记录\n",
            "new.md": "---\ndate: 2026-10-21\n---\n季度目标 复盘 记录\n",
            "key.md": "---\ndate: 2025-01-01\npinned: true\n---\n季度目标 复盘 记录\n",
        }
    )
    vault = open_vault(root)
    vault.sync()
    ranked = vault.lookup("季度目标 复盘", limit=3).hits
    assert [h.path for h in ranked] == ["key.md", "new.md", "old.md"]  # old sinks, stays
    weights = {h.path: h.weight for h in ranked}  # type: ignore[attr-defined]
    assert weights["key.md"] == 1.0 and weights["old.md"] < weights["new.md"] < 1.0
    assert len(vault.search("季度目标")) == 3  # plain search is not decayed, nothing deleted


def test_recent_lists_active_entities_and_notes(vault: lore.Vault) -> None:
    result = vault.recent(days=15)
    assert (result.since, result.today) == ("2026-11-06", "2026-11-20")
    names = {e["name"]: e["last_activity"] for e in result.entities}
    assert names["张三"]["source"] == "mention" and names["张三"]["date"] == "2026-11-10"
    assert "王五" not in names  # last active 2026-11-02
    assert [n["path"] for n in result.notes] == ["memory/2026-11-12.md", "memory/2026-11-10.md"]
    wider = vault.recent(days=30)
    assert "王五" in {e["name"] for e in wider.entities}
    with pytest.raises(lore.LoreError, match="--days"):
        vault.recent(days=0)
