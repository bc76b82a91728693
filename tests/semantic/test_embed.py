"""Embedding as its own step after the sync: idempotent, precise, resumable, never mixed
with another model's vectors, and never fatal to a sync or a search."""

from __future__ import annotations

from pathlib import Path

import pytest
from semantic_support import (  # noqa: F401 - fixtures
    NOTES,
    Script,
    closed_port_url,
    embed_env,
    no_semantic_env,
    scripted,
    write_notes,
)

import lore
from lore.index.embed import IdentityMismatch
from lore.providers.base import ProviderError


def _texts_sent(script: Script) -> list[str]:
    return [t for r in script.requests if r["path"] == "/v1/embeddings" for t in r["body"]["input"]]


def _vectors(vault: lore.Vault) -> int:
    return int(vault.store.query("SELECT count(*) FROM vec_texts")[0][0])


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault")


def test_sync_embeds_and_a_second_run_calls_nothing(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        assert vault.mode == "mode4"  # nothing embedded yet
        report = vault.sync()
        assert report.embedded == len(set(_texts_sent(script))) > 0
        assert not report.notices
        assert vault.mode == "mode3"
        status = vault.status()
        assert status.mode == "mode3"
        assert "openai:fake-embed" in status.capabilities["embeddings"]
        assert "no LLM configured" in status.capabilities["llm"]
        requests = len(script.requests)
        assert vault.sync().embedded == 0
        again = vault.embed()
        assert again.embedded == 0 and again.notes == 0
        assert len(script.requests) == requests  # a second run calls nothing
    with lore.open(vault_dir) as reopened:
        assert reopened.embed().embedded == 0
        assert len(script.requests) == requests


def test_changing_one_note_re_embeds_exactly_that_note(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        before = _vectors(vault)
        script.requests.clear()
        (vault_dir / "pets/cat.md").write_text("# 宠物猫\n\n猫喜欢晒太阳。\n", encoding="utf-8")
        report = vault.sync()
        sent = _texts_sent(script)
        assert report.changed == ["pets/cat.md"]
        assert sent and all("猫" in t or "宠物" in t or "太阳" in t for t in sent), sent
        assert not any("Eiffel" in t or "客户" in t for t in sent)
        assert _vectors(vault) == before  # the old texts' vectors were dropped
        (vault_dir / "travel/paris.md").unlink()
        vault.sync()
        assert _vectors(vault) < before


def test_another_model_is_refused_until_rebuild(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        stored = _vectors(vault)
    monkeypatch.setenv("LORE_EMBED_MODEL", "other-model")
    with lore.open(vault_dir) as vault:
        assert vault.mode == "mode4"
        assert "lore embed --rebuild" in vault.status().capabilities["embeddings"]
        (vault_dir / "new.md").write_text("# New\n\nfresh words\n", encoding="utf-8")
        requests = len(script.requests)
        report = vault.sync()
        assert report.added == ["new.md"]
        assert len(report.notices) == 1 and "lore embed --rebuild" in report.notices[0]
        assert len(script.requests) == requests and _vectors(vault) == stored  # nothing mixed
        with pytest.raises(IdentityMismatch, match="openai:fake-embed"):
            vault.embed()
        rebuilt = vault.embed(rebuild=True)
        assert rebuilt.identity == "openai:other-model" and rebuilt.embedded > 0
        assert vault.mode == "mode3"


def test_endpoint_down_sync_finishes_in_mode4_and_keeps_everything(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        stored = _vectors(vault)
    embed_env(monkeypatch, closed_port_url())
    with lore.open(vault_dir) as vault:
        (vault_dir / "new.md").write_text("# New\n\nfresh words\n", encoding="utf-8")
        report = vault.sync()
        assert report.added == ["new.md"]  # the files are indexed all the same
        assert len(report.notices) == 1
        assert "embeddings unavailable" in report.notices[0]
        assert "unreachable" in report.notices[0] and "mode4" in report.notices[0]
        assert _vectors(vault) == stored  # nothing stored is lost
        assert vault.search("fresh words")[0].path == "new.md"
        assert vault.sync().notices == []  # told once


def test_interrupted_embed_resumes_where_it_stopped(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    write_notes(vault_dir, {f"n/{i:02d}.md": f"# Note {i}\n\nword{i} text\n" for i in range(40)})
    embed_env(monkeypatch, url)
    monkeypatch.setenv("LORE_EMBED_BATCH", "4")
    with lore.open(vault_dir) as vault:
        script.fail_after = 2  # two batch requests succeed, then the endpoint fails
        with pytest.raises(ProviderError, match="HTTP 500"):
            vault.embed()
        partial = _vectors(vault)
        assert partial > 0
        first = set(_texts_sent(script))
        script.fail_after = None
        script.requests.clear()
        report = vault.embed()
        resent = _texts_sent(script)
        assert report.embedded == len(resent) > 0
        done_before = {t for t in first} - set(resent)
        assert done_before, "the batches that succeeded were kept"
        assert _vectors(vault) == partial + report.embedded
        assert vault.embed().embedded == 0


def test_no_provider_embed_is_a_clear_error(vault_dir: Path) -> None:
    with lore.open(vault_dir) as vault, pytest.raises(lore.ConfigError, match="LORE_EMBED"):
        vault.embed()


def test_notes_are_all_in_the_sample(vault_dir: Path) -> None:
    assert sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*.md")) == sorted(
        NOTES
    )


def test_long_note_scores_by_its_best_passage_which_is_the_snippet(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = "\n\n".join(
        f"Paragraph {i} talks about gardening, soil and seasonal planting schedules." * 6
        for i in range(12)
    )
    long_note = (
        "# Garden journal\n\n"
        + filler
        + "\n\n## Bees\n\nThe beehive swarm moved to the oak tree.\n"
    )
    vault_dir = write_notes(tmp_path / "v", {"journal.md": long_note, "other.md": "# Other\n\nx\n"})
    url, _script = scripted
    embed_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        kinds = [k for (k,) in vault.store.query("SELECT kind FROM note_texts ORDER BY kind, seq")]
        assert kinds.count("passage") >= 3 and "summary" in kinds
        hits = vault.search("beehive swarm oak", explain=True)
        top = hits[0]
        assert top.path == "journal.md" and hits.mode == "mode3"
        assert top.explain is not None and top.explain.passage is not None
        assert "beehive swarm" in top.explain.passage
        assert top.heading == "Bees" and "beehive" in top.snippet
        assert top.line == long_note.count("\n", 0, long_note.index("The beehive")) + 1
