"""A NUL byte in a note's text past the binary probe (issue 15): PostgreSQL's text columns
refuse \\x00, so the sync once failed there while SQLite stored it. Both backends now store
the note with U+FFFD in its place (one character for one: offsets and tokens unchanged) and
index it alike."""

from __future__ import annotations

from pathlib import Path

from conftest import build_vault

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
