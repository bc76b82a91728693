"""bench.scale_search (issue 15): the searches of an index built once, timed per store
step, on both backends: every query is searched, the steps it takes are timed where they
are called, and the report names them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import build_vault

from bench import scale_search

NOTES = {
    "a.md": "# 赛里木湖\n\n赛里木湖古称净海，是新疆海拔最高的湖泊。",
    "b.md": "# Pitt wrestling\n\nPitt produced many national champion wrestlers.",
    "c.md": "# 生物学\n\n古生物学家研究化石。",
    "d/e.md": "# Snow\n\nA snow crystal grows in a cold, humid environment.",
}
QUERIES = ["赛里木湖古称什么？", "How many champion wrestlers has Pitt produced?", "古生物学家"]


def test_searches_are_timed_per_step(
    tmp_path: Path, backend: str, backend_db: Any, isolated_env: Path
) -> None:
    vault = build_vault(tmp_path / "vault", NOTES)
    db = None if backend == "sqlite" else str(backend_db)
    built = scale_search.build(vault, db)
    assert built["added"] == len(NOTES)
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(QUERIES, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out.json"

    profile = tmp_path / "edit.prof"
    assert scale_search.child(vault, db, queries, out, profile) == 0

    run = json.loads(out.read_text())
    assert run["queries"] == len(QUERIES) == len(run["latencies_ms"]) == len(run["rss_mb"])
    assert run["noop_wrote"] is False
    assert 0 < run["p50_ms"] <= run["p95_ms"]
    assert run["edit_changed"] == run["restore_changed"] == min(10, len(NOTES))
    assert profile.stat().st_size > 0  # the edit sync's profile
    assert ("edit_sync_trips" in run) == (backend == "postgresql")
    calls, inside = run["calls_per_query"], run["inside_ms_per_query"]
    assert calls["rank"] == 1.0  # the notes are ranked once per search
    assert all(ms > 0 for ms in inside.values())
    if backend == "postgresql":  # the full-text steps of lore.store.pg_*
        assert calls["pg_lexical.resolve"] >= 1.0
        assert calls["pg_bm25.score"] >= 1.0
    info = {"date": "d", "nproc": 2, "cpu": "c", "platform": "p", "python": "3", "git": "g"}
    text = scale_search.render({**info, "command": "c"}, {**run, "size": 4, "backend": backend})
    assert f"| 4 | {backend} |" in text
    assert "| rank |" in text
    assert "Built first" not in text  # no build in this run
    shown = scale_search.render(
        {**info, "command": "c"}, {**run, "size": 4, "backend": backend, "build": built}
    )
    assert f"Built first: {len(NOTES)} notes added in " in shown
    assert f"(1 sync(s)), peak RSS {built['peak_rss_mb']:.0f} MB." in shown


def test_the_steps_are_put_back() -> None:
    from lore.store import pg_bm25, pg_lexical

    before = (pg_lexical.resolve, pg_bm25.score)

    class Store:
        def rank(self) -> int:
            return 1

    store = Store()
    with scale_search.instrumented(store, postgres=True) as timer:
        assert pg_lexical.resolve is not before[0]
        assert store.rank() == 1
    assert (pg_lexical.resolve, pg_bm25.score) == before
    assert timer.calls == {"rank": 1}


def test_a_build_in_steps_commits_each_and_goes_on_where_it_stopped(
    tmp_path: Path, backend: str, backend_db: Any, isolated_env: Path
) -> None:
    import lore

    vault = build_vault(tmp_path / "vault", NOTES)
    copy = tmp_path / "copy"
    db = None if backend == "sqlite" else str(backend_db)
    built = scale_search.build_in_steps(vault, copy, db, step=3)
    assert [s["added"] for s in built["syncs"]] == [3, 1]  # a sync per 3 notes linked
    assert built["added"] == len(NOTES)
    for name in NOTES:  # the copy's notes are the vault's files, not copies of them
        assert (copy / name).samefile(vault / name)

    # A build stopped after linking a note but before its sync: the next run indexes it.
    (vault / "f.md").write_text("# 净海\n\n净海是赛里木湖的古称。", encoding="utf-8")
    (copy / "f.md").hardlink_to(vault / "f.md")
    (vault / "g.md").write_text("# Glacier\n\nA glacier is a body of ice.", encoding="utf-8")
    again = scale_search.build_in_steps(vault, copy, db, step=3)
    assert [s["added"] for s in again["syncs"]] == [2]
    with lore.open(copy, db=db) as v:
        assert v.sync().unchanged == len(NOTES) + 2
        assert [h.path for h in v.search("glacier ice", limit=1)] == ["g.md"]


def test_note_files_walks_in_sorted_path_order(tmp_path: Path) -> None:
    from bench.scale import note_files

    names = ["b.md", "a-b.md", "a/b.md", "a/c/d.md", "a.md", "ab/x.md", "z.txt", "A.md"]
    build_vault(tmp_path, {name: "x" for name in names})
    assert [Path(p) for p in note_files(tmp_path)] == sorted(tmp_path.rglob("*.md"))
