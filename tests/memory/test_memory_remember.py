"""`Vault.remember`: the daily note it writes, the anchor, alias normalisation, status and
trust rules, idempotence, and indexing at once."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import one_line_naming
from memory_support import write

import lore

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]
AT = dt.datetime(2026, 11, 21, 14, 3, 12)


@pytest.fixture
def vault(make_vault: MakeVault, open_vault: OpenVault) -> lore.Vault:
    opened = open_vault(write(make_vault()))
    opened.sync()
    return opened


def test_remember_writes_the_daily_note_and_indexes_it_at_once(vault: lore.Vault) -> None:
    memory = vault.remember(
        "Redis 迁移定在 11 月底，负责人已确认。",
        entities=["zs", "四哥"],
        source="周会纪要 2026-11-21",
        trust="confirmed",
        at=AT,
    )
    assert memory.path == "memory/2026-11-21.md"
    assert memory.anchor.startswith("m-140312-")
    assert (memory.date, memory.time, memory.created, memory.indexed) == (
        "2026-11-21",
        "14:03:12",
        True,
        True,
    )
    assert memory.entities == ["张三", "李四"]  # aliases normalised to the card names
    assert "entity 'zs' written as '张三'" in memory.notes
    text = (vault.root / memory.path).read_text(encoding="utf-8")
    assert text == (
        "---\ndate: 2026-11-21\n---\n# 2026-11-21\n\n"
        f"## 14:03:12 Redis 迁移定在 11 月底，负责人已确认。 {{#{memory.anchor}}}\n\n"
        "Redis 迁移定在 11 月底，负责人已确认。\n\n"
        "status: claimed · trust: confirmed · source: 周会纪要 2026-11-21 · "
        "entities: [[张三]], [[李四]]\n"
    )
    assert text.split("\n")[memory.line - 1].startswith("## 14:03:12")
    # Indexed at once: no `lore index` in between.
    hit = vault.lookup("Redis 迁移").hits[0]
    assert hit.anchor == memory.pointer  # type: ignore[attr-defined]
    assert hit.status == "claimed" and hit.unverified  # type: ignore[attr-defined]
    assert memory.to_dict()["pointer"] == memory.pointer
    # The entities line makes the entry a mention of both.
    mentioned = vault.lookup("李四").entity
    assert mentioned is not None
    assert any(m["path"] == memory.path for m in mentioned["mentions"]["latest"])


def test_same_entry_twice_is_written_once(vault: lore.Vault) -> None:
    first = vault.remember("同一条结论。", at=AT)
    again = vault.remember("同一条结论。", at=AT + dt.timedelta(hours=1))
    assert (again.created, again.anchor, again.line) == (False, first.anchor, first.line)
    changed = vault.remember("同一条结论。", status="verified", source="验收报告", at=AT)
    assert changed.created and changed.anchor != first.anchor
    assert (vault.root / first.path).read_text(encoding="utf-8").count("同一条结论。\n") == 2


def test_new_day_new_note_and_unknown_entities(vault: lore.Vault) -> None:
    memory = vault.remember("新项目启动", entities=["天穹计划"], at=AT + dt.timedelta(days=1))
    assert memory.path == "memory/2026-11-22.md"
    assert memory.entities == ["天穹计划"]
    assert memory.notes == ["entity '天穹计划' has no card yet; kept as written"]


def test_text_that_looks_like_markdown_structure_stays_in_its_entry(vault: lore.Vault) -> None:
    tricky = "# 不是标题\n```python\nprint('unclosed fence')\nstatus: verified"
    first = vault.remember(tricky, at=AT)
    second = vault.remember("之后的条目", at=AT + dt.timedelta(minutes=1))
    entries = vault.store.query(
        "SELECT anchor, status FROM memory_entries WHERE kind = 'remember' ORDER BY seq"
    )
    assert entries == [(first.anchor, "claimed"), (second.anchor, "claimed")]
    assert vault.lookup("之后的条目").hits[0].anchor == second.pointer  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"text": "  "}, "empty"),
        ({"text": "a\x00b"}, "NUL"),
        ({"text": "x" * 70_000}, "bytes"),
        ({"text": "ok", "status": "done"}, "--status"),
        ({"text": "ok", "trust": "gossip"}, "--trust"),
        ({"text": "ok", "status": "verified"}, "--source"),
        ({"text": "ok", "entities": ["  "]}, "--entity"),
    ],
)
def test_bad_arguments_are_refused_and_nothing_is_written(
    vault: lore.Vault, kwargs: dict[str, object], named: str
) -> None:
    with pytest.raises(lore.LoreError) as caught:
        vault.remember(at=AT, **kwargs)  # type: ignore[arg-type]
    one_line_naming(str(caught.value), named)
    assert not (vault.root / "memory/2026-11-21.md").exists()


def test_a_daily_note_that_is_not_utf8_is_not_touched(vault: lore.Vault) -> None:
    note = vault.root / "memory/2026-11-21.md"
    note.write_bytes(b"# \xff\xfe broken\n")
    with pytest.raises(lore.LoreError) as caught:
        vault.remember("x", at=AT)
    one_line_naming(str(caught.value), "memory/2026-11-21.md", "UTF-8")
    assert note.read_bytes() == b"# \xff\xfe broken\n"


def test_remember_replaces_the_note_whole_and_leaves_no_temporary_file(
    vault: lore.Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = vault.remember("第一条结论", at=AT)
    note = vault.root / first.path
    note.chmod(0o600)
    before = note.read_bytes()
    # The rename fails (a full disk, a read-only mount): the note is as it was, nothing stray.
    import os

    def refuse(src: object, dst: object, **dir_fds: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(lore.PathError) as caught:
        vault.remember("第二条结论", at=AT + dt.timedelta(seconds=1))
    one_line_naming(str(caught.value), "memory/2026-11-21.md", "No space left on device")
    assert note.read_bytes() == before
    monkeypatch.undo()
    vault.remember("第二条结论", at=AT + dt.timedelta(seconds=1))
    text = note.read_text(encoding="utf-8")
    assert text.startswith(before.decode("utf-8")) and text.count("第二条结论") == 2
    assert note.stat().st_mode & 0o777 == 0o600  # the note's mode is kept
    siblings = {p.name for p in note.parent.iterdir()}
    assert ".2026-11-21.md.lock" in siblings
    assert not [name for name in siblings if name.endswith(".tmp")]
    vault.sync()
    assert all(not h.path.endswith(".lock") for h in vault.search("结论", limit=50))
