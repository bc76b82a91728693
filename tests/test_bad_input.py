"""Hostile and broken input. Each case must (a) say what went wrong in one line naming the
file (a report entry, or a LoreError) and (b) never cost the index another note."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import indexed_paths, one_line_naming, write_files

import lore
import lore.index.sync as sync_mod
import lore.store.sqlite as sqlite_mod
from lore.model import Skipped, SyncReport

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]

GOOD = {
    "good/alpha.md": "---\ntitle: Alpha\n---\nalpha content here\n",
    "good/beta.md": "# Beta\nbeta content 客户去重\n",
}


def entry(items: list[Skipped], path: str) -> str:
    """The one reason recorded for `path`, checked to be one line."""
    found = [s for s in items if s.path == path]
    assert len(found) == 1, f"{path} not reported once in {items}"
    one_line_naming(f"{found[0].path}: {found[0].reason}", path)
    return found[0].reason


def assert_good_notes_kept(vault: lore.Vault) -> None:
    paths = indexed_paths(vault)
    for path in GOOD:
        assert path in paths
    assert [h.path for h in vault.search("alpha content")][:1] == ["good/alpha.md"]
    assert [h.path for h in vault.search("beta")][:1] == ["good/beta.md"]


def vault_with(make_vault: MakeVault, extra: dict[str, str | bytes]) -> Path:
    return make_vault({**GOOD, **extra})


# -- file content -----------------------------------------------------------------------------


def test_malformed_front_matter(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = vault_with(make_vault, {"bad-fm.md": "---\ntitle: [oops\n---\n# Still Here\nzebra\n"})
    vault = open_vault(root)
    report = vault.sync()
    reason = entry(report.warnings, "bad-fm.md")
    assert "front matter title cannot be read" in reason
    assert "bad-fm.md" in report.added
    assert [h.path for h in vault.search("zebra")] == ["bad-fm.md"]
    assert vault.note("bad-fm.md")["title"] == "Still Here"
    assert_good_notes_kept(vault)


def test_front_matter_date_that_does_not_exist(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = vault_with(make_vault, {"typo.md": "---\ndate: 2026-02-30\n---\nbody\n"})
    vault = open_vault(root)
    report = vault.sync()
    entry(report.warnings + report.skipped, "typo.md")
    assert_good_notes_kept(vault)


def test_invalid_utf8(make_vault: MakeVault, open_vault: OpenVault) -> None:
    root = vault_with(make_vault, {"latin1.md": "café crème".encode("latin-1")})
    vault = open_vault(root)
    report = vault.sync()
    assert "UTF-8" in entry(report.skipped, "latin1.md")
    assert "latin1.md" not in indexed_paths(vault)
    assert_good_notes_kept(vault)


def test_file_turning_invalid_keeps_its_indexed_version(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = vault_with(make_vault, {"turns.md": "original walrus text"})
    vault = open_vault(root)
    vault.sync()
    (root / "turns.md").write_bytes(b"\xff\xfe broken \xc3")
    os.utime(root / "turns.md", ns=(0, (root / "turns.md").stat().st_mtime_ns + 10**10))
    report = vault.sync()
    reason = entry(report.skipped, "turns.md")
    assert "kept" in reason
    assert [h.path for h in vault.search("walrus")] == ["turns.md"]
    assert_good_notes_kept(vault)


def test_binary_file_named_md(make_vault: MakeVault, open_vault: OpenVault) -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    root = vault_with(make_vault, {"image.md": png})
    vault = open_vault(root)
    report = vault.sync()
    assert "binary" in entry(report.skipped, "image.md")
    assert_good_notes_kept(vault)


@pytest.mark.parametrize("content", ["", "  \n\n\t\n"])
def test_empty_file(make_vault: MakeVault, open_vault: OpenVault, content: str) -> None:
    root = vault_with(make_vault, {"blank page.md": content})
    vault = open_vault(root)
    report = vault.sync()
    assert "empty" in entry(report.warnings, "blank page.md")
    assert "blank page.md" in report.added
    assert vault.note("blank page.md")["title"] == "blank page"
    assert [h.path for h in vault.search("blank page")] == ["blank page.md"]
    assert_good_notes_kept(vault)


def _write_big(path: Path, size: int, tail: bytes) -> None:
    # 3-byte CJK characters make the 1,000,000-byte cut land inside a character.
    chunk = ("中文 head words 客户去重规则 " * 2000).encode()
    with path.open("wb") as handle:
        written = 0
        while written < size:
            handle.write(chunk)
            written += len(chunk)
        handle.write(tail)


def test_fifty_megabyte_file_is_indexed_by_its_head(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_with(make_vault, {})
    _write_big(root / "huge.md", 50 * 1024 * 1024, b"\nunicornfinale\n")
    vault = open_vault(root, max_file_bytes=1_000_000)
    read: list[int] = []  # bytes each read of a note returned: the head only, never 50 MB

    def counted(fd: int, limit: int) -> bytes:
        data = real_read(fd, limit)
        read.append(len(data))
        return data

    real_read = sync_mod.read_at_most
    monkeypatch.setattr(sync_mod, "read_at_most", counted)
    report = vault.sync()
    assert read and max(read) <= 1_000_000 and sum(read) <= 2_000_000  # a retry at most
    assert "only its head is indexed" in entry(report.warnings, "huge.md")
    note = vault.note("huge.md")
    assert note["truncated"] is True
    assert note["size"] == (root / "huge.md").stat().st_size
    assert 0 < len(note["body"].encode()) <= 1_000_000
    assert "\ufffd" not in note["body"]
    assert [h.path for h in vault.search("head words")] == ["huge.md"]
    assert list(vault.search("unicornfinale")) == []  # past the head
    assert_good_notes_kept(vault)
    # The truncated note is stable: a second sync reads nothing.
    again = vault.sync()
    assert again.wrote is False
    (root / "huge.md").unlink()  # do not leave 50 MB in pytest's kept tmp dirs


def test_max_file_bytes_from_the_environment(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_with(make_vault, {})
    _write_big(root / "big.md", 300_000, b"\ntailword\n")
    monkeypatch.setenv("LORE_MAX_FILE_BYTES", "65536")
    vault = open_vault(root)
    report = vault.sync()
    entry(report.warnings, "big.md")
    assert len(vault.note("big.md")["body"].encode()) <= 65536
    assert_good_notes_kept(vault)


def test_bad_max_file_bytes_names_the_setting(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_with(make_vault, {})
    monkeypatch.setenv("LORE_MAX_FILE_BYTES", "lots")
    with pytest.raises(lore.ConfigError) as caught:
        lore.open(root)
    one_line_naming(str(caught.value), "LORE_MAX_FILE_BYTES")


# -- files changing under the sync ------------------------------------------------------------


def test_file_deleted_between_scan_and_read(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_with(make_vault, {"was-indexed.md": "v1 of a note"})
    vault = open_vault(root)
    vault.sync()
    write_files(root, {"new-fleeting.md": "never read"})
    os.utime(root / "was-indexed.md", ns=(0, (root / "was-indexed.md").stat().st_mtime_ns + 10**10))

    real_scan = sync_mod.scan_vault

    def scan_then_delete(scan_root: Path, skipped: list[Skipped], **kw: Any) -> Iterator[Any]:
        files = list(real_scan(scan_root, skipped, **kw))
        (scan_root / "new-fleeting.md").unlink()
        (scan_root / "was-indexed.md").unlink()
        yield from files

    monkeypatch.setattr(sync_mod, "scan_vault", scan_then_delete)
    report = vault.sync()
    assert "vanished" in entry(report.skipped, "new-fleeting.md")
    assert "kept" in entry(report.skipped, "was-indexed.md")
    assert "was-indexed.md" in indexed_paths(vault)
    assert_good_notes_kept(vault)

    monkeypatch.setattr(sync_mod, "scan_vault", real_scan)
    after = vault.sync()
    assert after.deleted == ["was-indexed.md"]
    assert after.skipped == []
    assert "was-indexed.md" not in indexed_paths(vault)
    assert_good_notes_kept(vault)


def _read_growing(path: Path, times: int) -> Callable[[int, int], bytes]:
    """sync's read_at_most, appending to `path` on disk after reading it, as a writer
    typing into the note would (the first `times` reads)."""
    remaining = [times]

    def read(fd: int, limit: int) -> bytes:
        data = os.read(fd, limit)
        if remaining[0] > 0 and os.fstat(fd).st_ino == path.stat().st_ino:
            remaining[0] -= 1
            with builtins.open(path, "ab") as writer:
                writer.write(b"\nmore text being typed")
        return data

    return read


def test_file_changing_while_read_is_skipped(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_with(make_vault, {"busy.md": "being edited"})
    monkeypatch.setattr(sync_mod, "read_at_most", _read_growing(root / "busy.md", times=99))
    vault = open_vault(root)
    report = vault.sync()
    assert "changed while being read" in entry(report.skipped, "busy.md")
    assert "busy.md" not in indexed_paths(vault)
    assert_good_notes_kept(vault)


def test_file_changing_once_while_read_is_reread(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = vault_with(make_vault, {"busy.md": "being edited"})
    monkeypatch.setattr(sync_mod, "read_at_most", _read_growing(root / "busy.md", times=1))
    vault = open_vault(root)
    report = vault.sync()
    assert "busy.md" in report.added
    assert report.skipped == []
    body = vault.note("busy.md")["body"]
    assert body == (root / "busy.md").read_text()
    assert "more text being typed" in body
    assert_good_notes_kept(vault)


# -- vault and index locations ----------------------------------------------------------------


def test_vault_path_that_does_not_exist(tmp_path: Path) -> None:
    missing = tmp_path / "no such vault"
    with pytest.raises(lore.VaultError) as caught:
        lore.open(missing)
    one_line_naming(str(caught.value), str(missing))
    assert not missing.exists()


def test_vault_path_that_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "note.md"
    file.write_text("x")
    with pytest.raises(lore.VaultError) as caught:
        lore.open(file)
    one_line_naming(str(caught.value), str(file))


def test_index_location_under_a_regular_file(make_vault: MakeVault, tmp_path: Path) -> None:
    root = vault_with(make_vault, {})
    blocker = tmp_path / "file.txt"
    blocker.write_text("I am a file, not a folder")
    db = blocker / "index.sqlite"
    with pytest.raises(lore.LoreError) as caught:
        lore.open(root, db=db)
    one_line_naming(str(caught.value), str(db))
    assert blocker.read_text() == "I am a file, not a folder"
    assert not (root / ".lore").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_index_location_in_a_read_only_folder(make_vault: MakeVault, tmp_path: Path) -> None:
    root = vault_with(make_vault, {})
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with pytest.raises(lore.LoreError) as caught:
            with lore.open(root, db=locked / "index.sqlite") as vault:
                vault.sync()
        one_line_naming(str(caught.value), str(locked / "index.sqlite"))
    finally:
        locked.chmod(0o755)


def test_index_that_is_not_an_sqlite_file(make_vault: MakeVault, tmp_path: Path) -> None:
    root = vault_with(make_vault, {})
    db = tmp_path / "garbage.sqlite"
    db.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(lore.LoreError) as caught:
        lore.open(root, db=db)
    one_line_naming(str(caught.value), str(db))


def test_index_built_for_another_vault(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    db = tmp_path / "one.sqlite"
    other = make_vault({"other.md": "other vault"}, name="other")
    with lore.open(other, db=db) as vault:
        vault.sync()
    root = vault_with(make_vault, {})
    with pytest.raises(lore.VaultMismatchError) as caught:
        lore.open(root, db=db)
    one_line_naming(str(caught.value), str(db), str(other))
    assert [h.path for h in open_vault(other, db=db).search("other")] == ["other.md"]


# -- concurrency and failure ------------------------------------------------------------------

_HOLD_LOCK = """
import sys, apsw
con = apsw.Connection(sys.argv[1])
con.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
con.execute("ROLLBACK")
"""


@pytest.fixture
def lock_holder() -> Iterator[Callable[[Path], None]]:
    """lock_holder(db) starts another process that holds the index's write lock."""
    procs: list[subprocess.Popen[str]] = []

    def hold(db: Path) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-c", _HOLD_LOCK, str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"

    yield hold
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def test_sync_while_another_process_writes_is_busy(
    make_vault: MakeVault,
    open_vault: OpenVault,
    monkeypatch: pytest.MonkeyPatch,
    lock_holder: Callable[[Path], None],
) -> None:
    root = vault_with(make_vault, {})
    with lore.open(root) as vault:
        vault.sync()
    write_files(root, {"new.md": "new note"})
    monkeypatch.setattr(sqlite_mod, "BUSY_TIMEOUT_MS", 200)
    db = root / ".lore" / "index.sqlite"
    lock_holder(db)

    vault = open_vault(root)
    with pytest.raises(lore.IndexBusyError) as caught:  # after BUSY_TIMEOUT_MS, not forever
        vault.sync()
    message = str(caught.value)
    assert message.startswith("index busy")
    one_line_naming(message, str(db))
    # Readers are not blocked: the previous index answers.
    assert_good_notes_kept(vault)


