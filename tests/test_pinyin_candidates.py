"""Which notes a pinyin word brings as name candidates when it begins the keys of more
notes than a search takes (at 100,000 notes "go" begins those of 3,424): the notes whose
keys come first in alphabetical order, then by id; the same on both backends, whatever
plan the database reads them with."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import build_vault, first_index

import lore
from lore.store.query import Filters


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory, backend_db: Any) -> Iterator[lore.Vault]:
    """Twenty notes named 工作 (gongzuo) first, then five named 公司 (gongsi), whose key
    comes first for "gong" though their ids come last."""
    files = {f"a{i:02d}.md": f"# 工作\n\n第 {i} 条。\n" for i in range(20)}
    files |= {f"z{i}.md": f"# 公司\n\n第 {i} 家。\n" for i in range(5)}
    root = first_index(
        build_vault(tmp_path_factory.mktemp("pinyin") / "vault", files), db=backend_db
    )
    with lore.open(root, db=backend_db) as opened:
        yield opened


def candidates(vault: lore.Vault, word: str, limit: int) -> list[str]:
    with vault.store.snapshot():
        ids = vault.store.pinyin_candidates([word], Filters(), limit)
        paths = vault.store.paths_of(ids)
    return [paths[i] for i in ids]


def test_the_keys_that_come_first_bring_their_notes(vault: lore.Vault) -> None:
    """公司's keys for "gong" are gongci and gongsi (司 has two readings), 工作's gongzuo:
    so the notes named 公司 come first, each once, then those named 工作 by id."""
    companies = [f"z{i}.md" for i in range(5)]
    assert candidates(vault, "gong", 5) == companies
    assert candidates(vault, "gong", 8) == [*companies, "a00.md", "a01.md", "a02.md"]
    # For "g": gc, gongci, gongsi (公司) come before gongzuo, then gs (公司) and gz (工作).
    assert candidates(vault, "g", 7) == [*companies, "a00.md", "a01.md"]
    assert candidates(vault, "gongzuo", 30) == [f"a{i:02d}.md" for i in range(20)]
