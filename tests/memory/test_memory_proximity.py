"""Proximity in lookup's L2: an entry whose one line (list item, wrapped sentence) holds
the question outranks one where the same words are scattered, even a newer one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import lore
from lore.memory import recall
from lore.memory.recall import passages

MakeVault = Callable[..., Path]

FILES = {
    ".lore/config.toml": '[memory]\ntoday = "2026-11-20"\n',
    "entities/张三.md": "---\ntype: person\naliases: [Zhang San]\n---\n# 张三\n\n数据工程师。\n",
    "log/2026-10-01.md": (
        "---\ndate: 2026-10-01\n---\n# 周会\n\n"
        "- 张三拍板：缓存方案用 Redis Cluster。\n- 会议室换到三楼。\n- 午饭订了面。\n"
    ),
    "log/2026-11-18.md": (
        "---\ndate: 2026-11-18\n---\n# 周会\n\n"
        "- 张三请假一天。\n- 缓存方案还没定。\n- 拍板的事放到下周。\n"
    ),
}


def split(text: str) -> list[str]:
    starts = passages(text)
    ends = [*starts[1:], len(text)] if starts else []
    return [text[a:b].strip() for a, b in zip(starts, ends, strict=True)]


def test_passages() -> None:
    text = (
        "A sentence that wraps\nonto the next line.\nAnother one.\n- item\n- item two\n\n"
        "**user**: 缓存用哪个\n**assistant**: Redis\n# Heading\nbody"
    )
    assert split(text) == [
        "A sentence that wraps\nonto the next line.",
        "Another one.",
        "- item",
        "- item two",
        "**user**: 缓存用哪个",
        "**assistant**: Redis",
        "# Heading",
        "body",
    ]
    assert split("") == [] and split("\n\n") == []


def ranked(root: Path, query: str) -> list[str]:
    with lore.open(root) as vault:
        vault.sync()
        result = vault.lookup(query)
    assert result.level == "L2", result.tried
    return [h.path for h in result.hits]


@pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL
def test_the_line_that_holds_the_question_wins(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(FILES)
    query = "Zhang San 拍板的缓存方案"
    assert ranked(root, query)[:2] == ["log/2026-10-01.md", "log/2026-11-18.md"]
    # Without proximity, decay puts the newer note (the words scattered) first.
    monkeypatch.setattr(recall, "PROXIMITY_FLOOR", 1.0)
    assert ranked(root, query)[:2] == ["log/2026-11-18.md", "log/2026-10-01.md"]