def test_nothing_to_write_needs_no_lock(
    make_vault: MakeVault,
    open_vault: OpenVault,
    monkeypatch: pytest.MonkeyPatch,
    lock_holder: Callable[[Path], None],
) -> None:
    root = vault_with(make_vault, {})
    with lore.open(root) as vault:
        vault.sync()
    monkeypatch.setattr(sqlite_mod, "BUSY_TIMEOUT_MS", 200)
    lock_holder(root / ".lore" / "index.sqlite")
    report = open_vault(root).sync()
    assert report.wrote is False
    assert report.unchanged == len(GOOD)


def test_nothing_to_write_needs_no_lock_even_with_a_skipped_file(
    make_vault: MakeVault,
    open_vault: OpenVault,
    monkeypatch: pytest.MonkeyPatch,
    lock_holder: Callable[[Path], None],
) -> None:
    root = vault_with(make_vault, {"latin1.md": "café".encode("latin-1")})
    with lore.open(root) as vault:
        vault.sync()
    monkeypatch.setattr(sqlite_mod, "BUSY_TIMEOUT_MS", 200)
    lock_holder(root / ".lore" / "index.sqlite")
    report = open_vault(root).sync()
    assert report.wrote is False


def test_two_real_syncs_at_once_end_consistent(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    files: dict[str, str | bytes] = {f"n{i:03d}.md": f"note number {i} walrus" for i in range(150)}
    root = make_vault({**GOOD, **files})
    with lore.open(root) as vault:  # create the schema first: both then only sync
        pass
    script = (
        "import sys, lore\n"
        "try:\n"
        "    with lore.open(sys.argv[1]) as v: r = v.sync()\n"
        "    print('ok', len(r.added))\n"
        "except lore.IndexBusyError as e:\n"
        "    print('busy', e)\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(root)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=30)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    added = sorted(int(o.split()[1]) for o in outputs if o.startswith("ok"))
    # One did all the work; the other found it done (or was told the index was busy).
    assert added in ([0, 152], [152]), outputs
    vault = open_vault(root)
    assert len(indexed_paths(vault)) == 152
    assert vault.sync().wrote is False


def test_failed_sync_leaves_the_previous_index_intact(
    make_vault: MakeVault,
    open_vault: OpenVault,
    monkeypatch: pytest.MonkeyPatch,
    index_dump: Callable[[Path], dict[str, Any]],
) -> None:
    root = vault_with(make_vault, {"c.md": "gamma"})
    vault = open_vault(root)
    vault.sync()
    before = index_dump(vault.db_path)

    write_files(root, {"d.md": "delta", "e.md": "epsilon", "f.md": "phi"})
    (root / "c.md").unlink()
    real_derive = sync_mod.derive_row
    calls = [0]

    def failing_derive(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("derive exploded on the third note")
        return real_derive(*args, **kwargs)

    monkeypatch.setattr(sync_mod, "derive_row", failing_derive)
    with pytest.raises(RuntimeError, match="third note"):
        vault.sync()
    assert calls[0] == 3
    assert index_dump(vault.db_path) == before
    assert [h.path for h in vault.search("gamma")] == ["c.md"]  # still readable
    assert list(vault.search("delta")) == []

    monkeypatch.setattr(sync_mod, "derive_row", real_derive)
    report: SyncReport = vault.sync()
    assert report.added == ["d.md", "e.md", "f.md"]
    assert report.deleted == ["c.md"]
    assert_good_notes_kept(vault)


# -- path arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize("arg", ["../outside.md", "/etc/passwd", "a\x00b.md", "missing.md"])
def test_note_path_arguments_are_checked(
    make_vault: MakeVault, open_vault: OpenVault, arg: str
) -> None:
    root = vault_with(make_vault, {})
    vault = open_vault(root)
    vault.sync()
    with pytest.raises(lore.PathError) as caught:
        vault.note(arg)
    one_line_naming(str(caught.value), repr(arg) if "\x00" in arg else arg)
    assert_good_notes_kept(vault)


def test_note_path_through_a_symlink_leaving_the_vault(
    make_vault: MakeVault, open_vault: OpenVault, tmp_path: Path
) -> None:
    root = vault_with(make_vault, {})
    outside = make_vault({"secret.md": "secret"}, name="outside")
    (root / "door").symlink_to(outside, target_is_directory=True)
    vault = open_vault(root)
    vault.sync()
    with pytest.raises(lore.PathError) as caught:
        vault.note("door/secret.md")
    one_line_naming(str(caught.value), "door/secret.md", "outside the vault")
