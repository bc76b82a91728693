"""bench.pg_pruning (issue 15): what a PostgreSQL search reads and what block-max pruning
would still read of it: the blocks found by hand on small cases (by their ranges, and by
their documents), then every ranking of real searches replayed on a small vault."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import build_vault

from bench import pg_pruning
from bench.pg_pruning import Segment, must_read, must_read_known


def block(docs: list[int], bound: float, phrase: int, key: int, generating: bool) -> Segment:
    found = np.array(docs, dtype=np.int64)
    return Segment(found, min(docs), max(docs), bound, phrase, (phrase, key), len(docs), generating)


# A rare word (phrase 0) in notes 50 and 60; a common one (phrase 1) in two blocks.
RARE = block([50, 60], 5.0, 0, 0, True)
COMMON = [block([0, 10, 50], 1.0, 1, 0, True), block([120, 150], 1.0, 1, 1, True)]


def test_blocks_are_read_where_the_bounds_reach_the_last_score() -> None:
    blocks = [RARE, *COMMON]
    # 5 + 1 reach 5.5 only where both words may be: the common word's second block holds
    # documents past the rare word's last, and is spared.
    assert must_read(blocks, 5.5) == 2 + 3
    assert must_read(blocks, 6.0) == 2 + 3  # a tie is kept
    assert must_read(blocks, 6.5) == 0
    assert must_read(blocks, 0.5) == 2 + 3 + 2
    # A document whose exact score is asked for is read whatever its bound.
    assert must_read(blocks, 6.5, [150]) == 2


def test_known_documents_spare_blocks_their_ranges_would_not() -> None:
    # The rare word's range covers note 55, where the common word's block holds a note:
    # by ranges that block must be read; knowing their documents, no note holds both.
    rare = block([10, 90], 5.0, 0, 0, True)
    common = block([55], 1.0, 1, 0, True)
    assert must_read([rare, common], 5.5) == 2 + 1
    assert must_read_known([rare, common], 5.5) == 0
    assert must_read_known([rare, common], 5.0) == 2  # notes 10 and 90 tie the last score
    # A block of a phrase that brings no candidates alone makes no note a candidate.
    scoring = block([55], 9.0, 1, 0, False)
    assert must_read_known([rare, scoring], 1.0) == 2
    # The every-note share (no documents of its own) adds to every note's bound.
    every = Segment(None, 10, 90, 0.6, 2, (2, 0), 0, False)
    assert must_read_known([rare, every], 5.5) == 2


def test_every_ranking_of_real_searches_is_replayed(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lore
    from lore.store import pg_batch, pg_packs

    # A large sync's postings go in blocks: small ones, so that a word has several.
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 4)
    monkeypatch.setattr(pg_packs, "PACK_SIZE", 8)

    notes = {
        f"n{i:02d}.md": f"# Note {i}\n\n"
        + " ".join(["river"] * (i % 4 + 1) + ["delta"] * (i % 3))
        + (" 赛里木湖古称净海。" if i % 5 == 0 else " 湖泊和河流。")
        for i in range(40)
    }
    notes["rare.md"] = "# Sayram\n\nSayram lake, the river delta of the north. 赛里木湖。"
    vault = build_vault(tmp_path / "vault", notes)
    db = f"{pg_url}&vault=pruning"
    with lore.open(vault, db=db) as v:
        v.sync()

    run = pg_pruning.measure(vault, db, ["Sayram river delta", "赛里木湖古称什么？", "river"])
    kinds = {r["kind"] for r in run["rankings"]}
    assert {"notes", "parts"} <= kinds
    for r in run["rankings"]:
        assert r["postings"] > 0 and r["candidates"] > 0
        for label in pg_pruning.DEPTHS:
            ranges, doc_ids, exact = (r[f"read_{label}_{v}"] for v, _b, _r in pg_pruning.VARIANTS)
            # Tighter knowledge never reads more: known documents, then exact bounds.
            assert r["postings"] >= ranges >= doc_ids >= exact
        assert all(seconds >= 0 for seconds in r["seconds"].values())
    # Every note holds "river" and all of them are asked for: the last score is the
    # lowest, and whatever is known, every posting is read.
    river = [r for r in run["rankings"] if r["kind"] == "notes"][-1]
    assert river["candidates"] == len(notes) and river["depth"] >= len(notes)
    assert river["postings"] == len(notes) and river["read_10_doc ids"] < len(notes)
    assert all(river[f"read_asked_{v}"] == river["postings"] for v, _b, _r in pg_pruning.VARIANTS)

    info = {"date": "d", "nproc": 2, "cpu": "c", "platform": "p", "python": "3", "git": "g"}
    text = pg_pruning.render({**info, "command": "c"}, {"size": len(notes), **run})
    assert "| notes | " in text and "| parts | " in text and "block-max: doc ids" in text
    assert "| server | " in text
