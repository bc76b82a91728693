"""Symbols a note is about are searchable as themselves (issue 12): sed's `&` and `\\1`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import lore


def test_sed_symbols_find_the_note_about_them(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    files = {
        "sed_match.md": (
            "# sed 匹配引用技巧总结：& 与 \\1, \\2\n\n`&` 代表整个匹配，`\\1` 代表第一个分组。\n"
        ),
        "sed_regex.md": "# sed 核心区别：基础正则与扩展正则\n\nBRE 与 ERE 的区别，第 1 条规则。\n",
        "awk.md": "# awk 与 sed 的区别\n\nawk 按字段，sed 按行；1 行 1 条。\n",
        "news.md": "# R&D news\n\nR&D &amp; more: step 1, step 2.\n",
    }
    vault = open_vault(make_vault(files))
    vault.sync()
    assert vault.search("sed 里 & 和 \\1 的区别", limit=3)[0].path == "sed_match.md"
    # "\1" is the escape, not the number; "&" alone is not the letter of R&D.
    assert [h.path for h in vault.search("\\1", limit=5)] == ["sed_match.md"]
    assert [h.path for h in vault.search("&", limit=5)] == ["sed_match.md"]
