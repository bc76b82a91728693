"""Every command has help and is documented in the README or docs/."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lore.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = "\n".join(
    p.read_text(encoding="utf-8")
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
)
COMMANDS = sorted(main.all_commands())


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert (main.all_commands()[name].help or "").strip(), f"{name} has no help text"


@pytest.mark.parametrize("name", COMMANDS)
def test_command_is_documented(name: str) -> None:
    assert f"lore {name}" in DOCS, f"`lore {name}` is not in README.md or docs/"


def test_readme_opens_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[:1500]
    assert "make demo" in head and "make test" in head


def test_the_exported_names_are_the_documented_ones() -> None:
    """`lore.__all__` is the API the README lists, and every name in it resolves."""
    import re

    import lore

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("The names `lore` exports (`lore.__all__`):")
    paragraph = readme[start : readme.index("\n\n", start)]
    documented = set(re.findall(r"`(\w+)`", paragraph)) - {"lore"}
    assert documented == set(lore.__all__)
    for name in lore.__all__:
        assert getattr(lore, name) is not None, name
