"""The "Bad input" list of the agent-memory issue, one test each: an entity defined twice,
an alias shared by two entities, a relation to a missing entity, a malformed date, a daily
note edited by hand between two `remember` calls, two `remember` calls at the same moment,
and a principal with no rules."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import one_line_naming, write_files
from memory_support import TODAY, remember_worker, write

import lore
from lore.cli import main

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def kinds(report: lore.Vault | object) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for finding in report.findings:  # type: ignore[attr-defined]
        out.setdefault(finding.kind, []).append(f"{finding.path}:{finding.line}: {finding.message}")
    return out


def test_entity_defined_twice(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = write(make_vault())
    write_files(
        root,
        {
            "team.md": "# Team\n\n### 张三 (Person)\n- **别名**：三哥\n- **关系**：[[星图]]\n",
        },
    )
    vault = open_vault(root)
    vault.sync()
    report = vault.check()
    duplicates = kinds(report)["duplicate-entity"]
    assert len(duplicates) == 1
    one_line_naming(duplicates[0], "张三", "entities/张三.md:1", "team.md:3", "2 times")

    # One entity, both definitions merged: the file card leads, the section adds to it.
    result = vault.lookup("三哥")
    assert result.level == "L1"
    assert result.entity is not None
    assert result.entity["path"] == "entities/张三.md"
    assert set(result.entity["aliases"]) == {"Zhang San", "zs", "三哥"}
    assert result.entity["duplicates"] == ["team.md:3"]
    targets = {r["target"] for r in result.entity["relations"] if r["direction"] == "out"}
    assert {"客户去重规则 v2", "李四", "星图"} <= targets
    assert any("defined more than once" in note for note in result.notes)
    # Nothing was lost: both files are still indexed and searchable.
    assert {h.path for h in vault.search("三哥")} >= {"team.md"}


def test_alias_shared_by_two_entities(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = write(make_vault())
    write_files(
        root,
        {
            "entities/赵四.md": "---\ntype: person\naliases: [zs, 四儿]\n---\n# 赵四\n\n销售。\n",
            "memory/2026-11-15.md": "# 2026-11-15\n\n- zs 说周五交付。\n- 赵四 请假一天。\n",
        },
    )
    vault = open_vault(root)
    vault.sync()
    conflicts = kinds(vault.check())["alias-conflict"]
    assert len(conflicts) == 1
    one_line_naming(conflicts[0], "'zs'", "张三", "赵四", "entities/张三.md", "entities/赵四.md")

    result = vault.lookup("zs")
    assert result.level == "L1"
    assert any("alias of 2 entities" in note and "赵四" in note for note in result.notes)
    # The shared spelling counts as a mention of neither; the names still count.
    mentions = dict(
        vault.store.query(
            "SELECT m.entity_key, m.count FROM entity_mentions m JOIN notes n ON n.id = m.note_id"
            " WHERE n.path = 'memory/2026-11-15.md'"
        )
    )
    assert mentions == {"赵四": 1}
    # Search expands an ambiguous alias to every entity that claims it.
    paths = {h.path for h in vault.search("zs")}
    assert {"entities/张三.md", "entities/赵四.md", "memory/2026-11-15.md"} <= paths


def test_relation_to_a_missing_entity_is_a_dangling_edge(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = write(make_vault())
    card = root / "entities/张三.md"
    card.write_text(
        card.read_text(encoding="utf-8").replace(
            "- 汇报给 [[李四]]", "- 汇报给 [[李四]]\n- 主导 [[天穹计划]]"
        ),
        encoding="utf-8",
    )
    vault = open_vault(root)
    vault.sync()
    # Kept as an edge in the index...
    edges = vault.store.query(
        "SELECT source, relation, target, kind FROM entity_edges WHERE target = '天穹计划'"
    )
    assert edges == [("张三", "主导", "天穹计划", "relation")]
    # ...shown as dangling on the card...
    entity = vault.lookup("张三").entity
    assert entity is not None
    rel = next(r for r in entity["relations"] if r.get("target") == "天穹计划")
    assert rel["resolved"] == {"kind": None}
    # ...and reported with the file and line.
    dangling = kinds(vault.check())["dangling-relation"]
    assert any("天穹计划" in d and d.startswith("entities/张三.md:") for d in dangling)
    for line in dangling:
        one_line_naming(line, "dangling")

    # Once the entity exists, the same edge resolves and the report is gone.
    write_files(root, {"entities/天穹计划.md": "---\ntype: project\n---\n# 天穹计划\n"})
    vault.sync()
    assert not any("天穹计划" in d for d in kinds(vault.check()).get("dangling-relation", []))


def test_malformed_dates(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = write(make_vault())
    write_files(
        root,
        {
            "entities/钱七.md": (
                "---\ntype: person\naliases: [Qian Qi]\nlast_activity: 2026-02-30\n---\n"
                "# 钱七\n\n## 关键事件\n\n- 2026-13-45：一件日期写错的事\n- 2026-11-03：入职\n"
            ),
            "memory/2026-13-45.md": "# 写错日期的日记\n\n- 钱七 来了\n",
        },
    )
    vault = open_vault(root)
    report = vault.sync()
    # The card with the broken date is indexed (with a warning naming the file)...
    assert "entities/钱七.md" in report.added
    assert any(w.path == "entities/钱七.md" for w in report.warnings)
    # ...and still an entity: its aliases survived the broken front matter value.
    result = vault.lookup("Qian Qi")
    assert result.level == "L1"
    assert result.entity is not None
    # Last activity falls back to what is a date, and says where it comes from.
    assert result.entity["last_activity"]["date"] == "2026-11-03"
    assert result.entity["last_activity"]["source"] == "event"
    malformed = kinds(vault.check())["malformed-date"]
    assert any("'2026-02-30'" in m and m.startswith("entities/钱七.md") for m in malformed)
    assert any("'2026-13-45'" in m and m.startswith("entities/钱七.md") for m in malformed)
    assert any(m.startswith("memory/2026-13-45.md") for m in malformed)
    for line in malformed:
        one_line_naming(line, "not a")

    # A malformed date argument is refused with the argument named, and nothing is written.
    result_cli = CliRunner().invoke(
        main, ["digest", "-", "--date", "2026-02-30", "--vault", str(root)], input="决定：发布。\n"
    )
    assert result_cli.exit_code == 1
    one_line_naming(result_cli.stderr.strip(), "lore: error:", "--date", "2026-02-30")
    assert not (root / "memory/2026-02-30.md").exists()


def test_daily_note_edited_by_hand_between_two_remember_calls(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = write(make_vault())
    vault = open_vault(root)
    first = vault.remember("缓存方案选 Redis Cluster。", at=dt.datetime(2026, 11, 21, 9, 0, 0))
    note = root / first.path
    # By hand: correct the entry, add a line, and leave the file without a final newline.
    edited = note.read_text(encoding="utf-8").replace("Redis Cluster", "Redis Cluster（三节点）")
    edited += "\n- 手写：下午和运维对了一下机器。"
    note.write_text(edited, encoding="utf-8")

    second = vault.remember("扩容窗口定在周六凌晨。", at=dt.datetime(2026, 11, 21, 15, 30, 0))
    text = note.read_text(encoding="utf-8")
    assert text.startswith(edited)  # every hand edit kept, byte for byte
    assert text.count("{#" + first.anchor + "}") == 1  # the first anchor is stable
    assert text.count("{#" + second.anchor + "}") == 1
    lines = text.split("\n")
    assert lines[second.line - 1].startswith("## 15:30:00 扩容窗口定在周六凌晨。")
    assert lines[first.line - 1].startswith("## 09:00:00 ")
    # Both entries, the hand-edited one as edited, are in the index at once.
    hit = vault.lookup("三节点").hits[0]
    assert hit.anchor == f"{first.path}#{first.anchor}"  # type: ignore[attr-defined]
    assert vault.lookup("扩容窗口").hits[0].anchor == second.pointer  # type: ignore[attr-defined]
    assert vault.lookup("运维").level == "L2"


def test_two_remember_calls_at_the_same_moment(make_vault: MakeVault) -> None:
    root = write(make_vault())
    with lore.open(root) as vault:
        vault.sync()
    stamp = "2026-11-21T10:00:00"
    texts = [f"并发写入第 {i} 条：编号 K{i:02d}。" for i in range(4)]
    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    jobs = [*texts, texts[0]]  # four different entries and one repeat, all at one second
    barrier = ctx.Barrier(len(jobs))
    results = ctx.Queue()
    procs = [
        ctx.Process(target=remember_worker, args=(str(root), text, stamp, barrier, results))
        for text in jobs
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    pairs = [results.get(timeout=5) for _ in jobs]
    assert len({anchor for text, anchor in pairs if text == texts[0]}) == 1  # the repeat
    found = dict(pairs)
    anchors = [found[text] for text in texts]
    text = (root / "memory/2026-11-21.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## 10:00:00 .* \{#(m-[^}]+)\}$", text, flags=re.M)
    assert len(headings) == len(texts), text  # none lost, the repeat not written twice
    assert len(set(headings)) == len(texts)
    assert set(anchors) == set(headings)
    for i in range(len(texts)):
        assert text.count(f"K{i:02d}") == 2  # in the heading and in the body, once each
    assert text.startswith("---\ndate: 2026-11-21\n---\n# 2026-11-21\n")
    assert text.count("# 2026-11-21\n") == 1
    with lore.open(root) as vault:
        vault.sync()
        for i in range(len(texts)):
            assert vault.lookup(f"K{i:02d}").level == "L2"

    # Threads in one process, each with its own handle, behave the same.
    errors: list[BaseException] = []

    def worker(i: int, gate: threading.Barrier) -> None:
        try:
            with lore.open(root) as own:
                gate.wait()
                own.remember(f"线程写入 T{i}", at=dt.datetime(2026, 11, 22, 8, 0, 0))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    gate = threading.Barrier(3)
    threads = [threading.Thread(target=worker, args=(i, gate)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    day = (root / "memory/2026-11-22.md").read_text(encoding="utf-8")
    assert sorted(re.findall(r"线程写入 (T\d)\n", day)) == ["T0", "T1", "T2"]


def test_principal_with_no_rules_sees_nothing_and_says_so(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = write(make_vault())
    vault = open_vault(root)
    vault.sync()
    for principal in ("stranger", "nobody"):  # not in [access] / an empty rule list
        search = vault.search("张三", principal=principal)
        assert list(search) == [] and search.reason
        one_line_naming(search.reason, repr(principal), "sees nothing")
        lookup = vault.lookup("张三", principal=principal)
        assert (lookup.level, lookup.hits, lookup.entity) == ("L4", [], None)
        assert any("sees nothing" in t for t in lookup.tried)
        recent = vault.recent(days=365, principal=principal)
        assert (recent.entities, recent.notes) == ([], [])
        assert recent.reason and "sees nothing" in recent.reason
        view = vault.context("张三 的去重规则", principal=principal)
        assert view.items == [] and "sees nothing" in view.text
        assert "张三" not in view.text.split("\n", 1)[1]
        snap = vault.snapshot(principal=principal)
        assert snap.open_items == [] and "sees nothing" in snap.text

    out = CliRunner().invoke(main, ["lookup", "张三", "--as", "stranger", "--vault", str(root)])
    assert out.exit_code == 0
    assert "L4" in out.stdout and "sees nothing" in out.stdout
    assert "entities/张三.md" not in out.stdout
    assert TODAY  # the vault's fixed day is what `recent` measured from
