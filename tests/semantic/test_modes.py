"""Mode selection, the --mode override, the LLM path (plan and tags, cached), and every
fault finishing in the next lower mode with one notice."""

from __future__ import annotations

from pathlib import Path

import pytest
from semantic_support import (  # noqa: F401 - fixtures
    Script,
    embed_env,
    llm_env,
    no_semantic_env,
    scripted,
    write_notes,
)

import lore
from lore.errors import QueryError
from lore.retrieve.hybrid import gather, mode_weights
from lore.retrieve.plan import heuristic_plan
from lore.retrieve.query import plan
from lore.retrieve.search import Filters, SearchOptions, prune


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault")


def _chat_calls(script: Script) -> int:
    return script.count("/v1/chat/completions")


def test_mode4_without_providers(vault_dir: Path) -> None:
    with lore.open(vault_dir) as vault:
        vault.sync()
        status = vault.status()
        assert status.mode == "mode4"
        assert "LORE_EMBED_PROVIDER" in status.capabilities["embeddings"]
        assert "LORE_LLM_PROVIDER" in status.capabilities["llm"]
        hits = vault.search("Eiffel tower", explain=True)
        assert hits.mode == "mode4" and hits[0].mode == "mode4"
        assert hits[0].path == "travel/paris.md"
        channels = hits[0].explain.channels
        assert "fts" in channels and "vec" not in channels
        assert channels["fts"]["weighted"] == pytest.approx(0.6)
        with pytest.raises(QueryError, match="mode3 needs a part"):
            vault.search("tower", mode="mode3")


def test_mode1_with_both_and_lower_modes_on_request(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url)
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        report = vault.sync()
        assert not report.notices
        assert vault.mode == "mode1"
        tags = vault.note("travel/paris.md")["derived_tags"]
        assert {"tag": "llm:Eiffel Tower", "origin": "llm"} in tags
        assert any(t["origin"] == "heuristic" for t in tags)
        hits = vault.search("where is the Eiffel tower", explain=True)
        assert hits.mode == "mode1" and hits[0].path == "travel/paris.md"
        explain = hits[0].explain
        assert explain.planner == "llm" and "Eiffel" in explain.query_tags
        assert {"fts", "vec", "tag_vec", "tag_lex"} <= set(explain.channels)
        calls = _chat_calls(script)
        vault.search("where is the Eiffel tower")
        assert _chat_calls(script) == calls  # the plan came from the cache
        for mode in ("mode2", "mode3", "mode4"):
            result = vault.search("where is the Eiffel tower", mode=mode, explain=True)
            assert result.mode == mode and result[0].path == "travel/paris.md"
            assert ("vec" in result[0].explain.channels) == (mode == "mode3")
            assert result[0].explain.planner == ("llm" if mode == "mode2" else "heuristic")
        rrf = vault.search("Eiffel", fusion="rrf")
        assert rrf[0].path == "travel/paris.md"


def test_llm_tags_are_cached_across_rebuild(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        assert vault.mode == "mode2"
        assert len(script.chats("tags")) == 3  # one per note
        calls = _chat_calls(script)
        vault.rebuild()
        vault.sync()
        assert _chat_calls(script) == calls  # re-indexing never calls it again
        derived = vault.note("pets/cat.md")["derived_tags"]
        assert {"tag": "llm:宠物猫", "origin": "llm"} in derived


def test_llm_prose_falls_back_to_heuristics_once(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        script.chat_mode = "prose"
        report = vault.sync()
        assert report.added and len(report.notices) == 1
        assert (
            "llm unavailable" in report.notices[0] and "prose instead of JSON" in report.notices[0]
        )
        assert vault.mode == "mode4"
        hits = vault.search("Eiffel tower", explain=True)
        assert hits.mode == "mode4" and hits.notices == []  # already told
        assert hits[0].explain.planner == "heuristic"
    with lore.open(vault_dir) as vault:  # a new session tries again, and is told again
        script.chat_mode = "prose"
        hits = vault.search("Eiffel tower")
        assert hits.mode == "mode4" and len(hits.notices) == 1
        assert hits[0].path == "travel/paris.md"
        assert vault.search("Eiffel tower").notices == []


@pytest.mark.parametrize("fault", ["500", "json", "dim", "slow"])
def test_search_fault_finishes_in_the_lower_mode(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url, LORE_EMBED_TIMEOUT="0.3")
    with lore.open(vault_dir) as vault:
        vault.sync()
        assert vault.mode == "mode3"
    with lore.open(vault_dir) as vault:
        script.fault = fault
        hits = vault.search("Eiffel tower")
        assert hits.mode == "mode4" and hits[0].path == "travel/paris.md"
        assert len(hits.notices) == 1 and "embeddings unavailable" in hits.notices[0]
        assert vault.search("cat").notices == []
        stored = vault.store.query("SELECT count(*) FROM vec_texts")[0][0]
        assert stored > 0  # nothing stored is lost


def test_exact_term_is_not_crowded_out_by_vector_hits(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    """60 notes fill the vector channel's candidates; the one note holding the exact id
    still enters the pool through the fts channel (a peer that filled its pool with vector
    hits first lost 4 of 5 exact matches), and fusion sees its scores from every channel."""
    filler = "# Tower notes {}\n\ntower tower paris tower\n"
    notes = {f"filler/{i:02d}.md": filler.format(i) for i in range(60)}
    notes["tickets/jira.md"] = "# Incident\n\nRoot cause filed as JIRA-4711 yesterday.\n"
    vault_dir = write_notes(tmp_path / "v", notes)
    url, _script = scripted
    embed_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        caps = vault.capabilities
        query = "tower paris JIRA-4711"
        splan = heuristic_plan(query)
        vectors = caps.embedder().embed([splan.refine, ", ".join(splan.tags)], "query")
        weights = mode_weights(caps, "mode3")
        with vault.store.snapshot():
            qplan, _dropped = prune(vault.store, plan(query), 0.1)
            found = gather(
                caps, qplan, splan, Filters(), SearchOptions(), weights, vectors, pool=40
            )
        jira = next(n for n, p in found.order_key.items() if p == "tickets/jira.md")
        assert jira not in found.sources["vec"]  # the vector channel's 40 are all fillers
        assert found.sources["fts"][0] == jira  # the exact id is the fts channel's best
        assert jira in found.pool and jira in found.raw["vec"]  # scored by every channel
        hits = vault.search(query, limit=61, explain=True)
        assert hits.mode == "mode3" and "tickets/jira.md" in [h.path for h in hits]
        assert vault.search(query, mode="mode4")[0].path == "tickets/jira.md"
