"""Crash safety: `lore index` and `lore rebuild` killed with SIGKILL at random points.

A fast subset: a few seeds of each kind. `bench/reliability.py` runs many more, on bigger
vaults. Each trial is checked by reliability_harness.verify: the index opens, holds the old
or the new state of the files (never a mix), doctor says which, and the next sync ends in
the new state with nothing lost.

The kill trials run on SQLite only: each puts the saved bytes of the index file back (and
its WAL away) before the next kill, and what a kill can tear there is the file's own (its
journal, half-written pages, the semantic refresh after the commit in the same file);
`lore embed` killed resumes from the file's bytes too, and `lore remember` killed is about
the daily note it appends to. On PostgreSQL a killed client is a dropped connection the
server rolls back: the first test below kills a sync and a rebuild inside their
transaction on both backends, and tests/store/test_pg_faults.py drops the connection from
the server's side.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import embed_server as es
import pytest
import reliability_harness as h
from backend_index import index_rows


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[h.Scenario]:
    root = tmp_path_factory.mktemp("crash") / "vault"
    yield h.prepare(root, n=120, seed=7, fraction=0.5)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[h.Scenario]:
    root = tmp_path_factory.mktemp("crash-fresh") / "vault"
    yield h.prepare(root, n=120, seed=8, fraction=0.0, fresh=True)


@pytest.fixture(autouse=True, scope="module")
def _semantic_layer_on() -> Iterator[None]:
    """Keyword tags on, so every sync here also runs the semantic refresh after its
    transaction (in plain mode 4 it is skipped) and a kill can land in either step."""
    patch = pytest.MonkeyPatch()
    patch.setenv("LORE_HEURISTIC_TAGS", "on")
    yield
    patch.undo()


@pytest.mark.usefixtures("on_backend")
@pytest.mark.parametrize("mode", ["index", "rebuild"])
def test_a_sync_killed_inside_its_transaction_on_either_backend(tmp_path: Path, mode: str) -> None:
    """SIGKILL while a sync (or a rebuild) is inside its write transaction: the index is
    as it was, row for row, and the next sync completes."""
    import lore

    root = tmp_path / "vault"
    h.generate_vault(root, 40, seed=9)
    with lore.open(root) as vault:
        vault.sync()
    before = index_rows(root)
    h.mutate_vault(root, seed=9, fraction=0.5)
    proc = subprocess.Popen(
        [sys.executable, str(h.HERE), "pause-sync", str(root), "10", mode],
        stdout=subprocess.PIPE,
        text=True,
        env=h.child_env(),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "paused"
    assert h.kill(proc)
    assert index_rows(root) == before
    with lore.open(root) as vault:
        report = vault.sync()
        assert report.added and report.changed and report.deleted
        assert vault.doctor().ok


def test_the_scenario_changes_every_kind_of_thing(scenario: h.Scenario) -> None:
    assert all(scenario.changes[k] > 0 for k in ("edited", "deleted", "touched", "added"))
    missing, stale, orphaned = scenario.old_doctor
    assert missing and stale and orphaned
    assert h.core_of(scenario.old) != h.core_of(scenario.new)


@pytest.mark.parametrize("seed", [1, 2])
def test_sync_killed_inside_its_transaction(scenario: h.Scenario, seed: int) -> None:
    scenario.restore()
    step = random.Random(seed).randint(1, 80)
    assert h.kill_at_step(scenario, step), "the sync finished before the kill"
    assert h.verify(scenario) == "old"  # nothing of a transaction killed midway is seen


def test_rebuild_killed_inside_its_transaction(scenario: h.Scenario) -> None:
    scenario.restore()
    assert h.kill_at_step(scenario, 50, rebuild=True)
    assert h.verify(scenario) == "old"


def test_first_sync_killed_leaves_an_empty_index_that_completes(fresh: h.Scenario) -> None:
    fresh.restore()
    assert h.kill_at_step(fresh, 60)
    assert h.verify(fresh) == "old"
    assert fresh.old_doctor[0]  # every file was missing from the empty index


@pytest.mark.parametrize("seed", [11])
def test_lore_index_cli_killed_at_a_random_moment(scenario: h.Scenario, seed: int) -> None:
    """The real command, killed after a random delay: while starting, scanning, writing,
    committing, or refreshing the semantic layer after the commit."""
    scenario.restore()
    delay = random.Random(seed).uniform(0.3, 2.5)
    h.kill_after(scenario, delay, "index")
    assert h.verify(scenario) in ("old", "new", "new, semantic pending")


def test_an_interrupted_semantic_refresh_is_reported_and_completed(
    scenario: h.Scenario, tmp_path: Path
) -> None:
    """The state a kill between the sync's commit and the semantic refresh leaves, made
    without a kill: doctor names it and `lore index` finishes it."""
    import lore
    from lore.index.sync import sync

    scenario.restore()
    with lore.open(scenario.root, **scenario.settings) as vault:
        sync(vault.store, vault.root, views=vault.derived_views)  # the transaction, no refresh
    assert h.verify(scenario) == "new, semantic pending"


# -- lore embed -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embed_case(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A synced vault with no vectors, the index saved, and the vectors one uninterrupted
    `embed` ends with (a deterministic endpoint on 127.0.0.1)."""
    import lore

    server = es.EmbedServer(delay=0.03)
    base = tmp_path_factory.mktemp("embed")
    root = base / "vault"
    h.generate_vault(root, 24, seed=5)
    with lore.open(root) as vault:
        vault.sync()
    db = root / ".lore" / "index.sqlite"
    saved = db.read_bytes()
    core = h.core_of(h.full_dump(db))
    reference = base / "reference.sqlite"
    reference.write_bytes(saved)
    env = server.env()
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with lore.open(root, db=reference) as vault:
            report = vault.embed()
            assert report.embedded > 40 and report.pending == 0
    finally:
        for key, value in old.items():
            os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
    yield {
        "root": root,
        "db": db,
        "saved": saved,
        "core": core,
        "vectors": es.vectors_dump(reference),
        "server": server,
    }
    server.close()


