"""Chinese as people type it (issue 17), over a real mixed-script vault: a query in either
script finds notes in either script, Taiwan words find mainland ones, names and tags are
found by their pinyin (full, spaced, initials, heteronyms) without drowning a real text
match, Japanese notes are found by Japanese queries; status and --explain say so. On either
backend (SQLite and PostgreSQL: the same answers)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import build_vault, first_index

import lore

pytestmark = pytest.mark.usefixtures("on_backend")  # every vault opened here, both backends

NOTES = {
    "tw/資料庫選型.md": (
        "---\ntitle: 數據庫選型\ntags: [架構]\n---\n# 數據庫選型\n\n"
        "我們比較了三種數據庫，最後選了 PostgreSQL。\n"
    ),
    "cn/软件工程.md": "# 软件工程笔记\n\n代码评审和单元测试是软件质量的基础。\n",
    "tw/記憶體.md": "# 記憶體洩漏排查\n\n服務的記憶體一直上漲，最後找到是快取沒有釋放。\n",
    "people/张三.md": "---\ntitle: 张三\naliases: [老张]\n---\n# 张三\n\n负责支付系统。\n",
    "people/zhangsan-mention.md": "# 周会\n\nzhangsan 这个账号要停用。\n",
    "places/重庆.md": "---\ntitle: 重庆出差\ntags: [出差]\n---\n重庆的火锅很辣。\n",
    "ja/東京.md": "# 東京の大学\n\n東京大学の研究室を訪問しました。ソフトウェアの話をしました。\n",
    "people/曾乐.md": "# 曾乐\n\n新来的同事。\n",
    "cn/银行.md": "---\ntags: [银行]\n---\n# 对账\n\n每天和银行对账一次。\n",
    "ja/図書館.md": "# 図書館\n\n市立図書館の開館時間は午前九時からです。\n",
    "zh/图书馆.md": "# 图书馆\n\n市图书馆开放时间是早上八点。\n",
    ".lore/config.toml": '[access]\nguest = ["cn/"]\n',
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, backend_db: Any) -> Path:
    return first_index(
        build_vault(tmp_path_factory.mktemp("chinese") / "vault", NOTES), db=backend_db
    )


@pytest.fixture(scope="module")
def vault(root: Path, backend_db: Any) -> Iterator[lore.Vault]:
    with lore.open(root, db=backend_db) as opened:
        yield opened


def top(vault: lore.Vault, query: str, n: int = 3) -> list[str]:
    return [hit.path for hit in vault.search(query, limit=n)]


@pytest.mark.parametrize("query", ["数据库", "數據庫", "数据库选型", "數據庫選型"])
def test_either_script_finds_the_traditional_note(vault: lore.Vault, query: str) -> None:
    assert top(vault, query, 1) == ["tw/資料庫選型.md"]


def test_a_traditional_query_finds_the_simplified_note(vault: lore.Vault) -> None:
    assert top(vault, "軟體工程", 1) == ["cn/软件工程.md"]


def test_a_mainland_word_finds_the_taiwan_word(vault: lore.Vault) -> None:
    assert top(vault, "内存泄漏", 1) == ["tw/記憶體.md"]


def test_snippets_come_from_the_original_text(vault: lore.Vault) -> None:
    hit = vault.search("数据库", limit=1)[0]
    assert "數據庫" in hit.snippet and "数据库" not in hit.snippet


@pytest.mark.parametrize("query", ["zhangsan", "zhang san", "Zhang San", "zs", "zhs", "zhāng sān"])
def test_a_name_is_found_by_its_pinyin(vault: lore.Vault, query: str) -> None:
    assert "people/张三.md" in top(vault, query)


def test_a_word_that_spelled_the_name_counts_as_matched(vault: lore.Vault) -> None:
    """Not "matched 0 of 1 words" on the note the word found."""
    hit = next(h for h in vault.search("zhangsan") if h.path == "people/张三.md")
    assert (hit.words_matched, hit.words_total) == (["zhangsan"], 1)
    hit = next(h for h in vault.search("zhangsan budget") if h.path == "people/张三.md")
    assert "zhangsan" in hit.words_matched and hit.words_total == 2


def test_pinyin_never_drowns_a_real_text_match(vault: lore.Vault) -> None:
    # The note that writes "zhangsan" matches the text itself: it ranks above the note
    # whose name only sounds like it.
    found = top(vault, "zhangsan")
    assert found.index("people/zhangsan-mention.md") < found.index("people/张三.md")


@pytest.mark.parametrize("query", ["chongqing", "cq"])
def test_a_heteronym_is_read_as_its_phrase_says(vault: lore.Vault, query: str) -> None:
    assert "places/重庆.md" in top(vault, query)


# Both characters are heteronyms (曾 zeng / ceng, 乐 le / yue): every combination is a key.
@pytest.mark.parametrize("query", ["zengle", "cengle", "zengyue", "cengyue", "zl", "zy"])
def test_heteronyms_no_phrase_decides_are_found_by_their_common_readings(
    vault: lore.Vault, query: str
) -> None:
    assert "people/曾乐.md" in top(vault, query)


def test_a_tag_is_found_by_its_pinyin(vault: lore.Vault) -> None:
    assert "cn/银行.md" in top(vault, "yinhang")


def test_a_japanese_query_finds_its_note(vault: lore.Vault) -> None:
    assert top(vault, "東京の大学", 1) == ["ja/東京.md"]
    assert top(vault, "研究室を訪問", 1) == ["ja/東京.md"]


def test_japanese_kanji_and_chinese_characters_keep_their_own_notes(vault: lore.Vault) -> None:
    # 図 is Japanese only (Chinese writes 图): folding leaves it, each query finds its note.
    assert top(vault, "図書館の開館時間", 1) == ["ja/図書館.md"]
    assert top(vault, "图书馆开放时间", 1) == ["zh/图书馆.md"]


def test_explain_says_when_a_hit_matched_through_folding(vault: lore.Vault) -> None:
    same = vault.search("软件工程", explain=True, limit=1)[0].explain
    assert same is not None and same.matched_folded == [] and same.folded_terms == []
    hit = vault.search("軟體工程", explain=True, limit=1)[0]
    assert hit.path == "cn/软件工程.md" and hit.explain is not None
    assert "軟體 → 软件" in hit.explain.folded_terms
    assert any(m.endswith("≈ 软件") for m in hit.explain.matched_folded)


def test_explain_says_when_a_hit_matched_by_pinyin(vault: lore.Vault) -> None:
    hit = next(h for h in vault.search("zhangsan", explain=True) if h.path == "people/张三.md")
    assert hit.explain is not None and hit.explain.pinyin == "zhangsan → 张三"


def test_status_counts_the_pinyin_names_a_principal_may_see(vault: lore.Vault) -> None:
    every = vault.status().capabilities["pinyin"]
    guest = vault.status(principal="guest").capabilities["pinyin"]
    # cn/ holds the titles 软件工程笔记 and 对账, the file names 软件工程 and 银行, the tag 银行
    assert guest.startswith("5 names and tags")
    assert int(every.split()[0]) > 5


def lore_cli(root: Path, db: Any, *args: str) -> subprocess.CompletedProcess[str]:
    lore_bin = Path(sys.executable).parent / "lore"
    return subprocess.run(
        [str(lore_bin), *args, "--vault", str(root), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_cli_shows_folding_and_pinyin(root: Path, backend_db: Any) -> None:
    status = lore_cli(root, backend_db, "status", "--json")
    assert status.returncode == 0, status.stderr
    capabilities = json.loads(status.stdout)["capabilities"]
    assert capabilities["folding"].startswith("Traditional → Simplified")
    assert "names and tags" in capabilities["pinyin"]
    explained = lore_cli(root, backend_db, "search", "zhangsan", "--explain")
    assert explained.returncode == 0, explained.stderr
    assert "matched by pinyin: zhangsan → 张三" in explained.stdout
    assert "matched 0 of" not in explained.stdout
    explained = lore_cli(root, backend_db, "search", "數據庫", "--explain")
    assert "folded (Traditional → Simplified): 數據庫 → 数据库" in explained.stdout


def test_an_index_of_the_previous_derivation_gets_folding_and_pinyin_on_its_next_sync(
    make_vault: Any,
) -> None:
    root = make_vault({"people/张三.md": "# 张三\n\n負責支付系統。\n"}, index=True)
    with lore.open(root) as vault:
        # As main's index arrives here: derived by version 5, the pinyin tables new and empty.
        with vault.store.transaction():
            vault.store.set_meta("tokenizer_version", "5")
            vault.store.clear_pinyin(None)
        status = vault.status().capabilities
        assert "older lore" in status["folding"] and "older lore" in status["pinyin"]
        assert top(vault, "zhangsan") == []
        report = vault.sync()
        assert report.added == ["people/张三.md"]  # every note derived again
        # Its title and its file name are one name.
        assert vault.status().capabilities["pinyin"].startswith("1 name or tag with")
        assert top(vault, "zhangsan") == ["people/张三.md"]
        assert top(vault, "负责支付", 1) == ["people/张三.md"]
