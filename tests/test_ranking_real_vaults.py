"""Ranking defects seen on real vaults (issue 12), each on a small vault built here: common
words still score, long questions still recall, names beat shared tags, counts are counts,
and the query syntax people expect (-word, c++, C#, .NET, partial matches said so)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import lore
from lore.retrieve.hybrid import CANDIDATES_WANTED

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def _common_chinese(n: int) -> dict[str, str]:
    """n notes that all hold 编, 程 and 序 (程序, 过程, 编写): characters too common to
    bring candidates."""
    return {
        f"misc/n{i:02d}.md": f"# 笔记 {i}\n\n这个过程的程序由我编写，第 {i} 次修改。\n"
        for i in range(n)
    }


def test_a_common_word_of_a_mixed_query_still_scores(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    files = _common_chinese(CANDIDATES_WANTED + 20)  # more than a search reads for candidates
    files.update(
        {
            "ai/tools.md": "# AI 工具清单\n\nAI 写作，AI 绘画，AI 翻译，AI 搜索。\n",
            "ai/agents.md": "# AI agents\n\nAI AI AI: agents that plan.\n",
            "ai/coding.md": "# AI 编程助手\n\n用 AI 编程：补全、重构。\n",
            "ai/pair.md": "# 结对编程\n\n和 AI 一起编程的体会。\n",
        }
    )
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("AI 编程", limit=5, explain=True)
    # The notes holding both words come first, the one naming them both at the top.
    assert [h.path for h in hits][:2] == ["ai/coding.md", "ai/pair.md"]
    explain = hits[0].explain
    assert explain is not None
    # No term is silently left out: the common characters only score, or (held by more
    # than half of the notes) have no BM25 weight and are listed as dropped.
    assert set(explain.score_only_terms) | set(explain.dropped_terms) >= {"编", "程"}
    assert not set(explain.dropped_terms) - {"编", "程"}
    assert set(explain.matched_terms) >= {"ai", "编程"}
    assert hits[0].words_matched == ["ai", "编程"] and hits[0].words_total == 2


def test_a_long_question_never_comes_back_with_a_handful(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """The rare words of a long spoken question are in two notes; thirty more share its
    common words: the list is full, the two first."""
    files = _common_chinese(30)
    files["k/kafka.md"] = "# 消息队列\n\nKafka 的分区副本。\n"
    files["k/broker.md"] = "# Broker\n\nKafka broker 宕机以后分区副本怎么选主。\n"
    vault = open_vault(make_vault(files))
    vault.sync()
    question = "我记得之前写过一个程序，Kafka broker 宕机之后分区副本的选主过程是怎么编写的来着"
    hits = vault.search(question, limit=10)
    assert len(hits) == 10
    assert [h.path for h in hits][:2] == ["k/broker.md", "k/kafka.md"]


def test_the_note_named_by_the_query_beats_notes_that_share_a_tag(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    files = {
        "concepts/fsm.md": "---\ntitle: Finite State Machine\n---\nStates and transitions.\n",
        "howto/import.md": (
            "---\ntitle: Importing from other apps\naliases: [Import notes]\n---\nSteps.\n"
        ),
    }
    for i in range(6):
        files[f"tagged/t{i}.md"] = (
            "---\ntags: [finite, state, machine, import, notes]\n---\n"
            f"A state machine here, a finite machine there; machine state {i}. "
            "Import the notes, notes to import.\n"
        )
    vault = open_vault(make_vault(files))
    vault.sync()
    assert vault.search("finite state machine", limit=3)[0].path == "concepts/fsm.md"
    assert vault.search("import notes", limit=3)[0].path == "howto/import.md"
    # The file name is a name too (an Obsidian note's name), in any case.
    assert vault.search("FSM", limit=3)[0].path == "concepts/fsm.md"


def test_matched_counts_every_matching_note_not_the_pool(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    files = {f"z/{i:03d}.md": f"zebra number {i}\n" for i in range(90)}
    files.update({f"o/{i:03d}.md": f"okapi {i}\n" for i in range(5)})
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("zebra", limit=3)
    assert len(hits) == 3 and hits.matched == 90
    assert vault.search("zebra", limit=3, path="o/").matched == 0


def test_minus_excludes_and_symbol_names_are_searchable(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    vault = open_vault(
        make_vault(
            {
                "cpp.md": "# Templates in C++\n\nC++ templates and concepts.\n",
                "csharp.md": "# C# generics\n\nGenerics in C#.\n",
                "c.md": "# The C language\n\nPointers in C.\n",
                "dotnet.md": "# The .NET runtime\n\nGarbage collection in .NET.\n",
                "network.md": "# Home network\n\nThe net at home, a network.\n",
                "docker.md": "# docker compose\n\nRunning compose files with docker.\n",
                "docker-run.md": "# docker run\n\nRunning one container with docker.\n",
                "ssh.md": "# ssh -t\n\nssh -t forces a tty.\n",
            }
        )
    )
    vault.sync()
    assert [h.path for h in vault.search("c++")] == ["cpp.md"]
    assert [h.path for h in vault.search("C#")] == ["csharp.md"]
    assert vault.search(".NET")[0].path == "dotnet.md"
    assert [h.path for h in vault.search("docker -compose")] == ["docker-run.md"]
    assert [h.path for h in vault.search('docker -"docker compose"')] == ["docker-run.md"]
    assert vault.search("ssh -t")[0].path == "ssh.md"  # a short option is searched, not excluded
    only_excluded = vault.search("-docker")
    assert list(only_excluded) == [] and "excluded" in (only_excluded.reason or "")


def test_options_are_searched_and_stop_words_said(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """`-t` and `-T` are what the user looks for: searched as options (not the stop word
    t, not an exclusion), and the words left out are listed by --explain."""
    files = {
        "ssh.md": "# ssh\n\nssh 的选项很多。ssh 登录, ssh 密钥, ssh 配置, ssh 端口。\n",
        "bash/ssh-tty.md": "# ssh 的终端\n\n`ssh -t` 强制分配终端, `-T` 不分配。\n",
        "dont.md": "# don't\n\nDon't, won't, can't: t everywhere. ssh 选项。\n",
    }
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("ssh 的 -t 和 -T 选项", explain=True)
    assert hits[0].path == "bash/ssh-tty.md"
    explain = hits[0].explain
    assert explain is not None
    assert "−t" in explain.query_terms and "−t" in explain.matched_terms
    assert explain.stop_terms == ["的", "和"]
    # An option matches options only: the letter t of "don't" is not -t.
    assert [h.path for h in vault.search("-t")] == ["bash/ssh-tty.md"]
    assert {h.path for h in vault.search("ssh -dont")} == {"bash/ssh-tty.md", "ssh.md"}


def test_filler_in_a_title_still_names_the_note(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """为什么 is filler to the search, but a title holding it is named by a query that says
    it: the note titled word for word beats the one titled without it."""
    files = {
        "a/要写测试.md": "# 要写测试\n\n测试清单：单元测试，集成测试。\n",
        "b/为什么要写测试.md": "# 为什么要写测试\n\n写测试的理由：测试让重构放心。\n",
    }
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("为什么要写测试", explain=True)
    assert [h.path for h in hits] == ["b/为什么要写测试.md", "a/要写测试.md"]
    assert hits[0].explain is not None and "为什么" in hits[0].explain.stop_terms
    # Filler no name holds dilutes no name: the exact title scores in full either way.
    named = vault.search("我记得 要写测试", explain=True)
    assert named[0].path == "a/要写测试.md"
    assert named[0].explain is not None and named[0].explain.channels["name"]["raw"] == 1.0


def test_a_partial_match_says_so_on_the_hit(make_vault: MakeVault, open_vault: OpenVault) -> None:
    vault = open_vault(make_vault({"a.md": "kafka partitions\n", "b.md": "kafka only\n"}))
    vault.sync()
    hits = vault.search("kafka partitions")
    # The words as the user wrote them, never their stems ("partit").
    assert [(h.path, h.words_matched, h.words_total) for h in hits] == [
        ("a.md", ["kafka", "partitions"], 2),
        ("b.md", ["kafka"], 2),
    ]
    vault_b = open_vault(make_vault({"c.md": "epoll running, see JIRA-1234 部署\n"}))
    vault_b.sync()
    (hit,) = vault_b.search("Running JIRA-1234 epoll 部署")
    assert hit.words_matched == ["running", "jira-1234", "epoll", "部署"]


@pytest.mark.parametrize("query", ["AI 编程", "the finite machine", "zebra -okapi"])
def test_explain_never_hides_a_term(
    make_vault: MakeVault, open_vault: OpenVault, query: str
) -> None:
    """Every query term is either scored (bringing candidates or only scoring them), absent
    from the index (dropped, matching nothing), or excluded."""
    files = _common_chinese(12)
    files["x.md"] = "AI 编程 zebra finite machine\n"
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search(query, explain=True)
    explain = hits[0].explain
    assert explain is not None
    in_query = {part.replace(" ", "") for part in explain.fts_query.split('"')}
    for term in explain.query_terms:
        assert term in explain.dropped_terms or term.replace(" ", "") in in_query, explain


def test_human_explain_lists_what_only_scored(make_vault: MakeVault) -> None:
    from click.testing import CliRunner

    from lore.cli import main

    files = _common_chinese(CANDIDATES_WANTED + 20)
    files["ai/coding.md"] = "# AI 编程助手\n\n用 AI 编程。\n"
    root = make_vault(files, index=True)
    out = CliRunner().invoke(main, ["search", "AI 编程", "--explain", "--vault", str(root)])
    assert out.exit_code == 0
    # 编 and 程 are in every note: no BM25 weight, said so; 编程 brought candidates.
    assert "left out (absent, or held by most notes: no weight): 编, 程" in out.stdout
    assert "1. ai/coding.md" in out.stdout


def test_a_rare_name_deep_in_a_long_note_beats_common_characters(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """A dictionary word's characters back it up, they are not more evidence: notes full of
    the query's characters in other words (时候, 空间, 日期) must not outrank the long note
    holding its rare name and its words, far down."""
    filler = "".join(f"第 {i} 段：服务单元的依赖与启动顺序，目标和挂载点。\n\n" for i in range(30))
    detail = "## 日志\n\njournalctl --since 按时间段过滤日志。\n"
    files = {"systemd.md": f"# systemd 笔记\n\n{filler}{detail}"}
    for i in range(8):
        files[f"misc/m{i}.md"] = (
            f"# 随笔 {i}\n\n" + "那时候空间不够，阶段性地过去了；滤网和日期写在杂志上。\n" * 2
        )
    for i in range(40):  # so that those characters are rare enough to weigh
        files[f"other/o{i}.md"] = f"# 另一篇 {i}\n\n关于编译器和链接器的笔记。\n"
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("journalctl 按时间段过滤日志", limit=5, explain=True)
    assert hits[0].path == "systemd.md"
    explain = hits[0].explain
    assert explain is not None
    # The characters still score (nothing is dropped) and the note's snippet is the detail.
    assert not explain.dropped_terms
    assert {"时", "日"} <= set(explain.matched_terms)
    assert "journalctl" in hits[0].snippet


def test_a_name_with_its_folder_in_front_is_the_notes_name(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """In a vault sorted by kind people name a note by its kind and title: "Minimal theme"
    is Themes/Minimal.md, not the plugin whose title holds both words among others."""
    files = {
        "Themes/Minimal.md": "# Minimal\n\nA clean theme with many style settings.\n",
        "Plugins/minimal-settings.md": (
            "# Minimal Theme Settings\n\nAdjust the Minimal theme: colours, fonts, widths.\n"
        ),
        "Themes/Blue Topaz.md": "# Blue Topaz\n\nA colourful theme.\n",
    }
    for i in range(12):
        files[f"Plugins/p{i}.md"] = f"# Plugin {i}\n\nDoes one thing, with settings.\n"
    vault = open_vault(make_vault(files))
    vault.sync()
    assert [h.path for h in vault.search("Minimal theme", limit=3)][:2] == [
        "Themes/Minimal.md",
        "Plugins/minimal-settings.md",
    ]
    # A note outside any folder, or whose folder the query does not name, is unchanged.
    assert vault.search("Blue Topaz", limit=1)[0].path == "Themes/Blue Topaz.md"
