"""`Vault.check`: every kind of finding, nothing changed without `fix`, and `fix` repairing
only what is mechanical."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_files
from memory_support import write

import lore
from lore.memory.check import KINDS

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".lore" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def vault(make_vault: MakeVault, open_vault: OpenVault) -> lore.Vault:
    root = write(make_vault())
    write_files(
        root,
        {
            "MEMORY.md": (
                "# Core\n\n## 结论\n\n"
                "- 好的锚点 → memory/2026-11-12.md#2026-11-12\n"
                "- 显式 id → memory/2026-11-21.md#m-missing\n"
                "- 断掉的文件 → memory/2020-01-01.md#x\n"
                "- 断掉的小节 → rules/客户去重规则 v2.md#不存在的小节\n"
                "- 小节名也行 → rules/客户去重规则 v2.md#客户去重规则 v2\n"
                "- 没有锚点\n"
            ),
            "entities/赵四.md": "---\naliases: [zs]\n---\n# 赵四\n",
        },
    )
    opened = open_vault(root)
    opened.sync()
    opened.remember("没有证据的声明", at=dt.datetime(2026, 9, 1, 8, 0, 0))
    opened.remember("有出处的声明", source="监控截图", at=dt.datetime(2026, 11, 19, 8, 0, 0))
    return opened


def test_every_kind_is_found(vault: lore.Vault) -> None:
    before = tree_hash(vault.root)
    report = vault.check()
    assert tree_hash(vault.root) == before  # changes nothing
    found = {(f.kind, f.path): f for f in report.findings}
    messages = [f"{f.path}:{f.line}: {f.message}" for f in report.findings]
    assert ("conclusion-without-anchor", "MEMORY.md") in found
    broken = [m for m in messages if "broken" in m or "no such note" in m or "has no section" in m]
    assert any("memory/2020-01-01.md#x: no such note" in m for m in messages)
    assert any("has no section or id '不存在的小节'" in m for m in messages)
    assert any("memory/2026-11-21.md#m-missing" in m for m in messages), broken
    assert not any("2026-11-12.md#2026-11-12" in m for m in messages)
    assert not any("#客户去重规则 v2" in m for m in messages)  # a heading's own text works
    assert found[("entity-without-last-activity", "entities/李四.md")].fixable
    assert ("alias-conflict", "entities/张三.md") in found
    assert ("dangling-relation", "people.md") in found  # 王五 → [[预算会]]
    claimed = [f for f in report.findings if f.kind == "claimed-without-evidence"]
    assert len(claimed) == 1 and "没有证据的声明" in claimed[0].message
    stale = [f for f in report.findings if f.kind == "stale-status"]
    assert len(stale) == 1 and "80 days ago" in stale[0].message
    assert vault.check(stale_days=100).to_dict()["counts"].get("stale-status") is None
    assert list(report.to_dict()["counts"]) == sorted(report.to_dict()["counts"], key=KINDS.index)
    assert report.checked["conclusions"] == 6 and not report.ok


def test_fix_writes_last_activity_and_nothing_else(vault: lore.Vault) -> None:
    card = vault.root / "entities/李四.md"
    before = card.read_text(encoding="utf-8")
    others = tree_hash(vault.root)
    report = vault.check(fix=True)
    # 赵四 has no dated event or mention to take a date from: left for a person.
    assert [(f.kind, f.path) for f in report.fixed] == [
        ("entity-without-last-activity", "entities/李四.md")
    ]
    after = card.read_text(encoding="utf-8")
    assert after == before.replace(
        "aliases: [Li Si, 四哥]\n", "aliases: [Li Si, 四哥]\nlast_activity: 2026-11-10\n"
    )
    assert not any(
        f.kind == "entity-without-last-activity" and f.path == "entities/李四.md"
        for f in vault.check().findings
    )
    assert others != tree_hash(vault.root)
    # The fixed card reads back as a card date.
    activity = vault.lookup("李四").entity["last_activity"]  # type: ignore[index]
    assert activity["declared"] == "2026-11-10"


def test_fix_on_a_section_card(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault(
        {
            ".lore/config.toml": '[memory]\ntoday = "2026-11-20"\n',
            "people.md": "# People\n\n### 孙八（Person）\n- **身份**：法务\n",
            "memory/2026-11-03.md": "# 2026-11-03\n\n- 和孙八过了合同。\n",
        }
    )
    vault = open_vault(root)
    vault.sync()
    fixed = vault.check(fix=True).fixed
    assert [f.path for f in fixed] == ["people.md"]
    assert (root / "people.md").read_text(encoding="utf-8") == (
        "# People\n\n### 孙八（Person）\n- **最后活动**：2026-11-03\n- **身份**：法务\n"
    )
    assert vault.check().ok


def test_clean_memory_is_ok(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault(
        {
            "entities/a.md": (
                "---\nlast_activity: 2026-01-01\n---\n# Alpha\n\n## 关系\n- 属于 [[b]]\n"
            ),
            "b.md": "# b\n",
        }
    )
    vault = open_vault(root)
    vault.sync()
    report = vault.check()
    assert report.ok and report.to_dict()["ok"] is True
    assert report.checked == {"entities": 1, "conclusions": 0, "entries": 0, "relations": 1}
    with pytest.raises(lore.ConfigError, match="--stale-days"):
        vault.check(stale_days=-1)
