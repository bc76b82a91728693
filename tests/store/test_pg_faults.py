"""PostgreSQL going wrong under lore (issue 15), on the session's real server: the
connection dropped in the middle of a sync (the server ends the syncing backend from a
second connection, at a chosen note of the progress) and a database without the vector
extension. Each is one line naming the URL without its password; what was indexed stays,
and what does not need the missing part still works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from test_pg_store import with_password

import lore
from lore.errors import LoreError

# Enough that the drop comes after many notes were written inside the open transaction
# (the first half: each changed note is a few statements of its own) and that every query
# below finds notes in both editions; each note more is only round trips to the server.
NOTES = 60


def write_notes(root: Path, edition: str) -> None:
    for i in range(NOTES):
        path = root / f"n{i // 10}" / f"note{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"# 笔记 {i}\n\n第 {i} 条记录 {edition}：客户去重规则 step{i} budget{i * 7}.\n",
            encoding="utf-8",
        )


def answers(vault: lore.Vault) -> list[list[tuple[str, float]]]:
    return [
        [(hit.path, round(hit.score, 6)) for hit in vault.search(query, mode="mode4")]
        for query in ("客户去重规则", "step42", "budget70 记录", "first")
    ]


def terminate_others(url: str) -> int:
    """End every other backend connected to the database of `url` (as an admin would)."""
    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def test_a_connection_dropped_mid_sync_keeps_the_index_and_the_next_sync_completes(
    tmp_path: Path, pg_url: str
) -> None:
    root = tmp_path / "vault"
    write_notes(root, "first")
    url = with_password(pg_url, "s3cret-pw")  # trust authentication: never asked for
    with lore.open(root, db=url) as vault:
        vault.sync()
        before = answers(vault)
    assert before[0] and before[3]
    write_notes(root, "second")
    dropped: list[int] = []

    def drop_at_the_middle(done: int, total: int, path: str) -> None:
        if done == total // 2 and not dropped:
            dropped.append(terminate_others(pg_url))

    with lore.open(root, db=url) as vault:
        with pytest.raises(LoreError) as failed:
            vault.sync(progress=drop_at_the_middle)
    assert dropped and dropped[0] >= 1
    message = str(failed.value)
    assert "\n" not in message and "s3cret-pw" not in message
    assert "postgresql://" in message and "lore_test_" in message
    with lore.open(root, db=url) as vault:
        assert answers(vault) == before  # nothing of the broken sync was kept
        report = vault.sync()
        assert len(report.changed) == NOTES
        after = answers(vault)
    assert after != before and after[0] and not after[3]


def test_a_client_without_numpy_is_told_what_to_install(tmp_path: Path, pg_url: str) -> None:
    """Searches sum bm25 with numpy (lore.store.pg_bm25): a client lacking it gets one line
    and the command that installs it, before anything is written."""
    root = tmp_path / "vault"
    write_notes(root, "first")
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['numpy'] = None\n")
    url = with_password(pg_url, "s3cret-pw")
    ran = subprocess.run(
        [str(Path(sys.executable).parent / "lore"), "index", str(root), "--db", url],
        env={**os.environ, "PYTHONPATH": str(blocker)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode != 0
    assert ran.stderr.count("\n") == 1 and "s3cret-pw" not in ran.stderr
    assert "needs numpy" in ran.stderr and "[postgres]'" in ran.stderr, ran.stderr
    with lore.open(root, db=url) as vault:
        assert len(vault.sync().added) == NOTES  # nothing was written by the refused run
