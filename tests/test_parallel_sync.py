"""A sync whose notes are derived in worker processes (lore.index.parallel) writes the very
same index as one process: every table, row by row, byte for byte, ids included. A worker
that dies fails the sync with one line and leaves the previous index as it was."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

import lore
from lore.errors import ConfigError
from lore.index import parallel
from lore.index.parallel import WorkerCrashed, jobs_for, ordered_map, requested_jobs
from lore.index.sync import Prepared, prepare_note, sync

TOPICS = ["客户去重规则", "向量检索", "reciprocal rank fusion", "会议纪要", "GMV 口径", "读书"]
CRASH_ON = "notes/0/n-0008.md"


def _note(rng: random.Random, i: int) -> str:
    topic = rng.choice(TOPICS)
    tags = rng.sample(["项目/甲", "reading", "todo", "笔记", "idea"], rng.randint(0, 3))
    body = "\n\n".join(
        f"## {rng.choice(TOPICS)} {k}\n\n"
        + " ".join(
            rng.choice(["张三负责", "the dedup rule", "[[Other note]]", "#inline", "退款"])
            for _ in range(rng.randint(3, 40))
        )
        for k in range(rng.randint(1, 4))
    )
    return (
        f"---\ntitle: {topic} {i}\ntags: {tags}\ndate: 2024-0{1 + i % 9}-1{i % 10}\n---\n{body}\n"
    )


def _vault(root: Path, n: int) -> Path:
    rng = random.Random(18)
    for i in range(n):
        path = root / "notes" / str(i // 40) / f"n-{i:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note(rng, i), encoding="utf-8")
    (root / "empty.md").write_text("", encoding="utf-8")
    (root / "latin1.md").write_bytes("caf\xe9 au lait".encode("latin-1"))  # unreadable
    (root / "binary.md").write_bytes(b"\x00\x01\x02 not markdown")
    (root / "bad-frontmatter.md").write_text("---\ntitle: [unclosed\n---\nbody 正文\n")
    return root


def _tables(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS5 shadow tables included), in rowid order; the
    time of the last sync is the one value two runs may not share."""
    con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [
            str(r[0])
            for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name"
            )
        ]
        out = {}
        for name in names:
            rows = list(con.execute(f'SELECT * FROM "{name}"'))
            if name == "meta":
                rows = [r for r in rows if r[0] not in ("last_sync", "commits")]
            out[name] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def _index(root: Path, db: Path, jobs: int, *, rebuild: bool = False) -> lore.SyncReport:
    store = lore.open(root, db=db, create=True)
    try:
        return sync(store.store, root, jobs=jobs, rebuild=rebuild)
    finally:
        store.close()


def _same_tables(a: Path, b: Path) -> None:
    ta, tb = _tables(a), _tables(b)
    assert list(ta) == list(tb)
    assert "notes" in ta and "fts_data" in ta  # the dump sees the index, not an empty file
    for name in ta:
        assert ta[name] == tb[name], f"table {name} differs"