@pytest.mark.parametrize("seed", [21])
def test_lore_embed_killed_keeps_whole_batches_and_resumes(
    embed_case: dict[str, Any], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lore

    root, db, server = embed_case["root"], embed_case["db"], embed_case["server"]
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(embed_case["saved"])
    env = {**h.child_env(), **server.env()}
    proc = subprocess.Popen(
        h.lore_argv("embed", str(root)), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    h.wait_for_rows(db, "vec_texts", proc)  # the first batch is in: kill it mid-way
    time.sleep(random.Random(seed).uniform(0.0, 0.4))
    assert h.kill(proc), "embed finished before the kill"
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    with lore.open(root) as vault:
        after = es.vectors_dump(db)
        assert after["unkeyed_vectors"] == [] and after["keys_without_vector"] == []
        assert bool(after["meta"]) == bool(after["keys"])  # identity recorded with vectors
        assert h.core_of(h.full_dump(db)) == embed_case["core"]  # notes untouched
        assert 0 < len(after["keys"]) < len(embed_case["vectors"]["keys"]), "not mid-way"
        doctor = vault.doctor()
        assert [p.repair for p in doctor.problems] == ["lore embed"], doctor.to_dict()
        assert doctor.vectors["pending_notes"] > 0
        vault.embed()  # resumes: embeds only what is missing
        assert es.vectors_dump(db) == embed_case["vectors"]
        assert vault.doctor().ok


# -- lore remember ----------------------------------------------------------------------------

REMEMBER_TEXT = "迁移复盘 " + " ".join(f"finding{i} 客户去重规则" for i in range(2100)) + " 结论"


@pytest.fixture
def memory_vault(tmp_path: Path) -> Path:
    import datetime as dt

    import lore

    root = tmp_path / "vault"
    h.generate_vault(root, 20, seed=9)
    today = dt.date.today().isoformat()
    (root / "memory" / f"{today}.md").write_text(f"# {today}\n\nwritten by hand before\n")
    with lore.open(root) as vault:
        vault.sync()
    return root


@pytest.mark.parametrize("seed", [31, 32])
def test_lore_remember_killed_never_leaves_half_an_entry(
    memory_vault: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datetime as dt

    import lore

    # Plain mode 4 (no semantic refresh after remember's sync): the daily note is the subject.
    monkeypatch.setenv("LORE_HEURISTIC_TAGS", "auto")

    assert len(REMEMBER_TEXT.encode()) > 60_000  # many pages: the widest window to tear
    daily = memory_vault / "memory" / f"{dt.date.today().isoformat()}.md"
    before = daily.read_bytes()
    proc = subprocess.Popen(
        h.lore_argv("remember", REMEMBER_TEXT, "--vault", str(memory_vault)),
        env=h.child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(random.Random(seed).uniform(0.2, 1.2))
    h.kill(proc)
    after = daily.read_bytes()
    assert after.startswith(before)  # what was there is kept, byte for byte
    added = after[len(before) :].decode("utf-8")  # whole characters: valid UTF-8
    if added:
        assert REMEMBER_TEXT in added and added.endswith("status: claimed · trust: inferred\n")
    with lore.open(memory_vault) as vault:
        doctor = vault.doctor()
        rel = daily.relative_to(memory_vault).as_posix()
        assert doctor.ok or (
            doctor.stale == [rel] and {p.repair for p in doctor.problems} == {"lore index"}
        ), doctor.to_dict()
        vault.remember(REMEMBER_TEXT)  # written once, whatever the kill left
        assert daily.read_text(encoding="utf-8").count(REMEMBER_TEXT) == 1
        assert vault.doctor().ok
        hits = vault.search("finding2099 结论")
        assert hits and hits[0].path == rel
