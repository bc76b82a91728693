"""Passage-level ranking (issue 12): a long note that holds the detail in one section is
found by that section, not lost to short notes that merely share the words or to notes
that mention the words everywhere; the parts follow the note through edits and deletes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import lore
from lore.retrieve import hybrid
from lore.retrieve.query import QueryPlan, plan
from lore.retrieve.sections import best_sections
from lore.store.query import Filters

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]

_TOPICS = [
    "gardening",
    "cooking",
    "cycling",
    "astronomy",
    "pottery",
    "sailing",
    "chess",
    "painting",
    "knitting",
    "birding",
    "fishing",
    "hiking",
]


def _filler(topic: str, paragraphs: int) -> str:
    """Paragraphs about one everyday topic: words no query below asks for."""
    return "\n\n".join(
        f"Notes on {topic}, part {i}: the weather was fine, the tools were ready and the"
        f" afternoon went by while we practised {topic} with friends from the club."
        for i in range(paragraphs)
    )


def _long_note(title: str, detail: str, *, at: int) -> str:
    """A long guide in 24 short sections; `detail` is one more paragraph of section `at`."""
    sections = []
    for i, topic in enumerate(_TOPICS * 2):
        text = _filler(topic, 2)
        if i == at:
            text = f"{text}\n\n{detail}"
        sections.append(f"## {topic.title()} {i}\n\n{text}")
    return f"# {title}\n\n" + "\n\n".join(sections) + "\n"


def _memos(n: int) -> dict[str, str]:
    return {f"misc/m{i}.md": f"# Memo {i}\n\n{_filler(_TOPICS[i % 12], 1)}\n" for i in range(n)}


def _roundup_and_helpers() -> dict[str, str]:
    """40 memos, a long note holding a detail in one section, and short notes that each
    hold some of its words."""
    files = _memos(40)
    files["guides/weekly-roundup.md"] = _long_note(
        "Weekly roundup",
        "There is now a function to sanitize HTML that returns a document fragment.",
        at=9,
    )
    for i in range(3):
        files[f"plugins/s{i}.md"] = f"# Helper {i}\n\nSanitize the HTML you paste, version {i}.\n"
    return files


def test_a_long_note_with_the_detail_in_one_section_beats_short_notes_sharing_its_words(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """Whole-note BM25 divides the long note's five matches by its length: short notes
    holding two of the words each came first. Its section holds all five together."""
    files = _roundup_and_helpers()
    for i in range(3):
        files[f"plugins/f{i}.md"] = f"# Tool {i}\n\nA document fragment helper, version {i}.\n"
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("function to sanitize HTML into a document fragment", limit=5, explain=True)
    assert hits[0].path == "guides/weekly-roundup.md"
    explain = hits[0].explain
    assert explain is not None
    # The part's BM25 carried it: the whole note's is below the short notes'.
    assert explain.channels["section"]["raw"] > explain.channels["fts"]["raw"]
    assert explain.channels["fts"]["raw"] < hits[1].explain.channels["fts"]["raw"]  # type: ignore[union-attr]


def test_words_together_in_one_section_beat_the_same_words_spread_over_a_note(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """Two long notes of the same shape: one holds the query's words in a single section
    (the answer), the other holds each of them twice, in sections about something else.
    Whole-note BM25 prefers the second; the answer comes first."""
    spread = _long_note("A scattered log", "", at=-1)
    for i, word in enumerate(["quick", "switcher", "button", "mobile"] * 2):
        heading = f"## {_TOPICS[i].title()} {i}\n\n"
        spread = spread.replace(heading, f"{heading}A {word} was mentioned.\n\n", 1)
    files = _memos(20)
    files["a-scattered.md"] = spread
    files["b-answer.md"] = _long_note(
        "A focused log", "Add a button for mobile that opens the quick switcher.", at=5
    )
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("button on mobile that opens the quick switcher", limit=5, explain=True)
    assert [h.path for h in hits][:2] == ["b-answer.md", "a-scattered.md"]
    first, second = (h.explain for h in hits[:2])
    assert first is not None and second is not None
    assert first.channels["fts"]["raw"] < second.channels["fts"]["raw"]


def test_a_chinese_long_note_is_found_by_its_section(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """Chinese words are phrases of single characters: the section that holds 二级指针 and
    二维数组 together wins over short notes holding one of them."""
    sections = [
        f"## 第{i}节\n\n"
        + "\n\n".join(f"这一段讲结构体和函数的用法，第{j}个例子。" for j in range(3))
        for i in range(24)
    ]
    sections[6] += "\n\n用二级指针实现每行长度不同的二维数组，先分配行指针。"
    files = {"c/指针笔记.md": "# C 语言笔记\n\n" + "\n\n".join(sections) + "\n"}
    for i in range(3):
        files[f"c/a{i}.md"] = f"# 例子 {i}\n\n二维数组的初始化，例子 {i}。\n"
        files[f"c/p{i}.md"] = f"# 参数 {i}\n\n二级指针作为参数，例子 {i}。\n"
    for i in range(30):
        files[f"m/m{i}.md"] = (
            f"# 随笔 {i}\n\n今天天气不错，我们去公园散步，看见湖边的柳树，第{i}天。\n"
        )
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("二级指针实现每行长度不同的二维数组", limit=5)
    assert hits[0].path == "c/指针笔记.md"


def test_the_parts_follow_the_note_through_edits_and_deletes(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """A stale part would bring its note back for words it no longer holds."""
    root = make_vault({"long.md": _long_note("Guide", "The zyxwv setting lives here.", at=3)})
    vault = open_vault(root)
    vault.sync()
    assert [h.path for h in vault.search("zyxwv setting")] == ["long.md"]
    (root / "long.md").write_text(_long_note("Guide", "Now it is called qwerty.", at=3))
    vault.sync()
    assert [h.path for h in vault.search("zyxwv")] == []
    assert [h.path for h in vault.search("qwerty")] == ["long.md"]
    (root / "long.md").unlink()
    vault.sync()
    assert [h.path for h in vault.search("qwerty")] == []


def _manager_vault() -> dict[str, str]:
    """30 long logs that each mention a 配置管理器 once, a short note dense in 管理器 and
    用法, and a long Fedora note whose one section says that dnf is its package manager."""
    filler = "今天整理了一些日常的记录，天气很好，大家一起讨论了周末的安排和读书的计划。"
    files: dict[str, str] = {}
    for i in range(30):
        sections = [f"## 第{j}节\n\n{filler * 3}" for j in range(10)]
        sections[i % 10] += f"\n\n项目里用了一个配置管理器，第{i}个。"
        files[f"log/{i:02d}.md"] = f"# 日志 {i}\n\n" + "\n\n".join(sections) + "\n"
    files["patterns/singleton.md"] = (
        "# 单例\n\n日志管理器、配置管理器和连接管理器的用法都一样："
        "每个管理器只有一个实例，用法见下。\n"
    )
    sections = [f"## 第{j}节\n\n{filler * 3}" for j in range(10)]
    sections[6] += "\n\n在 Fedora 上用 dnf 包管理器安装软件。"
    files["linux/fedora.md"] = "# Fedora 笔记\n\n" + "\n\n".join(sections) + "\n"
    return files


def test_parts_are_ranked_by_the_terms_that_bring_candidates(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """In a vault of thousands of notes most of "DNF 包管理器用法"'s terms are common: dnf and
    管理器 bring the candidates, the others (用法, 包, 理器, single characters) only score
    them (lore.retrieve.search.prune). Among parts those are rare: counted there, a short
    part dense in them outscored the part holding dnf (mynote: a singleton pattern's part
    55 against the DNF guide's 43). Parts are ranked by the candidate-bringing terms."""
    vault = open_vault(make_vault(_manager_vault()))
    vault.sync()
    store = vault.store
    full = plan("dnf 包管理器用法")
    common = tuple(t for t in full.terms if t.text not in ("dnf", "管理器"))
    query_plan = QueryPlan(full.text, full.terms, common)

    def first(best: dict[int, tuple[float, int, int]]) -> str:
        return store.paths_of([max(best, key=lambda n: best[n][0])]).popitem()[1]

    # Every term counted in the parts: the singleton note's one part comes first.
    assert first(store.rank_sections(query_plan.text_query, Filters(), 50)) == (
        "patterns/singleton.md"
    )
    ranked, best = best_sections(store, query_plan, Filters(), 5, 50, [])
    fedora = ranked[0]
    assert store.paths_of([fedora]) == {fedora: "linux/fedora.md"}
    body = store.hit_rows([fedora])[fedora].body
    assert "dnf" in body[best[fedora].start : best[fedora].end]
    # Notes another channel brought (`among`) are scored in the same query, past `depth`.
    _, scored = best_sections(store, query_plan, Filters(), 5, 1, list(best))
    assert scored == best


def test_explain_says_where_the_full_text_score_came_from(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """`--explain` names the part (its heading) when a part's share beat the whole note,
    the whole note otherwise; the CLI prints it."""
    files = _roundup_and_helpers()
    root = make_vault(files)
    vault = open_vault(root)
    vault.sync()
    hits = vault.search("function to sanitize HTML into a document fragment", limit=5, explain=True)
    sources = {h.path: h.explain.fts_text for h in hits if h.explain is not None}
    assert sources["guides/weekly-roundup.md"] == "a part (§ Birding 9)"
    assert sources["plugins/s0.md"] == "the whole note"
    vault.close()
    out = subprocess.run(
        [sys.executable, "-m", "lore", "search", "sanitize HTML document fragment", "--explain"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "full text from: a part (§ Birding 9)" in out


def test_the_snippet_comes_from_the_part_that_ranked_the_note(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """When a part's score ranked a long note, its snippet is taken from that part, though
    another section holds more of the query's words (common ones): the evidence shows what
    ranked the note. (A real vault's DNF guide was ranked by its section on history and
    showed a window of its cache section.)"""
    files = _memos(40)
    for i in range(20):  # the query's common words: in half the notes
        files[f"misc/m{i}.md"] += "\nThe package cache keeps metadata files.\n"
    detail = "To roll back, dnf history rollback reverts one transaction: undo it all."
    common = "Here dnf keeps a package cache, with metadata files for every repository."
    note = _long_note("Package manager guide", detail, at=9)
    files["linux/dnf.md"] = note.replace("## Pottery 16\n\n", f"## Pottery 16\n\n{common}\n\n")
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("dnf rollback undo package cache metadata files", limit=3, explain=True)
    assert hits[0].path == "linux/dnf.md"
    assert hits[0].explain is not None
    assert hits[0].explain.fts_text == "a part (§ Birding 9)"
    assert hits[0].heading == "Birding 9"
    assert "rollback" in hits[0].snippet and "repository" not in hits[0].snippet


def test_a_note_matched_by_its_title_alone_is_not_shown_by_a_part_without_the_words(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each part is read with its note's title (lore.derive.sections), so when only the
    title holds a query's word every part matches it and the shortest scores best: here
    a heading alone, cut off from the long paragraph after it. That part ranked the note,
    but its text holds none of the query's words: the snippet is the whole note's best
    window, the title line, not "…Links". (A real vault's "Linux 内核学习笔记", found by
    such a part for 读书笔记, showed "…核心资源".)"""
    # Its part's score, not the whole note's, ranked it (as with a query of more words).
    monkeypatch.setattr(hybrid, "fts_from_part", lambda fused, part: True)
    files = _memos(20)
    links = " ".join(f"[{t} guide {i}](./{t}-{i}.md)" for i in range(12) for t in _TOPICS[:3])
    files["linux/kernel.md"] = (
        f"# Kernel journal\n\n{_filler('chess', 6)}\n\n## Links\n\n{links}\n\n"
        + "\n\n".join(f"## {t.title()}\n\n{_filler(t, 2)}" for t in _TOPICS)
        + "\n"
    )
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("journal", limit=5, explain=True)
    assert [h.path for h in hits] == ["linux/kernel.md"]
    assert hits[0].explain is not None and hits[0].explain.fts_text == "a part (§ Links)"
    assert hits[0].snippet.startswith("Kernel «journal» Notes on chess"), hits[0].snippet
    assert hits[0].line == 1 and hits[0].heading == "Kernel journal", hits[0]
    # A part that holds a word of the query other than the title's is still the evidence.
    hits = vault.search("journal knitting", limit=5)
    assert hits[0].path == "linux/kernel.md" and "«knitting»" in hits[0].snippet, hits[0]
    assert hits[0].heading == "Knitting", hits[0]