def test_parallel_index_is_the_single_process_index(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", 120)
    one, two = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    r1, r2 = _index(root, one, jobs=1), _index(root, two, jobs=2)
    assert len(r1.added) == 122  # 120 notes, the empty one, the one with broken front matter
    assert (r1.added, r1.skipped, r1.warnings) == (r2.added, r2.skipped, r2.warnings)
    _same_tables(one, two)

    # Then an incremental sync of edits, a deletion, a new note, a touched unchanged note.
    (root / "notes/0/n-0003.md").write_text("# 改过了\n\nnew text about 去重\n", encoding="utf-8")
    (root / "notes/1/n-0041.md").unlink()
    (root / "notes/2/new.md").write_text("---\ntags: [新]\n---\nfresh #idea\n", encoding="utf-8")
    os.utime(root / "notes/0/n-0005.md", ns=(1, 10**18))  # stat changed, content not
    r1, r2 = _index(root, one, jobs=1), _index(root, two, jobs=2)
    assert r1.changed == r2.changed == ["notes/0/n-0003.md"]
    assert r1.deleted == ["notes/1/n-0041.md"] and r1.added == ["notes/2/new.md"]
    assert r1.unchanged == r2.unchanged
    _same_tables(one, two)

    _index(root, one, jobs=1, rebuild=True)
    _index(root, two, jobs=3, rebuild=True)
    _same_tables(one, two)


def crash_on_one_note(task: tuple[str, str | None], **kwargs: Any) -> Prepared:
    """What a worker runs in the crash test: dies without a word on one note."""
    if task[0] == CRASH_ON:
        os._exit(3)
    return prepare_note(task, **kwargs)


def test_a_worker_that_dies_fails_the_sync_and_keeps_the_index(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", 80)
    db = tmp_path / "index.sqlite"
    _index(root, db, jobs=1)
    before = _tables(db)
    for i in range(0, 80, 2):  # more than a chunk of changed notes: two workers get work
        (root / "notes" / str(i // 40) / f"n-{i:04d}.md").write_text(f"# 新 {i}\n", "utf-8")
    store = lore.open(root, db=db)
    try:
        with pytest.raises(WorkerCrashed) as caught:
            sync(store.store, root, jobs=2, prepare=crash_on_one_note)
    finally:
        store.close()
    message = str(caught.value)
    assert "\n" not in message
    # It names the chunk the worker held (the first 32 changed notes, CRASH_ON among them).
    assert "exit status 3" in message and "notes/0/n-0000.md (or one of the 31" in message
    assert _tables(db) == before
    after = _index(root, db, jobs=2)  # nothing was lost: the next sync takes the edits
    assert len(after.changed) == 40


def test_an_exception_in_a_worker_reaches_the_caller_as_itself(tmp_path: Path) -> None:
    items = list(range(100))
    assert list(ordered_map(abs, [-i for i in items], jobs=2)) == items
    with pytest.raises(ValueError, match="invalid literal"):
        list(ordered_map(int, ["1"] * 40 + ["x"], jobs=2))


def test_workers_take_their_tasks_as_the_window_needs_them() -> None:
    """The tasks are pulled from an iterator a window at a time, never all at once: a
    vault's million tasks are not held, and every result still comes back in order."""
    taken: list[int] = []

    def tasks() -> Iterator[int]:
        for i in range(2000):
            taken.append(i)
            yield -i

    window = 2 * parallel.WINDOW_PER_JOB * parallel.CHUNK
    results = ordered_map(abs, tasks(), jobs=2)
    assert next(results) == 0
    assert window <= len(taken) <= window + parallel.CHUNK  # the window, and one chunk more
    rest = list(results)
    assert [0, *rest] == list(range(2000)) and len(taken) == 2000


@pytest.mark.parametrize(
    ("requested", "pending", "env", "load", "want"),
    [
        (None, 10, {}, 0.0, 1),  # small change: no workers to start
        (None, parallel.PARALLEL_FROM_NOTES, {}, 0.0, "cores"),
        (None, 10_000, {}, 1.0, "cores"),  # the load of this process alone
        (None, 10_000, {}, 1000.0, 1),  # every core busy: workers would only add hand-offs
        (4, 10_000, {}, 1000.0, 4),  # asked for: taken as given
        (4, 40, {}, 0.0, 2),  # never more workers than chunks
        (None, 10_000, {"LORE_INDEX_JOBS": "1"}, 0.0, 1),
        (None, 10_000, {"LORE_INDEX_JOBS": " 3 "}, 0.0, 3),
        (2, 10_000, {"LORE_INDEX_JOBS": "3"}, 0.0, 2),  # the flag wins
    ],
)
def test_jobs_default_and_overrides(
    requested: int | None, pending: int, env: dict[str, str], load: float, want: int | str
) -> None:
    expected = min(parallel.cores(), -(-pending // parallel.CHUNK)) if want == "cores" else want
    assert jobs_for(requested_jobs(requested, env), pending, load) == expected


@pytest.mark.parametrize("value", ["0", "65", "two", "-1", ""])
def test_a_bad_job_count_is_one_line_naming_the_variable(value: str) -> None:
    if not value:
        assert requested_jobs(None, {"LORE_INDEX_JOBS": value}) is None  # empty is unset
        return
    with pytest.raises(ConfigError, match="LORE_INDEX_JOBS") as caught:
        requested_jobs(None, {"LORE_INDEX_JOBS": value})
    assert "\n" not in str(caught.value)


def test_cli_index_jobs(tmp_path: Path) -> None:
    root = _vault(tmp_path / "vault", 60)
    lore_exe = Path(sys.executable).with_name("lore")
    done = subprocess.run(
        [str(lore_exe), "index", str(root), "--jobs", "2", "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"added"' in done.stdout
    bad = subprocess.run(
        [str(lore_exe), "index", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LORE_INDEX_JOBS": "lots"},
    )
    assert bad.returncode != 0
    assert "LORE_INDEX_JOBS" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
