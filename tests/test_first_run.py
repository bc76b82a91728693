"""What a new user meets on a real vault (issue 12): undated notes, opening a note by any of
its names, counted warnings, unreadable files reported every time, human output without
Python spellings."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from conftest import one_line_naming

import lore
from lore.cli import main

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def test_undated_notes_are_left_out_of_date_windows_unless_asked(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault(
        {
            "dated.md": "---\ndate: 2023-05-10\n---\nwalrus\n",
            "2023-06-01-named.md": "walrus\n",
            "undated.md": "walrus, no date anywhere\n",
        },
        index=True,
    )
    vault = open_vault(root)
    assert sorted(h.path for h in vault.search("walrus", since="2023-05")) == [
        "2023-06-01-named.md",
        "dated.md",
    ]
    with_undated = vault.search("walrus", since="2023-05", include_undated=True)
    assert sorted(h.path for h in with_undated) == ["2023-06-01-named.md", "dated.md", "undated.md"]
    result = CliRunner().invoke(main, ["search", "walrus", "--vault", str(root), "--until", "2024"])
    assert "undated.md" not in result.stdout
    shown = CliRunner().invoke(main, ["show", "undated", "--vault", str(root)])
    assert shown.exit_code == 0 and "date: undated" in shown.stdout
    report = vault.report(today="2023-06-05")
    assert report.undated_total == 1
    assert any("1 of 3 notes are undated" in m for m in report.messages)


def test_show_takes_a_path_without_md_an_id_a_title_or_an_alias(make_vault: MakeVault) -> None:
    root = make_vault(
        {
            "notes/finite-state-machine.md": (
                "---\nid: FSM-1\naliases: [Automaton]\n---\n# Finite State Machine\n\nStates.\n"
            ),
            "a/same.md": "# Twin\n",
            "b/same.md": "# Twin\n",
        },
        index=True,
    )
    for ref in ("notes/finite-state-machine", "notes/finite-state-machine.md", "FSM-1",
                "finite state machine", "automaton"):  # fmt: skip
        result = CliRunner().invoke(main, ["show", ref, "--vault", str(root), "--json"])
        assert result.exit_code == 0, (ref, result.output)
        assert json.loads(result.stdout)["path"] == "notes/finite-state-machine.md"
    twins = CliRunner().invoke(main, ["show", "Twin", "--vault", str(root)])
    assert twins.exit_code == 1
    one_line_naming(twins.stderr.strip(), "2 notes", "a/same.md", "b/same.md")
    missing = CliRunner().invoke(main, ["show", "nothing here", "--vault", str(root)])
    one_line_naming(missing.stderr.strip(), "nothing here", "lore search")


def test_show_takes_a_title_retyped_and_suggests_the_closest_names(make_vault: MakeVault) -> None:
    root = make_vault(
        {
            "linux/dnf-guide.md": "# DNF 包管理工具指南（心智模型 + 最佳实践）\n\ndnf.\n",
            "linux/apt.md": "# APT 包管理\n\napt install.\n",
            "other.md": "# Cooking\n\nRice.\n",
        },
        index=True,
    )
    # Retyped with ASCII parentheses, another case, other spaces: the same name.
    retyped = CliRunner().invoke(
        main, ["show", "dnf 包管理工具指南(心智模型+最佳实践)", "--vault", str(root), "--json"]
    )
    assert retyped.exit_code == 0, retyped.output
    assert json.loads(retyped.stdout)["path"] == "linux/dnf-guide.md"
    # Part of a title is no name, but the error says which notes come close.
    part = CliRunner().invoke(main, ["show", "DNF 包管理工具指南", "--vault", str(root)])
    assert part.exit_code == 1
    line = part.stderr.strip()
    one_line_naming(line, "DNF 包管理工具指南", "closest by name", "linux/dnf-guide.md")
    assert line.index("linux/dnf-guide.md") < line.index("linux/apt.md")
    assert "other.md" not in line  # shares no word with the name


def test_many_notes_with_one_problem_are_one_line_and_quiet_says_none(
    make_vault: MakeVault,
) -> None:
    files = {f"t/{i:03d}.md": "---\ndate:\ntitle: T\nweird: <% tp %>\n---\nx\n" for i in range(5)}
    files.update({f"d/{i:03d}.md": f"---\ndate: someday {i}\n---\nx\n" for i in range(120)})
    root = make_vault(files)
    result = CliRunner().invoke(main, ["index", str(root)])
    assert result.exit_code == 0
    lines = result.stdout.strip().split("\n")
    assert lines[0].startswith("added 125,") and "warnings 120" in lines[0]
    (grouped,) = lines[1:]
    assert "120 notes" in grouped and "front matter date" in grouped and "--json" in grouped
    again = CliRunner().invoke(main, ["rebuild", str(root), "--quiet"])
    assert again.stdout.count("\n") == 1
    data = json.loads(CliRunner().invoke(main, ["rebuild", str(root), "--json"]).stdout)
    assert len(data["warnings"]) == 120 and {w["kind"] for w in data["warnings"]} == {"date"}


def test_an_unreadable_note_is_reported_on_every_sync_and_by_doctor(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault({"good.md": "fine\n", "bad.md": "fine at first\n"}, index=True)
    (root / "bad.md").write_bytes(b"\xff\xfe not utf-8 \xc3")
    vault = open_vault(root)
    for _ in range(3):
        report = vault.sync()
        assert [(s.path, s.kind) for s in report.skipped] == [("bad.md", "unreadable")]
        assert "kept" in report.skipped[0].reason
    doctor = vault.doctor()
    assert not doctor.ok and doctor.problems  # never ok: false with no problem listed
    assert any("bad.md" in p.message for p in doctor.problems)
    human = CliRunner().invoke(main, ["doctor", "--vault", str(root)])
    assert human.exit_code == 1 and "fix: bad.md" in human.stdout
    # A field with nothing in it is left out of the line, not printed as "kind: ".
    (listed,) = [line for line in human.stdout.splitlines() if "- path: bad.md" in line]
    assert listed.rstrip().endswith("to index it") and ": ·" not in listed, listed
    data = json.loads(CliRunner().invoke(main, ["doctor", "--vault", str(root), "--json"]).stdout)
    assert data["ok"] is False and data["problems"]


def test_status_and_doctor_print_no_python_spellings(make_vault: MakeVault) -> None:
    root = make_vault({"a.md": "a\n"}, index=True)
    for command in ("status", "doctor"):
        out = CliRunner().invoke(main, [command, "--vault", str(root)]).stdout
        for word in ("None", "True", "False"):
            assert f": {word}" not in out, (command, out)


def test_status_prints_no_heading_over_nothing(make_vault: MakeVault) -> None:
    root = make_vault({"a.md": "a\n"}, index=True)  # no `[lore] categories`: none counted
    out = CliRunner().invoke(main, ["status", "--vault", str(root)]).stdout
    assert "categories: none" in out
    assert "\n\n" not in out.strip()


def test_markdown_links_resolve_by_path_and_give_backlinks(make_vault: MakeVault) -> None:
    """A vault that links with Markdown (`[text](./a/README.md)`) has links and backlinks
    like one that uses [[wikilinks]]; two README.md are told apart by their folders."""
    root = make_vault(
        {
            "index.md": "# Index\n\n- [A](a/README.md)\n- [B](./b/README.md#setup)\n",
            "a/README.md": "# A\n\nFirst.\n",
            "b/README.md": "# B\n\n## setup\n\nBack to [the index](../index.md).\n",
        },
        index=True,
    )
    out = CliRunner().invoke(main, ["links", "index.md", "--vault", str(root), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert [(link["target"], link["path"]) for link in data["outgoing"]] == [
        ("a/README.md", "a/README.md"), ("b/README.md", "b/README.md"),
    ]  # fmt: skip
    assert [b["path"] for b in data["backlinks"]] == ["b/README.md"]
    back = CliRunner().invoke(main, ["links", "b/README.md", "--vault", str(root), "--json"])
    assert [b["path"] for b in json.loads(back.stdout)["backlinks"]] == ["index.md"]
    back_a = CliRunner().invoke(main, ["links", "a/README.md", "--vault", str(root), "--json"])
    assert [b["path"] for b in json.loads(back_a.stdout)["backlinks"]] == ["index.md"]
