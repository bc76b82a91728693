"""bench.pg_read_format (issue 15): the terms each search reads are recorded, copied into
scratch tables in other formats, and every format holds the same postings as the index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import psycopg
import pytest

import lore
from bench import pg_read_format
from lore.store import pg_batch
from lore.store.pg_schema import NOTES, PARTS

NOTES_TEXT = {
    "a.md": "# 赛里木湖\n\n赛里木湖古称净海，是新疆海拔最高的湖泊。湖水清澈。",
    "b.md": "# Pitt wrestling\n\nPitt produced many national champion wrestlers. " * 3,
    "c.md": "# 生物学\n\n## 化石\n\n古生物学家研究化石。赛里木湖也有化石。",
}
QUERIES = ["赛里木湖古称什么？", "How many champion wrestlers has Pitt produced?", "化石"]


def test_every_format_holds_the_postings_the_index_holds(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 2)  # a large sync's: postings in blocks
    root = tmp_path / "vault"
    for n in range(4):
        for name, text in NOTES_TEXT.items():
            (root / f"{n}" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / f"{n}" / name).write_text(text * (n + 1), encoding="utf-8")
    db = f"{pg_url}{'&' if '?' in pg_url else '?'}vault=formats"
    with lore.open(root, db=db) as v:
        v.sync()
    reads = pg_read_format.record_reads(str(root), db, QUERIES)
    assert len(reads) == len(QUERIES) and all(r.get(NOTES.packs) for r in reads)
    widths = {NOTES.packs: NOTES.width, PARTS.packs: PARTS.width}
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SET search_path = formats")
        # The first index packed its postings in blocks, which the formats copy.
        assert conn.execute(f"SELECT count(*) FROM {NOTES.packs}").fetchone()[0] > 0
        pg_read_format.make_scratch(conn, reads, widths, "formats")
        for r in reads:
            for packs, ids in r.items():
                read = {
                    f: pg_read_format.read_once(conn, packs, f, ids, widths[packs], "formats")
                    for f in pg_read_format.FORMATS
                }
                size, stored = read["stored"]
                assert sorted(stored) == sorted(ids) and size > 0
                for f, (_size, postings) in read.items():
                    assert sorted(postings) == sorted(stored), f
                    for term_id, p in postings.items():
                        q = stored[term_id]
                        assert np.array_equal(p.docs, q.docs), f
                        assert np.array_equal(p.lengths, q.lengths), f
                        assert np.array_equal(p.counts, q.counts), f
        result = pg_read_format.replay(conn, reads, widths, "formats")
        assert all(len(result["ms"][f]) == len(QUERIES) for f in pg_read_format.FORMATS)
        assert min(result["mb"]["stored"]) > 0
        assert sum(result["mb"]["stored"]) < sum(result["mb"]["wide plain"])
