"""`Vault.digest`: JSONL and plain transcripts into the day's note, idempotent, and bad
input refused with the file and line named."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import one_line_naming
from memory_support import write

import lore

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]

SESSION = "\n".join(
    json.dumps(line, ensure_ascii=False)
    for line in [
        {"role": "system", "content": "决定：这条系统提示不该进笔记"},
        {"role": "user", "content": "缓存用哪个？", "timestamp": "2026-11-18T09:00:00+08:00"},
        {"role": "assistant", "content": "压测结论是 Redis Cluster 延迟最低。"},
        {"role": "user", "content": "好的，那我们决定用 Redis Cluster。"},
        {"role": "user", "content": "TODO 下周找运维确认机器预算。"},
        {"role": "assistant", "content": "教训：上次没压测就上线，回滚花了两小时。"},
        {"role": "user", "content": "嗯"},
    ]
)


@pytest.fixture
def vault(make_vault: MakeVault, open_vault: OpenVault) -> lore.Vault:
    opened = open_vault(write(make_vault()))
    opened.sync()
    return opened


def test_jsonl_session_into_the_daily_note(vault: lore.Vault) -> None:
    report = vault.digest(SESSION, name="session-042.jsonl")
    assert report.created and report.method == "heuristic"
    assert (report.path, report.date) == ("memory/2026-11-18.md", "2026-11-18")
    assert report.items == {
        "decisions": ["好的，那我们决定用 Redis Cluster。"],
        "conclusions": ["压测结论是 Redis Cluster 延迟最低。"],
        "open_items": ["TODO 下周找运维确认机器预算。"],
        "lessons": ["教训：上次没压测就上线，回滚花了两小时。"],
    }
    text = (vault.root / report.path).read_text(encoding="utf-8")
    assert f"## Digest · session-042.jsonl {{#{report.anchor}}}" in text
    assert "- [ ] TODO 下周找运维确认机器预算。" in text
    assert "系统提示" not in text
    assert text.rstrip().endswith(
        "source: session-042.jsonl · trust: inferred · status: claimed · extractor: heuristic"
    )
    # Indexed at once, as an entry with its anchor; its open item reaches the snapshot.
    hit = vault.lookup("Redis Cluster 延迟").hits[0]
    assert hit.anchor == report.pointer  # type: ignore[attr-defined]
    assert any("运维确认机器预算" in i["text"] for i in vault.snapshot().open_items)


def test_digest_twice_changes_nothing(vault: lore.Vault) -> None:
    first = vault.digest(SESSION, name="a.jsonl")
    note = vault.root / first.path
    before = note.read_bytes()
    again = vault.digest(SESSION, name="renamed.jsonl", date="2026-11-19")
    assert not again.created and again.reason and "digested before" in again.reason
    assert again.anchor == first.anchor and again.path == first.path
    assert note.read_bytes() == before
    assert not (vault.root / "memory/2026-11-19.md").exists()


def test_a_deleted_daily_note_is_written_again_without_a_sync_between(
    vault: lore.Vault,
) -> None:
    """The index still lists the digest of a daily note deleted since the last sync: the
    note is not there, so the digest is written again (not "digested before")."""
    first = vault.digest(SESSION, name="a.jsonl")
    (vault.root / first.path).unlink()
    again = vault.digest(SESSION, name="a.jsonl")
    assert again.created and again.reason is None
    assert f"{{#{first.anchor}}}" in (vault.root / again.path).read_text(encoding="utf-8")


def test_plain_text_and_nothing_worth_keeping(vault: lore.Vault) -> None:
    plain = vault.digest(
        "张三: 结论是灰度没问题。\n李四: 好的\n", name="notes.txt", date="2026-11-17"
    )
    assert plain.created and plain.items["conclusions"] == ["结论是灰度没问题。"]
    empty = vault.digest("今天天气不错。\n嗯\n", name="chat.txt", date="2026-11-16")
    assert not empty.created and empty.reason
    assert empty.reason.startswith("nothing worth keeping")
    assert not (vault.root / "memory/2026-11-16.md").exists()


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ('{"role": "user", "content": "hi"}\n{not json\n', "s.jsonl line 2"),
        ('{"role": "user", "content": "hi"}\n[1, 2]\n', "s.jsonl line 2"),
        ("a\x00b", "binary"),
    ],
)
def test_bad_transcripts_are_refused(vault: lore.Vault, data: str, named: str) -> None:
    with pytest.raises(lore.ConfigError) as caught:
        vault.digest(data, name="s.jsonl", date="2026-11-15")
    one_line_naming(str(caught.value), named)
    assert not (vault.root / "memory/2026-11-15.md").exists()


def test_bad_digest_arguments(vault: lore.Vault) -> None:
    with pytest.raises(lore.ConfigError, match="--date"):
        vault.digest("决定：x", date="tomorrow")
    with pytest.raises(lore.ConfigError, match="--trust"):
        vault.digest("决定：x", trust="rumour")
