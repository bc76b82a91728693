"""Fuzz targets and their strategies, shared by tests/reliability/test_hostile.py (small
budgets) and bench/reliability.py (large ones). Each `check_*` feeds one input through a
real vault and raises AssertionError if a rule is broken:

- nothing crashes: the only exceptions are LoreError subclasses, with one-line messages;
- nothing escapes the vault: a path accepted is inside it, real path included;
- nothing printed for a human carries a raw control character.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import lore

RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SECRET = "TOPSECRET-7f3a"


def one_line(message: str) -> None:
    assert message.strip() and "\n" not in message and "\r" not in message, repr(message)
    assert not RAW_CONTROL.search(message), repr(message)


# -- paths ------------------------------------------------------------------------------------

SEGMENTS = [
    "..", ".", "", "notes", "ctrl.md", "door", "link.md", "secret.md", "~", "..\\..", "%2e%2e",
    "．．", "..\u2215", "\u202e", "\x1b[2J", "\n", " ", "C:", "\\", "\udcff", "\x00",
    "a" * 300, ".lore", "index.sqlite", "outside", "/",
]  # fmt: skip
PATH_EXAMPLES = ["../secret.md", "door/secret.md", "link.md", "notes/../../secret.md",
                 "\udcffname.md", "a" * 5000, "/", "", ".lore/index.sqlite"]  # fmt: skip
_relative = st.lists(st.sampled_from(SEGMENTS) | st.text(max_size=8), max_size=8).map("/".join)
paths = _relative | _relative.map(lambda p: "/" + p) | st.sampled_from(PATH_EXAMPLES)


def _inside(root: Path, rel: str) -> bool:
    real = Path(os.path.realpath(root / rel))
    return real == root or root in real.parents


def check_path(vault: lore.Vault, path: str) -> None:
    """Vault.relative_path and Vault.note: refused in one line, or inside the vault."""
    root = vault.root
    try:
        rel = vault.relative_path(path)
    except lore.PathError as exc:
        one_line(str(exc))
    else:
        assert ".." not in rel.split("/") and not rel.startswith("/"), rel
        assert _inside(root, rel), rel
    try:
        note = vault.note(path)
    except lore.PathError as exc:
        one_line(str(exc))
    else:
        assert _inside(root, note["path"]) and SECRET not in note["body"]


# -- queries and filters ----------------------------------------------------------------------

nasty_text = st.text(max_size=30) | st.sampled_from(
    ["", "*", "[", "[!]", "\\", "**/..", "../..", "\x00", "\u202e", "NEAR(", "'", '"',
     "title:x", "a OR b", "(((", "😀", "去重", "JIRA-1234"]
)  # fmt: skip
searches = st.tuples(
    nasty_text,
    st.lists(nasty_text, max_size=3),
    st.none() | nasty_text,
    st.none() | nasty_text | st.sampled_from(["2026", "2026-02-30", "0000-00", "9999"]),
    st.none() | nasty_text | st.sampled_from(["2026-13", "2026-02-29", "1-1-1"]),
    st.integers(min_value=-5, max_value=10**9),
)


def check_search(
    vault: lore.Vault,
    query: str,
    tags: list[str],
    path: str | None,
    since: str | None,
    until: str | None,
    limit: int,
) -> None:
    """Any query and filters: hits from the vault, or a QueryError in one line."""
    try:
        result = vault.search(query, limit=limit, tags=tags, path=path, since=since, until=until)
    except lore.QueryError as exc:
        one_line(str(exc))
        return
    assert limit >= 1
    assert result or result.reason
    for hit in result:
        assert _inside(vault.root, hit.path)


# -- front matter -----------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_KEYS = ["title", "tags", "date", "priority", "status", "aliases", "summary", "id", "source"]
front_matter = st.dictionaries(st.sampled_from(_KEYS) | st.text(max_size=6), _values, max_size=8)


def _rewrite(root: Path, name: str, data: bytes) -> None:
    path = root / name
    path.write_bytes(data)
    os.utime(path, ns=(0, time.time_ns()))  # a new stat even within the clock's resolution


def check_front_matter(vault: lore.Vault, fm: dict[str, Any]) -> None:
    """Every key, every YAML type: indexed, a text title, found by a word of the body."""
    import json

    import yaml

    text = yaml.safe_dump(fm, allow_unicode=True) if fm else ""
    _rewrite(vault.root, "fm.md", f"---\n{text}---\nquokkaword body\n".encode())
    vault.sync()
    note = vault.note("fm.md")
    assert isinstance(note["title"], str) and note["title"]
    assert all(isinstance(t["tag"], str) for t in note["tags"])
    assert note["date"] is None or re.fullmatch(r"\d{4}-\d\d-\d\d", note["date"])
    assert "fm.md" in [h.path for h in vault.search("quokkaword", limit=50)]
    json.dumps(note, allow_nan=False)


# -- whole notes ------------------------------------------------------------------------------

HOSTILE_PIECES = [
    "---\n", "...\n", "title: ", "tags: ", "date: ", "# ", "## ", "```\n", "[[", "]]", "#tag ",
    "\x1b[31m", "\x1b]0;t\x07", "\r", "\x0b", "\x7f", "\u202e", "\u200f", "\u2067", "\ufeff",
    "NEAR(", " OR ", "AND ", '"', "*", "^", "title:", "{col}", "客户去重规则", "JIRA-1234",
    "😀", "\n", "\n\n", "&a ", "*a", "!!python/object ", "[", "{", "x" * 200,
]  # fmt: skip
note_texts = st.lists(st.sampled_from(HOSTILE_PIECES) | st.text(max_size=10), max_size=60).map(
    "".join
)


def check_note(vault: lore.Vault, text: str) -> None:
    """Hostile note text: the sync never fails; the note is indexed (or skipped with a
    one-line reason); its title searches back to it; show prints no raw control."""
    from lore.present.human import clean, format_mapping

    _rewrite(vault.root, "hostile.md", text.encode("utf-8", "surrogatepass"))
    report = vault.sync()
    for item in report.skipped + report.warnings:
        one_line(f"{item.path}: {item.reason}")
    if any(s.path == "hostile.md" for s in report.skipped):
        return  # e.g. a NUL in its head: a binary file, reported
    note = vault.note("hostile.md")
    assert not RAW_CONTROL.search(format_mapping({"title": note["title"], "path": note["path"]}))
    assert not RAW_CONTROL.search(clean(note["body"], lines=True))
    for query in (note["title"], text[:40]):
        result = vault.search(query, limit=5)
        assert result or result.reason


def check_read_note(vault: lore.Vault, raw: str) -> None:
    """MCP read_note's path handling (every reading of the input: as sent, with `\\`
    as `/`, URL-decoded, with `.md` added, without `#anchor`): refused in one line, or a
    note inside the vault."""
    from lore.mcp.read import resolve_note

    try:
        note, _heading = resolve_note(vault, raw)
    except lore.PathError as exc:
        one_line(str(exc))
    else:
        assert _inside(vault.root, note["path"]) and SECRET not in note["body"]
