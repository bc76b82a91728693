"""Messages built from words lore did not write stay one printable line."""

from __future__ import annotations

import shlex
import sys
import unicodedata
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from lore.errors import install_command, install_hint, quoted_safely, shown

UNSAFE = {"Cc", "Zl", "Zp", "Cs"}  # controls, line and paragraph separators, surrogates
BIDI = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@given(st.text(), st.integers(min_value=2, max_value=400))
@example('unrecognized token: "\x0b"', 160)  # SQLite quoting a damaged schema
@example("a\u2028b\x85c\x1cd", 160)  # line ends that are not \n
def test_quoted_safely_is_one_bounded_printable_line(text: str, limit: int) -> None:
    out = quoted_safely(text, limit)
    assert len(out.splitlines()) <= 1
    assert len(out) <= limit
    assert not [ch for ch in out if unicodedata.category(ch) in UNSAFE or ch in BIDI]
    if text.isprintable() and len(text) <= limit:
        assert out == text  # ordinary words are left as they are


@given(st.text())
def test_shown_never_breaks_the_line(text: str) -> None:
    assert len(shown(text).splitlines()) <= 1


def test_an_install_hint_is_a_command_that_installs_this_checkout_from_any_folder(
    tmp_path: Path,
) -> None:
    """`lore` on PyPI is someone else's project, and a user runs lore in a vault, where `.`
    is not the checkout: the hint names the checkout and the pip of the Python running lore."""
    checkout = tmp_path / "my lore"
    (checkout / "src" / "lore").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("[project]\nname = 'lore'\n")
    hint = install_command("serve", checkout)
    assert hint == f"run: {shlex.quote(sys.executable)} -m pip install -e '{checkout}[serve]'"
    assert shlex.split(hint.removeprefix("run: "))[-1] == f"{checkout}[serve]"  # one argument
    # Not a source tree (installed from a wheel): the checkout's own venv, from the checkout.
    assert install_command("mcp", tmp_path) == (
        "in the lore checkout run: .venv/bin/pip install -e '.[mcp]'"
    )
    assert "pip install lore" not in install_hint("mcp")
