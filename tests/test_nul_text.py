"""A NUL byte in a note's text past the binary probe (issue 15): PostgreSQL's text columns
refuse \\x00, so the sync once failed there while SQLite stored it. Both backends now store
the note with U+FFFD in its place (one character for one: offsets and tokens unchanged) and
index it alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import build_vault, one_line_naming

import lore
from lore.derive.tokenize import terms
from lore.index.sync import _BINARY_PROBE

FILLER = "# Pipes\n\nA pipe carries bytes from one program to the next. " * 200


def test_a_nul_character_tokenizes_as_its_replacement() -> None:
    assert terms("before\x00after zebrafish") == terms("before\ufffdafter zebrafish")


def test_a_nul_deep_in_a_note_indexes_it_the_same_on_both_backends(
    tmp_path: Path, on_backend: str
) -> None:
    assert len(FILLER.encode()) > _BINARY_PROBE  # the probe lets the note through
    text = FILLER + "before\x00after: zebrafish.\n"
    vault = build_vault(tmp_path / "v", {"pipes.md": text.encode(), "other.md": "# Other\n"})
    with lore.open(vault) as opened:
        report = opened.sync()
        assert sorted(report.added) == ["other.md", "pipes.md"], report
        hits = opened.search("zebrafish", limit=5)
        assert [h.path for h in hits] == ["pipes.md"]
        body = opened.note("pipes.md")["body"]
        assert "\x00" not in body and body.count("\ufffd") == 1
        # one character for one: what follows keeps its offsets
        assert len(body) - body.index("\ufffd") == len(text) - text.index("\x00")


# YAML writes a NUL from an escape in a double-quoted value or key ("\0", "\x00", "\u0000"):
# on PostgreSQL each of these once failed the whole sync (a text column) or every read of
# the note's front matter (its `::jsonb`).
NUL_FRONT_MATTER = {
    "title": 'title: "Pipe\\0line"',
    "tags": 'tags: ["pi\\x00pe"]',
    "aliases": 'aliases: ["pi\\u0000pe"]',
    "key": '"pi\\0pe": 1',
    "id": 'id: "PIPE\\0-1"',
    "category": 'category: "pi\\0pe"',
    "summary": 'summary: "a\\0b"',
    "date": 'date: "2026\\0-01-01"',
    "status": 'status: "do\\0ne"',
}


def test_a_nul_in_front_matter_is_stored_as_its_replacement(
    tmp_path: Path, on_backend: str
) -> None:
    files = {
        f"entities/{name}.md": f"---\n{line}\n---\n# {name.title()}\n\nzebrafish {name}\n"
        for name, line in NUL_FRONT_MATTER.items()
    }
    vault = build_vault(tmp_path / "v", files)
    with lore.open(vault) as opened:
        assert sorted(opened.sync().added) == sorted(files)
        assert {h.path for h in opened.search("zebrafish", limit=20)} == set(files)
        assert opened.note("entities/title.md")["title"] == "Pipe\ufffdline"
        assert opened.note("entities/key.md")["frontmatter"] == {"pi\ufffdpe": 1}
        assert [t["tag"] for t in opened.note("entities/tags.md")["tags"]] == ["pi\ufffdpe"]
        assert opened.find_note("PIPE\ufffd-1")["path"] == "entities/id.md"
        assert opened.lookup("pi\ufffdpe").level == "L1"  # the alias
        assert opened.doctor().ok and opened.check() is not None


def test_a_nul_in_a_filter_or_a_name_is_refused_or_found_nowhere(
    tmp_path: Path, on_backend: str
) -> None:
    vault = build_vault(tmp_path / "v", {"a.md": "---\nid: A-1\n---\n# A\n\nzebrafish\n"})
    with lore.open(vault) as opened:
        opened.sync()
        for option, filters in (
            ("--tag", {"tags": ["a\x00b"]}),
            ("--path", {"path": "a\x00"}),
            ("--category", {"category": "a\x00"}),
        ):
            with pytest.raises(lore.QueryError) as caught:
                opened.search("zebrafish", **filters)  # type: ignore[arg-type]
            one_line_naming(str(caught.value), option, "NUL")
        assert opened.note_path_for_id("A-1\x00") is None
        assert opened.notes_named("A\x00") == []
        assert [h.path for h in opened.search("zebra\x00fish")] == []  # two words, neither
