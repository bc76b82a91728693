"""`context` and `snapshot`: byte budgets, what they carry (with path, date, anchor and
status), and the same output for the same vault."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_files
from memory_support import write

import lore

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


@pytest.fixture
def vault(make_vault: MakeVault, open_vault: OpenVault) -> lore.Vault:
    opened = open_vault(write(make_vault()))
    opened.sync()
    return opened


def test_context_has_core_entities_and_evidence_within_budget(vault: lore.Vault) -> None:
    memory = vault.remember(
        "回滚开关默认关闭，灰度期间由张三值守。", at=dt.datetime(2026, 11, 18, 9, 0, 0)
    )
    view = vault.context("zs 灰度 回滚开关", budget=4096)
    assert view.bytes == len(view.text.encode("utf-8")) <= 4096
    text = view.text
    assert text.startswith("# Context: zs 灰度 回滚开关\n")
    core = text.index("## Core (resident)")
    entities = text.index("## Entities")
    evidence = text.index("## Evidence")
    assert core < entities < evidence
    # Core conclusions carry their anchors; claimed is marked unverified; a missing anchor
    # is said, not hidden.
    assert "客户去重 v2 已全量上线 → memory/2026-11-12.md#2026-11-12 [verified]" in text
    assert "一条没有锚点的结论 (no anchor; MEMORY.md:7)" in text
    # The entity card of the alias named in the task.
    assert "### 张三 (person) · last activity 2026-11-18 (mention: memory/2026-11-18.md)" in text
    # Evidence with path#anchor, date and status.
    assert f"### {memory.pointer} (2026-11-18) [claimed, unverified]" in text
    kinds = [item["kind"] for item in view.items]
    assert kinds[:3] == ["core", "core", "core"] and "entity" in kinds and "remember" in kinds
    for item in view.items:
        assert item["path"] and item["bytes"] > 0 and "date" in item and "anchor" in item
    assert sum(i["bytes"] for i in view.items) < view.bytes
    assert vault.context("zs 灰度 回滚开关", budget=4096).to_dict() == view.to_dict()


@pytest.mark.parametrize("budget", [512, 700, 1024, 2048])
def test_context_never_overruns_its_budget(vault: lore.Vault, budget: int) -> None:
    write_files(
        vault.root, {"memory/2026-11-19.md": "# 2026-11-19\n\n" + "- 灰度 长文本。\n" * 400}
    )
    vault.sync()
    view = vault.context("灰度 回滚", budget=budget)
    assert view.bytes <= budget
    assert view.text.encode("utf-8").decode("utf-8") == view.text  # never cut inside a char
    assert view.left_out >= 0


def test_context_bad_arguments(vault: lore.Vault) -> None:
    with pytest.raises(lore.ConfigError, match="--budget"):
        vault.context("x", budget=100)
    with pytest.raises(lore.ConfigError, match="--budget"):
        vault.context("x", budget="big")  # type: ignore[arg-type]
    with pytest.raises(lore.ConfigError, match="task is empty"):
        vault.context("  ")


def test_snapshot(vault: lore.Vault) -> None:
    snap = vault.snapshot()
    assert snap.bytes == len(snap.text.encode("utf-8")) <= 2048
    assert snap.text.startswith("# Snapshot (as of 2026-11-12)\n")
    open_texts = [i["text"] for i in snap.open_items]
    assert open_texts == ["准备季度复盘材料"]  # the daily to-do was checked off on 11-12
    assert [r["date"] for r in snap.recent] == ["2026-11-12", "2026-11-10"]
    next_texts = [i["text"] for i in snap.next_steps]
    assert next_texts == ["和李四确认预算口径", "明天：约四哥过一遍预算初稿。"]
    assert "- 明天：约四哥过一遍预算初稿。 (memory/2026-11-10.md:5)" in snap.text
    # Deterministic: the clock does not matter, only the notes.
    assert vault.snapshot().to_dict() == snap.to_dict()


def test_snapshot_budget_is_shared_between_sections(vault: lore.Vault) -> None:
    many = "".join(f"- [ ] 待处理事项编号 {i:03d}，需要跟进确认\n" for i in range(200))
    write_files(vault.root, {"memory/2026-11-19.md": f"# 2026-11-19\n\n{many}"})
    vault.sync()
    snap = vault.snapshot(budget=1024)
    assert snap.bytes <= 1024
    assert snap.open_items and snap.recent and snap.next_steps  # no section crowded out
    assert snap.open_items[0]["text"] == "准备季度复盘材料"  # the core file first
    assert snap.open_items[1]["text"].startswith("待处理事项编号 000")
    with pytest.raises(lore.ConfigError, match="--budget"):
        vault.snapshot(budget=10)
