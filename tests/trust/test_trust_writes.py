"""Issue 13, class 1: no write lore makes inside a vault follows a link the vault planted.

Each test plants a symlink (or a FIFO, or a folder) at a name lore writes (a daily note, its
lock, a temporary file, a card, a report, the index, a folder on the way), runs the writer,
and checks that the file outside is unchanged and the refusal is one line naming the file.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import first_index, indexed_paths, one_line_naming, write_files
from stranger import NOTES, lore_env, run_lore, tree_state

import lore
from lore.present.report_files import write_report
from lore.safe_write import TEMP_PREFIX, append_locked, open_folder

AT = dt.datetime(2026, 11, 22, 9, 30, 0)
DAY = "memory/2026-11-22.md"
SECRET = "the user's own file\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET, encoding="utf-8")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    write_files(vault, NOTES)
    return vault


def untouched(outside: Path, before: dict[str, str]) -> None:
    assert tree_state(outside) == before, "a file outside the vault changed"


def remember(vault: lore.Vault) -> None:
    vault.remember("客户去重规则 v2 下周上线", at=AT)


TRANSCRIPT = "2026-11-22 评审\n决定：客户去重规则 v2 下周上线。\n"


def digest(vault: lore.Vault) -> None:
    vault.digest(TRANSCRIPT, date="2026-11-22")


# (what is planted where, the writer, the name the one-line refusal must carry)
LINKS: list[tuple[str, str, Callable[[lore.Vault], None], str]] = [
    ("daily note", DAY, remember, DAY),
    ("daily note", DAY, digest, DAY),
    ("lock", "memory/.2026-11-22.md.lock", remember, "memory/.2026-11-22.md.lock"),
    ("lock", "memory/.2026-11-22.md.lock", digest, "memory/.2026-11-22.md.lock"),
]


@pytest.mark.parametrize(("what", "rel", "writer", "named"), LINKS)
def test_a_link_at_a_memory_name_is_refused(
    root: Path, outside: Path, what: str, rel: str, writer: Callable[[lore.Vault], None], named: str
) -> None:
    (root / rel).symlink_to(outside / "secret.txt")
    before = tree_state(outside)
    with lore.open(root) as vault:
        vault.sync()
        with pytest.raises(lore.LoreError) as caught:
            writer(vault)
    one_line_naming(str(caught.value), named, "symlink")
    untouched(outside, before)


@pytest.mark.parametrize("writer", [remember, digest])
def test_a_memory_folder_that_is_a_link_is_refused(
    root: Path, outside: Path, writer: Callable[[lore.Vault], None]
) -> None:
    (root / "memory").rename(root / "memory-old")
    (root / "memory").symlink_to(outside, target_is_directory=True)
    before = tree_state(outside)
    with lore.open(root) as vault, pytest.raises(lore.LoreError) as caught:
        writer(vault)
    one_line_naming(str(caught.value), "memory", "symlink")
    untouched(outside, before)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
@pytest.mark.parametrize("rel", [DAY, "memory/.2026-11-22.md.lock"])
def test_a_special_file_at_a_memory_name_is_refused_at_once(
    root: Path, kind: str, rel: str
) -> None:
    path = root / rel
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    with lore.open(root) as vault:
        with pytest.raises(lore.LoreError) as caught:
            remember(vault)  # a FIFO opened for reading would block for ever: never opened so
    one_line_naming(str(caught.value), rel)


def test_links_at_temporary_names_are_never_written_through(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The old predictable names (.NAME.PID.tmp, .lore-XXXX.md) are links now: not used.
    for name in (f".2026-11-22.md.{os.getpid()}.tmp", ".lore-000000.md"):
        (root / "memory" / name).symlink_to(outside / "secret.txt")
    before = tree_state(outside)
    with lore.open(root) as vault:
        remember(vault)
        assert "客户去重规则 v2 下周上线" in (root / DAY).read_text(encoding="utf-8")
        # Even a link at the unpredictable name itself (guessed here) is never opened.
        monkeypatch.setattr("secrets.token_hex", lambda n: "ab" * n)
        (root / "memory" / f"{TEMP_PREFIX}{'ab' * 8}.tmp").symlink_to(outside / "secret.txt")
        with pytest.raises(lore.LoreError) as caught:
            vault.remember("第二条", at=AT + dt.timedelta(seconds=1))
    one_line_naming(str(caught.value), DAY)
    untouched(outside, before)
    assert "第二条" not in (root / DAY).read_text(encoding="utf-8")


def test_a_card_swapped_for_a_link_is_not_fixed_through_it(root: Path, outside: Path) -> None:
    with lore.open(root) as vault:
        vault.sync()
        assert any(f.fixable for f in vault.check().findings)
        card = root / "entities/孙八.md"
        card.unlink()  # swapped after the index was made
        card.symlink_to(outside / "secret.txt")
        before = tree_state(outside)
        with pytest.raises(lore.LoreError) as caught:
            vault.check(fix=True)
    one_line_naming(str(caught.value), "entities/孙八.md", "symlink")
    untouched(outside, before)


def test_a_card_that_is_a_link_inside_the_vault_is_not_replaced(root: Path) -> None:
    real = root / "people/孙八.md"
    real.parent.mkdir()
    (root / "entities/孙八.md").rename(real)
    (root / "entities/孙八.md").symlink_to(real)
    with lore.open(root) as vault:
        vault.sync()
        with pytest.raises(lore.LoreError) as caught:
            vault.check(fix=True)
    one_line_naming(str(caught.value), "entities/孙八.md", "symlink")
    assert (root / "entities/孙八.md").is_symlink()
    assert real.read_text(encoding="utf-8") == NOTES["entities/孙八.md"]


def test_report_files_that_are_links_are_refused(root: Path, outside: Path) -> None:
    reports = root / "reports"
    reports.mkdir()
    (reports / "clusters-map.png").symlink_to(outside / "secret.txt")  # a stale chart
    before = tree_state(outside)
    with lore.open(root) as vault:
        vault.sync()
        report = vault.report()
        # Markdown without charts: the stale chart is removed, the link and not its target.
        write_report(report, "md", reports, charts=False, vault_root=vault.root)
        assert not (reports / "clusters-map.png").is_symlink()
        (reports / "report.md").unlink()
        (reports / "report.md").symlink_to(outside / "secret.txt")
        with pytest.raises(lore.LoreError) as caught:
            write_report(report, "md", reports, charts=False, vault_root=vault.root)
        one_line_naming(str(caught.value), "report.md", "symlink")
        # A report folder inside the vault that is a link out is not followed either.
        (reports / "report.md").unlink()
        reports.rmdir()
        reports.symlink_to(outside, target_is_directory=True)
        with pytest.raises(lore.LoreError) as folder:
            write_report(report, "md", reports, charts=False, vault_root=vault.root)
        one_line_naming(str(folder.value), "reports", "symlink")
    untouched(outside, before)


def test_a_captured_note_never_lands_on_a_planted_name(root: Path, outside: Path) -> None:
    from lore.capture.notes import write_note

    (root / "inbox").mkdir()
    (root / "inbox/2026-11-22-page.md").symlink_to(outside / "secret.txt")
    before = tree_state(outside)
    written = write_note(root, "inbox", "2026-11-22-page", "# Page\n", label="test")
    assert written == "inbox/2026-11-22-page-2.md"
    (root / "inbox").rename(root / "inbox-old")
    (root / "inbox").symlink_to(outside, target_is_directory=True)
    with pytest.raises(lore.LoreError) as caught:
        write_note(root, "inbox", "2026-11-22-page", "# Page\n", label="https://example.com")
    one_line_naming(str(caught.value), "https://example.com", "inbox", "symlink")
    untouched(outside, before)


@pytest.mark.parametrize("name", ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"])
def test_an_index_file_that_is_a_link_is_refused(root: Path, outside: Path, name: str) -> None:
    (root / ".lore").mkdir()
    (root / ".lore" / name).symlink_to(outside / "secret.txt")
    before = tree_state(outside)
    with pytest.raises(lore.LoreError) as caught:
        lore.open(root)
    one_line_naming(str(caught.value), f".lore/{name}", "symlink")
    untouched(outside, before)


def test_the_lock_is_never_created_through_a_link(tmp_path: Path, outside: Path) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "v/.n.md.lock").symlink_to(outside / "made-by-lock")  # a dangling link
    with open_folder(tmp_path / "v") as folder, pytest.raises(lore.PathError) as caught:
        with folder.lock("n.md"):
            pass
    one_line_naming(str(caught.value), ".n.md.lock", "symlink")
    assert not (outside / "made-by-lock").exists()


def test_paths_that_leave_the_folder_are_refused(tmp_path: Path) -> None:
    for rel in ("../x.md", "/etc/passwd", "a/../../x.md"):
        with pytest.raises(lore.PathError) as caught:
            append_locked(tmp_path, rel, lambda text: "x")
        one_line_naming(str(caught.value), rel)


def test_the_cli_refuses_in_one_line(root: Path, outside: Path, tmp_path: Path) -> None:
    first_index(root)
    (root / "memory/.2026-11-22.md.lock").symlink_to(outside / "secret.txt")
    (root / "memory" / f"{dt.date.today().isoformat()}.md").symlink_to(outside / "secret.txt")
    before = tree_state(outside)
    env = lore_env(tmp_path / "home")
    for args in (["remember", "结论"], ["digest", "-", "--date", "2026-11-22"]):
        outcome = run_lore([*args, "--vault", str(root)], env, tmp_path, stdin=TRANSCRIPT)
        assert outcome.code == 1 and outcome.verdict == "one-line error", outcome
        one_line_naming(outcome.stderr.strip(), "memory/")
    untouched(outside, before)


KILLED_FIX = textwrap.dedent(
    """
    import os, signal, sys
    import lore

    def killed(*args, **kwargs):  # the rename never happens: SIGKILL right before it
        os.kill(os.getpid(), signal.SIGKILL)

    with lore.open(sys.argv[1]) as vault:
        vault.sync()
        os.replace = killed
        vault.check(fix=True)
    """
)


def test_a_killed_fix_leaves_no_temporary_note_that_indexes(root: Path, tmp_path: Path) -> None:
    with lore.open(root) as vault:
        vault.sync()
        before = indexed_paths(vault)
    card = (root / "entities/孙八.md").read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", KILLED_FIX, str(root)],
        env=lore_env(tmp_path / "home"),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    left = [p.name for p in (root / "entities").iterdir() if p.name.startswith(".")]
    assert left and all(name.startswith(TEMP_PREFIX) for name in left)  # the kill landed
    assert not any(name.endswith(".md") for name in left)
    assert (root / "entities/孙八.md").read_bytes() == card
    with lore.open(root) as vault:
        vault.sync()
        assert indexed_paths(vault) == before
    outcome = run_lore(["check", "--fix", "--vault", str(root)], lore_env(tmp_path / "home"),
                       tmp_path, findings_ok=True)  # fmt: skip
    assert outcome.verdict == "ok", outcome
    assert b"last_activity: 2026-11-03" in (root / "entities/孙八.md").read_bytes()
