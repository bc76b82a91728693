"""bench.pg_words (issue 15): two indexes of one vault, with and without dictionary words of
three and four characters as terms, searched query by query: both built as lore makes them (the
one without as an older index is), every query timed on both, the answers compared, the
time spent counting phrases in the token streams reported."""

from __future__ import annotations

from pathlib import Path

from conftest import build_vault

from bench import pg_words

NOTES = {
    "a.md": "# 运动员\n\n游泳运动员的训练。",
    "b.md": "# 出版社\n\n上海人民出版社出版了这本书，生物学家写的，有它的地理位置。",
    "c.md": "# Pitt wrestling\n\nPitt produced many national champion wrestlers.",
}
QUERIES = [
    "运动员的训练",
    "哪个出版社出版的？",
    "national champion wrestlers",
    "古生物学家",
    "地理位置",
]


def test_both_indexes_answer_alike_and_the_counting_is_timed(tmp_path: Path, pg_url: str) -> None:
    vault = build_vault(tmp_path / "vault", NOTES)
    dbs = {kind: f"{pg_url}&vault=v_{kind}" for kind in pg_words.KINDS}
    builds = {kind: pg_words.build(vault, dbs[kind], kind) for kind in pg_words.KINDS}
    assert all(b["added"] == len(NOTES) for b in builds.values())
    # 运动员, 出版社, 生物学, 地理位置: terms of the one index only.
    assert builds["with"]["terms"] > builds["without"]["terms"]
    assert builds["with"]["postings"] > builds["without"]["postings"]

    result = pg_words.paired(vault, dbs, QUERIES)
    assert result["answers_differ"] == 0
    assert all(len(lat) == len(QUERIES) for lat in result["latencies_ms"].values())
    counting = result["counting_ms_per_query"]
    assert counting["without"] > 0  # 运动员, 出版社 and 地理位置 counted in the streams there
    run = {
        "size": len(NOTES),
        "queries": len(QUERIES),
        "builds": {k: {**b, "index_mb": 1.0} for k, b in builds.items()},
        "chinese": [0, 1, 3, 4],
        "rounds": [result],
    }
    info = {"date": "d", "nproc": 2, "cpu": "c", "platform": "p", "python": "3", "git": "g"}
    text = pg_words.render({**info, "command": "c"}, run)
    assert "| 1 | with |" in text and "| 1 | without |" in text
    assert "Chinese (4) p50 ms" in text
    assert f"| with | {len(NOTES)} |" in text
