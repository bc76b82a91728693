"""Incremental sync: what it reports, what it writes (nothing, when nothing changed), where
the index lives, what it scans, and that rebuild ends where incremental syncs end."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest
from conftest import dump_index, indexed_paths, one_line_naming, write_files
from hypothesis import given, settings
from hypothesis import strategies as st

import lore
from lore.store.sqlite import default_db_path

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def bump_mtime(path: Path, seconds: float = 10.0) -> None:
    """Move a file's mtime forward (deterministic change detection, no sleeping)."""
    st = path.stat()
    new = st.st_mtime_ns + int(seconds * 1e9)
    os.utime(path, ns=(st.st_atime_ns, new))


def edit(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    bump_mtime(path)


def data_version(db_path: Path) -> Callable[[], int]:
    """A probe on a separate connection: PRAGMA data_version changes iff another connection
    committed a change to the file since the probe's previous read."""
    con = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)

    def read() -> int:
        return int(con.execute("PRAGMA data_version").fetchall()[0][0])

    return read


# -- reporting --------------------------------------------------------------------------------


def test_added_changed_deleted_are_reported(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({"a.md": "alpha", "b.md": "beta", "sub/c.md": "gamma"})
    vault = open_vault(root)
    first = vault.sync()
    assert (first.added, first.changed, first.deleted) == (["a.md", "b.md", "sub/c.md"], [], [])
    assert first.unchanged == 0
    assert first.wrote

    edit(root / "a.md", "alpha edited")
    (root / "b.md").unlink()
    write_files(root, {"d.markdown": "delta", "sub/deeper/e.md": "epsilon"})
    second = vault.sync()
    assert second.added == ["d.markdown", "sub/deeper/e.md"]
    assert second.changed == ["a.md"]
    assert second.deleted == ["b.md"]
    assert second.unchanged == 1
    assert indexed_paths(vault) == ["a.md", "d.markdown", "sub/c.md", "sub/deeper/e.md"]
    assert [h.path for h in vault.search("edited")] == ["a.md"]
    assert list(vault.search("beta")) == []


def test_deleting_a_folder_deletes_its_notes(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({"keep.md": "k", "old/x.md": "x", "old/deep/y.md": "y"})
    vault = open_vault(root)
    vault.sync()
    for path in sorted(root.glob("old/**/*.md"), reverse=True):
        path.unlink()
    report = vault.sync()
    assert report.deleted == ["old/deep/y.md", "old/x.md"]
    assert indexed_paths(vault) == ["keep.md"]


def test_progress_is_reported_per_file_read(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({"a.md": "a", "b.md": "b"})
    calls: list[tuple[int, int, str]] = []
    open_vault(root).sync(progress=lambda done, total, path: calls.append((done, total, path)))
    assert calls == [(1, 2, "a.md"), (2, 2, "b.md")]


# -- writing nothing when nothing changed -----------------------------------------------------


def test_second_sync_with_nothing_changed_writes_nothing(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault({"a.md": "alpha", "b.md": "# Beta\nbeta", "c/d.md": "delta"})
    with lore.open(root) as vault:
        vault.sync()
    db = default_db_path(root)
    version = data_version(db)
    before = version()

    vault = open_vault(root)
    report = vault.sync()
    assert report.wrote is False
    assert (report.added, report.changed, report.deleted) == ([], [], [])
    assert report.unchanged == 3
    assert vault.store.db.total_changes() == 0  # this connection changed no row at all
    assert version() == before  # and no other connection saw a commit

    # Positive control: the probe does see a real write.
    edit(root / "a.md", "alpha changed")
    assert vault.sync().changed == ["a.md"]
    assert version() != before


def test_touching_a_file_without_changing_it_is_not_a_change(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault({"a.md": "---\ndate: 2026-09-03\n---\nalpha", "b.md": "beta"})
    vault = open_vault(root)
    vault.sync()
    bump_mtime(root / "a.md", 3600)

    report = vault.sync()
    assert report.changed == []
    assert report.unchanged == 2
    assert report.wrote is False
    # The new stat is recorded, so the file is not read again and doctor is content.
    stamps = {path: mtime_ns for path, mtime_ns, _size in vault.store.note_stamps()}
    assert stamps["a.md"] == (root / "a.md").stat().st_mtime_ns
    assert vault.doctor().ok
    version = data_version(vault.db_path)
    before = version()
    assert vault.sync().unchanged == 2
    assert version() == before


def test_a_note_without_a_date_is_undated_whatever_its_mtime(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """A clone or a copy sets every file's mtime: it is never a note's date."""
    root = make_vault({"undated.md": "no date in front matter, file name or text"})
    vault = open_vault(root)
    vault.sync()
    old = dt.datetime(2020, 9, 13, 12, 0).timestamp()
    os.utime(root / "undated.md", (old, old))
    vault.sync()
    note = vault.note("undated.md")
    assert (note["date"], note["date_source"]) == (None, None)


# -- rebuild == incremental -------------------------------------------------------------------


def _history(root: Path, vault: lore.Vault) -> None:
    """A sequence of adds, edits, touches, renames and deletes, syncing after each step."""
    write_files(
        root,
        {
            "a.md": "---\ntitle: Alpha\ntags: [x, y]\ndate: 2026-09-01\n---\n# A\n[[b]] #inline\n",
            "b.md": "# Beta\n\n## Part\n客户去重规则 v1\n",
            "sub/c.md": "---\ndate: 2026-09-02\n---\ngamma [[a|Alpha]]\n",
            "2026-10-10-meeting.md": "JIRA-1234 discussed\n",
        },
    )
    vault.sync()
    edit(root / "a.md", "---\ntitle: Alpha 2\ntags: [y, z]\ndate: 2026-09-01\n---\n# A\n#new\n")
    write_files(root, {"d.md": "---\ndate: 2026-09-04\n---\ndelta [[sub/c]]\n"})
    vault.sync()
    (root / "b.md").unlink()
    bump_mtime(root / "sub/c.md")  # touched, same content
    vault.sync()
    (root / "d.md").rename(root / "sub/d-renamed.md")
    edit(root / "2026-10-10-meeting.md", "JIRA-1234 discussed again\n## Follow-up\n- [[a]]\n")
    write_files(root, {"b.md": "# Beta reborn\n2026-09 plan\n"})
    vault.sync()


def test_rebuild_ends_in_the_same_index_as_incremental_syncs(
    make_vault: MakeVault,
    open_vault: OpenVault,
    index_dump: Callable[[Path], dict[str, Any]],
    tmp_path: Path,
) -> None:
    root = make_vault({}, name="hist")
    vault = open_vault(root)
    _history(root, vault)
    incremental = index_dump(vault.db_path)
    assert [n[0] for n in incremental["notes"]] == [
        "2026-10-10-meeting.md",
        "a.md",
        "b.md",
        "sub/c.md",
        "sub/d-renamed.md",
    ]
    assert incremental["fts_docs"] == [n[0] for n in incremental["notes"]]
    assert incremental["fts"], "the FTS dump must not be empty"

    report = vault.rebuild()
    assert sorted(report.added) == [n[0] for n in incremental["notes"]]
    assert index_dump(vault.db_path) == incremental

    fresh = open_vault(root, db=tmp_path / "fresh" / "index.sqlite")
    fresh.sync()
    assert index_dump(fresh.db_path) == incremental


# Random histories: whatever sequence of writes, touches and deletes happened, the index
# the incremental syncs built equals the one a rebuild derives from the final files.
CONTENTS = [
    "---\ndate: 2026-09-01\ntags: [x]\n---\n# One\nalpha [[b]] #t1\n",
    "---\ndate: 2026-09-02\ntitle: Two\ntags: [x, y]\n---\nalpha beta 客户去重\n",
    "---\ndate: 2026-09-03\naliases: [three]\n---\n## H\n客户 v1 [[a|A]]\n",
    "---\ndate: 2026-09-04\n---\n",
    "---\ndate: 2026-09-05\ntags: y\n---\nJIRA-1234 retention #t2 #t1\n",
]
NAMES = ["a.md", "b.md", "sub/c.md", "sub/deep/d.md"]
operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.integers(0, len(CONTENTS) - 1)),
    st.tuples(st.just("touch"), st.sampled_from(NAMES), st.just(0)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just(0)),
)


@settings(max_examples=30)
@given(st.lists(st.lists(operation, min_size=1, max_size=5), min_size=1, max_size=4))
def test_random_histories_end_where_a_rebuild_ends(
    batches: list[list[tuple[str, str, int]]],
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "vault"
        root.mkdir()
        clock = 1_700_000_000 * 10**9
        with lore.open(root) as vault:
            for batch in batches:
                for op, name, index in batch:
                    path = root / name
                    clock += 10**9
                    if op == "write":
                        write_files(root, {name: CONTENTS[index]})
                    elif op == "delete":
                        path.unlink(missing_ok=True)
                        continue
                    if path.exists():
                        os.utime(path, ns=(clock, clock))
                vault.sync()
            incremental = dump_index(vault.db_path)
            assert [n[0] for n in incremental["notes"]] == sorted(
                p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".lore" not in p.parts
            )
        with lore.open(root, db=Path(scratch) / "fresh.sqlite") as fresh:
            fresh.sync()
            assert dump_index(fresh.db_path) == incremental


# -- the index file ---------------------------------------------------------------------------


def test_index_uses_wal_mode(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({"a.md": "a"})
    open_vault(root).sync()
    con = apsw.Connection(str(default_db_path(root)), flags=apsw.SQLITE_OPEN_READONLY)
    assert con.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"


def test_default_index_lives_in_the_vault(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = make_vault({"a.md": "a"})
    vault = open_vault(root)
    assert vault.db_path == root / ".lore" / "index.sqlite"
    assert vault.db_path.is_file()


def test_external_index_refuses_another_vault(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    db = tmp_path / "shared" / "index.sqlite"
    first = make_vault({"a.md": "a"}, name="first")
    second = make_vault({"b.md": "b"}, name="second")
    with lore.open(first, db=db) as vault:
        vault.sync()
    with pytest.raises(lore.VaultMismatchError) as caught:
        lore.open(second, db=db)
    one_line_naming(str(caught.value), str(db), str(first), str(second))
    # The index was not touched: the first vault still opens and finds its note.
    assert [h.path for h in open_vault(first, db=db).search("a")] == ["a.md"]


def test_in_vault_index_follows_a_moved_vault(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    root = make_vault({"a.md": "alpha note", "sub/b.md": "beta note"}, name="before")
    with lore.open(root) as vault:
        vault.sync()
    moved = root.rename(tmp_path / "after")

    vault = open_vault(moved)
    assert vault.status().vault == str(moved)
    assert vault.store.get_meta("vault_root") == str(moved)
    report = vault.sync()
    assert report.wrote is False
    assert report.unchanged == 2
    assert [h.path for h in vault.search("beta")] == ["sub/b.md"]


def test_lore_db_env_overrides_the_default(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = make_vault({"a.md": "alpha"})
    env_db = tmp_path / "elsewhere" / "env.sqlite"
    monkeypatch.setenv("LORE_DB", str(env_db))
    vault = open_vault(root)
    vault.sync()
    assert vault.db_path == env_db
    assert env_db.is_file()
    assert not (root / ".lore").exists()

    explicit = tmp_path / "explicit.sqlite"
    assert open_vault(root, db=explicit).db_path == explicit


def test_relative_db_is_relative_to_the_current_folder(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    root = make_vault({"a.md": "alpha"})
    vault = open_vault(root, db="rel/index.sqlite")
    assert vault.db_path == tmp_path / "rel" / "index.sqlite"


def test_lore_vault_env_and_current_folder_defaults(
    make_vault: MakeVault,
    open_vault: OpenVault,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = make_vault({"a.md": "alpha"})
    monkeypatch.setenv("LORE_VAULT", str(root))
    assert open_vault().root == root.resolve()
    monkeypatch.delenv("LORE_VAULT")
    monkeypatch.chdir(root)
    assert open_vault().root == root.resolve()


# -- what is scanned --------------------------------------------------------------------------


def test_loreignore_and_tool_folders_are_ignored(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = make_vault(
        {
            ".loreignore": "# comment\ndrafts/private-*.md\n*.tmp.md\narchive/\n",
            "keep.md": "keep",
            "drafts/idea.md": "idea",
            "drafts/private-salary.md": "secret",
            "x.tmp.md": "tmp",
            "deep/y.tmp.md": "tmp",
            "archive/old.md": "old",
            ".git/notes.md": "git",
            ".obsidian/workspace.md": "obsidian",
            ".lore/stray.md": "lore",
            ".trash/gone.md": "trash",
            "sub/.git/inner.md": "nested git",
            "notes.txt": "not markdown",
            "UPPER.MD": "upper-case suffix",
        }
    )
    report = open_vault(root).sync()
    assert report.added == ["UPPER.MD", "drafts/idea.md", "keep.md"]
    assert report.skipped == []


def test_symlink_leaving_the_vault_is_skipped_with_a_reason(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret outside text")
    root = make_vault({"real.md": "inside text"})
    (root / "escape.md").symlink_to(outside)
    (root / "alias.md").symlink_to(root / "real.md")  # stays inside: indexed
    (root / "dangling.md").symlink_to(tmp_path / "missing.md")

    vault = open_vault(root)
    report = vault.sync()
    assert report.added == ["alias.md", "real.md"]
    reasons = {s.path: s.reason for s in report.skipped}
    assert set(reasons) == {"dangling.md", "escape.md"}
    for path, reason in reasons.items():
        one_line_naming(f"{path}: {reason}", path)
    assert "outside the vault" in reasons["escape.md"]
    assert list(vault.search("secret")) == []


def test_symlinked_folder_leaving_the_vault_is_reported(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    outside = make_vault({"x.md": "outside"}, name="outside")
    root = make_vault({"real.md": "inside"})
    (root / "linked").symlink_to(outside, target_is_directory=True)
    report = open_vault(root).sync()
    assert report.added == ["real.md"]
    assert [s.path for s in report.skipped] == ["linked"]
