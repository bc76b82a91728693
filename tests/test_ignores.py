"""What a scan leaves out (issue 12): the folders tools make, the vault's .gitignore files
(switchable), virtual environments by their marker, and .loreignore, which wins."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import indexed_paths

import lore

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def test_a_parent_folder_of_projects_indexes_notes_not_tool_folders(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault(
        {
            "notes/idea.md": "# Idea\n",
            "proj/README.md": "# Project\n",
            "proj/.venv/lib/python3.11/site-packages/pkg/README.md": "# vendored\n",
            "proj/env/pyvenv.cfg": "home = /usr/bin\n",  # a virtualenv under any name
            "proj/env/lib/doc.md": "# in a venv\n",
            "proj/node_modules/left-pad/README.md": "# npm\n",
            "proj/src/__pycache__/x.md": "x",
            "proj/build/out.md": "# generated\n",
            "proj/dist/out.md": "# generated\n",
            "proj/vendor/lib/CHANGELOG.md": "# vendored\n",
            "proj/.cache/c.md": "c",
            ".trash/old.md": "# deleted in Obsidian\n",
        }
    )
    vault = open_vault(root)
    vault.sync()
    assert indexed_paths(vault) == ["notes/idea.md", "proj/README.md"]


def test_gitignore_files_apply_to_their_folder_and_below(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault(
        {
            ".gitignore": "drafts/\n*.tmp.md\n",
            "drafts/a.md": "a",
            "keep.md": "k",
            "x.tmp.md": "t",
            "repo/.gitignore": "generated/\n!important.tmp.md\n",
            "repo/generated/api.md": "g",
            "repo/important.tmp.md": "i",
            "repo/notes.md": "n",
            "other/generated/kept.md": "not under repo/: its .gitignore does not apply",
        }
    )
    vault = open_vault(root)
    vault.sync()
    assert indexed_paths(vault) == [
        "keep.md",
        "other/generated/kept.md",
        "repo/important.tmp.md",
        "repo/notes.md",
    ]


def test_gitignore_can_be_switched_off_and_loreignore_wins(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault(
        {
            ".gitignore": "drafts/\n",
            ".loreignore": "!build/\nprivate.md\n",
            "drafts/a.md": "a",
            "build/notes.md": "my notes folder happens to be called build",
            "private.md": "p",
        }
    )
    vault = open_vault(root)
    vault.sync()
    assert indexed_paths(vault) == ["build/notes.md"]
    vault.close()
    (root / ".lore" / "config.toml").write_text("gitignore = false\n", encoding="utf-8")
    again = open_vault(root)
    report = again.sync()
    assert report.added == ["drafts/a.md"]
    assert indexed_paths(again) == ["build/notes.md", "drafts/a.md"]


@pytest.mark.parametrize("value", ["0", "off"])
def test_gitignore_setting_from_the_environment(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("LORE_GITIGNORE", value)
    root = make_vault({".gitignore": "*.md\n", "a.md": "a"})
    vault = open_vault(root)
    vault.sync()
    assert indexed_paths(vault) == ["a.md"]
