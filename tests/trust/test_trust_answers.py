"""Issue 13, class 6: answers that are true.

- `remember` into a folder the vault ignores says `indexed: false` and why;
- a daily note that ends inside an unclosed code fence does not swallow the next entries
  (which were then never found, so the same entry was written again and again);
- a read-only index (its folder or its file) still answers `search`, `status`, `show`,
  saying once that it cannot be updated; writes to it fail in one line.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import one_line_naming, write_files
from stranger import NOTES, lore_env, read_only, run_lore

import lore
from lore.memory.entries import parse_daily

AT = dt.datetime(2026, 11, 22, 9, 30, 0)


def test_remember_into_an_ignored_folder_says_it_is_not_indexed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_files(root, {**NOTES, ".loreignore": "memory/\n"})
    with lore.open(root) as vault:
        memory = vault.remember("只在被忽略的文件夹里", at=AT)
        assert memory.created and not memory.indexed
        (note,) = [n for n in memory.notes if "not indexed" in n]
        one_line_naming(note, "memory/2026-11-22.md", "ignores")
        assert not vault.search("被忽略的文件夹")
        report = vault.digest("决定：客户去重规则 v2 下周上线。\n", date="2026-11-23")
        assert report.created and not report.indexed
        assert any("memory/2026-11-23.md" in n and "not indexed" in n for n in report.notices)
    outcome = run_lore(
        ["remember", "再写一条", "--json", "--vault", str(root)], lore_env(tmp_path / "h"), tmp_path
    )
    assert outcome.verdict == "ok", outcome
    assert json.loads(outcome.stdout)["indexed"] is False
    # Not ignored: indexed, and said so.
    (root / ".loreignore").write_text("", encoding="utf-8")
    with lore.open(root) as vault:
        assert vault.remember("现在能找到了", at=AT + dt.timedelta(hours=1)).indexed
        assert vault.search("现在能找到了")


@pytest.mark.parametrize("fence", ["```", "~~~~", "```python"])
def test_an_unclosed_fence_does_not_swallow_the_next_entries(tmp_path: Path, fence: str) -> None:
    root = tmp_path / "vault"
    before = f"# 2026-11-22\n\n{fence}\nprint('the user left this open')\n"
    write_files(root, {"memory/2026-11-22.md": before})
    with lore.open(root) as vault:
        for _ in range(3):
            memory = vault.remember("迁移定在 11 月底", at=AT)
        assert memory.indexed
        text = (root / "memory/2026-11-22.md").read_text(encoding="utf-8")
        assert text.startswith(before) and text.count("迁移定在 11 月底") == 2  # title + body
        closer = fence.rstrip("python")
        assert text[len(before) :].startswith(f"{closer}\n"), text  # the fence closed, once
        entries = [e for e in parse_daily(text, 1, "2026-11-22") if e.kind == "remember"]
        assert len(entries) == 1 and entries[0].text == "迁移定在 11 月底"
        hits = vault.search("迁移定在 11 月底")
        assert hits and hits[0].path == "memory/2026-11-22.md"
        vault.digest("决定：客户去重规则 v2 下周上线。\n", date="2026-11-22")
        vault.digest("决定：客户去重规则 v2 下周上线。\n", date="2026-11-22")
        text = (root / "memory/2026-11-22.md").read_text(encoding="utf-8")
        assert text.count("## Digest") == 1 and text[len(before) :].count(f"{closer}\n") == 1


def test_an_entry_with_its_own_unclosed_fence_is_closed(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    with lore.open(root) as vault:
        vault.remember("看这段代码：\n```sql\nSELECT 1", at=AT)
        vault.remember("第二条结论", at=AT + dt.timedelta(seconds=5))
        text = (root / "memory/2026-11-22.md").read_text(encoding="utf-8")
        kinds = [e.text for e in parse_daily(text, 1, "2026-11-22") if e.kind == "remember"]
        assert kinds == ["看这段代码：\n```sql\nSELECT 1\n```", "第二条结论"]


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write_files(root, NOTES)
    with lore.open(root) as vault:
        vault.sync()
    return root


@contextmanager
def made_read_only(path: Path) -> Iterator[None]:
    """`path` read-only while inside (skipped where this machine cannot make it so)."""
    manager = read_only(path)
    try:
        manager.__enter__()
    except OSError as exc:
        pytest.skip(str(exc))
    try:
        yield
    finally:
        manager.__exit__(None, None, None)


@pytest.mark.parametrize("what", [".lore", ".lore/index.sqlite"])
def test_a_read_only_index_still_answers(indexed: Path, tmp_path: Path, what: str) -> None:
    env = lore_env(tmp_path / "home")
    v = ["--vault", str(indexed)]
    with made_read_only(indexed / what):
        for args in (
            ["search", "客户 去重", *v],
            ["status", "--json", *v],
            ["show", "rules/客户去重规则 v2.md", *v],
            ["lookup", "孙八", *v],
            ["index", str(indexed)],  # nothing changed: nothing to write
        ):
            outcome = run_lore(args, env, tmp_path)
            assert outcome.verdict == "ok", outcome
            (notice,) = outcome.stderr.splitlines()
            one_line_naming(notice, "read-only", str(indexed / ".lore" / "index.sqlite"))
        assert "孙八" in run_lore(["lookup", "孙八", *v], env, tmp_path).stdout
        # A change to the files: reading still works, writing the index fails in one line.
        (indexed / "new.md").write_text("# New\n\n新的笔记\n", encoding="utf-8")
        failed = run_lore(["index", str(indexed)], env, tmp_path)
        assert failed.verdict == "one-line error", failed
        one_line_naming(failed.stderr.splitlines()[-1], "read-only", "cannot be updated")
        assert run_lore(["search", "客户", "--sync", *v], env, tmp_path).verdict == "ok"
        remembered = run_lore(["remember", "只读索引", "--json", *v], env, tmp_path)
        assert remembered.verdict == "ok", remembered
        memory = json.loads(remembered.stdout)
        assert memory["indexed"] is False and any("read-only" in n for n in memory["notes"])
    with lore.open(indexed) as vault:  # writable again: the next sync takes everything in
        vault.sync()
        assert vault.search("新的笔记") and vault.search("只读索引")


def test_a_read_only_index_through_the_api(indexed: Path) -> None:
    with made_read_only(indexed / ".lore"), lore.open(indexed) as vault:
        assert vault.read_only
        result = vault.search("客户 去重")
        assert result and any("read-only" in n for n in result.notices)
        assert not any("read-only" in n for n in vault.search("客户").notices)  # once
        assert vault.status().notes == len(NOTES)
        (indexed / "new.md").write_text("# New\n", encoding="utf-8")
        with pytest.raises(lore.IndexReadOnlyError) as caught:
            vault.sync()
        one_line_naming(str(caught.value), "read-only")
