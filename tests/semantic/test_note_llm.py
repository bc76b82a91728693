"""Note fields by the LLM (issue 19): a summary, key claims and a category per note, from a
real scripted OpenAI-compatible server on 127.0.0.1 that counts requests. Cached (a second
sync, a rebuild: no request; one edited note: exactly its calls), capped by a call
budget, long notes asked in parts (head parts, the tail, one synthesis: in that order),
nothing kept that is not grounded in the note, and every failure falling back to the
heuristic fields with one notice, never failing the sync, never losing the cache. On both
backends (SQLite and PostgreSQL: the same fields, the same answers; issue 15)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from conftest import dump_index, scripted_note_answer
from semantic_support import (  # noqa: F401 - fixtures
    Script,
    closed_port_url,
    embed_env,
    llm_env,
    no_semantic_env,
    scripted,
)

import lore
from lore.cli import main
from lore.derive.summary import long_summary
from lore.providers.openai_compat import Endpoint, OpenAIChat

pytestmark = pytest.mark.usefixtures("on_backend")  # every vault opened here, both backends

CONFIG = '[lore]\ncategories = ["规则", "Travel", "宠物"]\n'
SHORT = {
    "rules/dedup.md": (
        "---\ntitle: 客户去重规则\n---\n同一手机号视为同一客户，合并时保留最早的记录。"
        "规则 v2 从 2026-03-01 起生效。\n"
    ),
    "travel/paris.md": (
        "# Eiffel Tower\n\nThe Eiffel Tower is a wrought iron tower in Paris. It is 330 metres"
        " tall. Travel guides call it the symbol of France.\n"
    ),
    "pets/cat.md": "# 宠物猫\n\n猫是一种常见的宠物，喜欢吃鱼，也喜欢睡觉。\n",
}


def long_note(paragraphs: int = 8) -> str:
    """A note far longer than one request: numbered paragraphs, each of distinct sentences."""
    body = "\n\n".join(
        " ".join(
            f"Stage {p} step {s} of project Atlas moved budget line {p * 100 + s} forward."
            for s in range(1, 25)
        )
        for p in range(1, paragraphs + 1)
    )
    return f"# Atlas log\n\n{body}\n"


def make(root: Path, notes: dict[str, str], config: str = CONFIG) -> Path:
    for rel, text in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / ".lore").mkdir(parents=True, exist_ok=True)
    (root / ".lore" / "config.toml").write_text(config, encoding="utf-8")
    return root


def derived(vault_dir: Path, backend: str) -> dict[str, Any]:
    """What the index derived from the files, keyed by note path (`dump_index` on SQLite;
    on PostgreSQL the notes, their fields, full-text documents and frequencies)."""
    if backend == "sqlite":
        return dump_index(vault_dir / ".lore" / "index.sqlite")
    with lore.open(vault_dir) as vault:
        rows = vault.store.query
        return {
            "notes": rows(
                "SELECT path, title, date, hash, frontmatter, headings, summary, body FROM notes"
                " ORDER BY path"
            ),
            "note_llm": rows(
                "SELECT n.path, l.note_hash, l.version, l.model, l.state, l.reason, l.summary,"
                " l.claims, l.category, l.category_key, l.dropped, l.calls FROM note_llm l"
                " JOIN notes n ON n.id = l.note_id ORDER BY n.path"
            ),
            "lex_docs": rows(
                "SELECT n.path, d.len, d.title, d.tags, d.summary, d.body FROM lex_docs d"
                " JOIN notes n ON n.id = d.note_id ORDER BY n.path"
            ),
            "term_df": rows("SELECT term, df FROM term_df ORDER BY term"),
        }


def drop_index(vault_dir: Path, backend: str) -> None:
    """The index goes (and the model-answer cache with it): a file, or the vault's schema."""
    if backend == "sqlite":
        for leftover in (vault_dir / ".lore").glob("index.sqlite*"):
            leftover.unlink()
        return
    with lore.open(vault_dir) as vault:
        store: Any = vault.store
        store.execute(f"DROP SCHEMA {store.namespace} CASCADE")


def notes_asked(script: Script) -> list[str]:
    """The user message of every note-field request, in order."""
    return [str(r["messages"][1]["content"]) for r in script.chats("note")]


def llm_row(vault: lore.Vault, path: str) -> dict[str, Any]:
    rows = vault.store.query(
        "SELECT l.state, l.summary, l.claims, l.category, l.dropped, l.reason FROM note_llm l"
        " JOIN notes n ON n.id = l.note_id WHERE n.path = ?",
        [path],
    )
    assert rows, f"no row for {path}"
    state, summary, claims, category, dropped, reason = rows[0]
    return {
        "state": state,
        "summary": summary,
        "claims": json.loads(claims),
        "category": category,
        "dropped": json.loads(dropped),
        "reason": reason,
    }


def cache_rows(vault: lore.Vault) -> int:
    return int(vault.store.query("SELECT count(*) FROM llm_cache")[0][0])


def quick_chat(url: str, timeout: float = 5.0) -> OpenAIChat:
    """The OpenAI-compatible chat provider with no retries and no backoff: a failure is
    seen at once (no sleeping in tests)."""
    return OpenAIChat(Endpoint(url, "scripted-chat", timeout=timeout, retries=0, backoff=0.0))


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    return make(tmp_path / "vault", SHORT)


# -- made once, cached, rebuilt from the cache ------------------------------------------


def test_fields_are_made_once_and_rebuilt_from_the_cache(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        report = vault.sync()
        assert not report.notices
        assert report.llm is not None and report.llm["notes"] == 3 and report.llm["calls"] == 3
        assert len(notes_asked(script)) == 3  # one request per short note
        paris = vault.note("travel/paris.md")
        assert paris["summary_source"] == "llm"
        assert paris["summary"].startswith("The Eiffel Tower is a wrought iron tower")
        assert paris["claims"][0]["text"].startswith("The Eiffel Tower is a wrought iron")
        assert paris["category"] == "Travel"
        assert vault.note("pets/cat.md")["category"] == "宠物"
        # The summary is the note's summary field in full text.
        hits = vault.search("symbol of France", explain=True)
        assert hits[0].path == "travel/paris.md"
        assert hits[0].claims and hits[0].category == "Travel"
        requests = len(script.requests)
        again = vault.sync()
        assert again.llm is not None and again.llm["calls"] == 0
        assert len(script.requests) == requests  # a second sync asks nothing
    before = derived(vault_dir, backend)
    with lore.open(vault_dir) as vault:
        vault.rebuild()
        assert len(script.requests) == requests  # a rebuild asks nothing either
    assert derived(vault_dir, backend) == before
    assert not list(vault_dir.rglob("*.md.*"))  # nothing written beside the notes
    assert (vault_dir / "pets" / "cat.md").read_text(encoding="utf-8") == SHORT["pets/cat.md"]


def test_postgresql_ranks_the_fields_as_fts5_does(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    # The summary and claims are the `summary` field of the full text on both backends: the
    # same text gives the same BM25 scores, note for note, as the index file's FTS5.
    if backend == "sqlite":
        pytest.skip("compares PostgreSQL's index with an index file")
    url, script = scripted
    llm_env(monkeypatch, url)
    queries = ("symbol of France", "wrought iron", "客户 记录", "宠物 睡觉", "330 metres tall")
    ranked = []
    for db in (None, vault_dir.parent / "file.sqlite"):
        with lore.open(vault_dir, db=db) as vault:
            vault.sync()
            assert vault.llm_status()["notes"] == 3
            ranked.append(
                [
                    [
                        (h.path, round(h.score, 6), h.explain.fields if h.explain else None)
                        for h in vault.search(q, mode="mode4", explain=True)
                    ]
                    for q in queries
                ]
            )
            [(indexed,)] = vault.store.query(
                "SELECT summary FROM notes WHERE path = 'travel/paris.md'"
            )
            assert indexed.count("\n") == 2  # the summary, then its two claims
    assert len(notes_asked(script)) == 6  # each index keeps its own cache: the same answers
    assert all(ranked[0]) and ranked[0] == ranked[1]


def test_the_index_reads_the_summary_then_the_claims(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 300-character summary alone covers less of a long note than head and tail do
    # (bench.llm_summary): the index's summary text is the model's summary, then its
    # claims, one a line; `lore show` shows the summary and the claims apart.
    url, script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        paris = vault.note("travel/paris.md")
        claims = [c["text"] for c in paris["claims"]]
        assert claims and paris["summary"] == llm_row(vault, "travel/paris.md")["summary"]
        [(indexed,)] = vault.store.query("SELECT summary FROM notes WHERE path = 'travel/paris.md'")
        assert indexed == "\n".join([paris["summary"], *claims])
        again = vault.sync()
        assert again.llm is not None and again.llm["restored"] == 0
        # An index that holds the summary alone (made before the claims joined) is
        # brought up to date by the next sync, without asking the model.
        with vault.store.transaction():
            vault.store.execute(
                "UPDATE notes SET summary = ? WHERE path = 'travel/paris.md'",
                (paris["summary"],),
            )
        requests = len(script.requests)
        fixed = vault.sync()
        assert fixed.llm is not None and fixed.llm["restored"] == 1
        assert len(script.requests) == requests
        assert vault.note("travel/paris.md")["summary"] == paris["summary"]


def test_editing_one_note_makes_exactly_its_calls(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        asked = len(notes_asked(script))
        (vault_dir / "pets" / "cat.md").write_text(
            "# 宠物猫\n\n猫喜欢晒太阳，每天睡十四个小时。\n", encoding="utf-8"
        )
        vault.sync()
        new = notes_asked(script)[asked:]
        assert len(new) == 1 and "每天睡十四个小时" in new[0]
        assert "十四个小时" in vault.note("pets/cat.md")["summary"]
        # Back to the first text: its answer is still cached.
        (vault_dir / "pets" / "cat.md").write_text(SHORT["pets/cat.md"], encoding="utf-8")
        vault.sync()
        assert len(notes_asked(script)) == asked + 1


def test_long_note_parts_are_asked_head_first_then_tail_then_synthesis(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    config = CONFIG + "llm_context_tokens = 2400\nllm_summary_chars = 200\nllm_claims = 4\n"
    root = make(tmp_path / "vault", {"atlas.md": long_note()}, config)
    with lore.open(root) as vault:
        report = vault.sync()
        asked = notes_asked(script)
        total = int(asked[0].split("\n")[1].split(" of ")[1])
        assert total >= 5  # the head parts, the tail, and parts left out between them
        assert report.llm is not None and report.llm["calls"] == 4 == len(asked)
        assert asked[0].startswith(f"Title: Atlas log\nPart 1 of {total}\n")
        assert asked[1].startswith(f"Title: Atlas log\nPart 2 of {total}\n")
        assert asked[2].startswith(f"Title: Atlas log\nPart {total} of {total}\n")
        assert (
            f"Part 1 of {total} (head)" in asked[3]
            and f"Part {total} of {total} (tail)" in asked[3]
        )
        assert "Stage 8 step 24" in asked[2]  # the tail part holds the end of the note
        note = vault.note("atlas.md")
        assert note["summary_source"] == "llm" and len(note["summary"]) <= 200
        # Claims taken in turn from each part (head, head, tail), then the first part again.
        first, second, tail, again = (c["text"] for c in note["claims"])
        assert first.startswith("Stage 1 step 1 ") and again.startswith("Stage 1 step 2 ")
        assert second in asked[1] and tail in asked[2] and "Stage 8" in tail
        assert vault.llm_status()["pending_calls"] == 0
        vault.rebuild()
        assert len(notes_asked(script)) == 4


def test_call_budget_caps_each_sync_and_the_rest_follow(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    notes = {f"n{i}.md": f"# Note {i}\n\nFact {i}: the value is {i * 7}.\n" for i in range(5)}
    root = make(tmp_path / "vault", notes)
    runner = CliRunner()
    seen: list[int] = []
    for expected_pending in (3, 1):
        before = len(script.chats())
        done = runner.invoke(main, ["index", str(root), "--llm-budget", "2", "--json"])
        assert done.exit_code == 0, done.output
        data = json.loads(done.stdout)
        assert len(script.chats()) - before == 2  # every model call counts: fields, tags
        assert data["llm"]["calls"] == 2 and data["llm"]["pending"] == expected_pending
        seen.append(data["llm"]["notes"])
    assert seen == [2, 2]
    with lore.open(root) as vault:
        assert vault.llm_status()["pending_notes"] == 1
        progress: list[tuple[int, int]] = []
        report = vault.sync(llm_progress=lambda d, t, _p: progress.append((d, t)))
        assert report.llm is not None and report.llm["pending"] == 0
        assert progress[0] == (0, 1) and progress[-1] == (1, 1)
        assert all(d <= t for d, t in progress)
        assert vault.llm_status()["notes"] == 5


def test_budget_zero_makes_no_call_but_uses_the_cache(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
    drop_index(vault_dir, backend)  # the cache goes with the index...
    with lore.open(vault_dir) as vault:
        before = len(script.requests)
        report = vault.sync(llm_budget=0)
        assert len(script.requests) == before  # ...so nothing can be made without a call
        assert report.llm is not None and report.llm["pending"] == 3
        assert "wait for the next sync (call budget 0 spent)" in " ".join(report.notices)
        status = vault.llm_status()
        assert status["pending_notes"] == 3 and status["pending_calls"] == 3
        assert status["budget"] is None and status["cache"]["entries"] == 0


# -- grounding ---------------------------------------------------------------------------


def test_ungrounded_statements_are_dropped_and_counted(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)

    def invent(system: str, user: str) -> str:
        if "Eiffel" not in user:
            return json.dumps({"summary": "", "claims": [], "category": None})
        return json.dumps(
            {
                "summary": "The tower is 999 metres tall.",  # a number not in the note
                "claims": [
                    {"text": "The tower is in Paris.", "evidence": "wrought iron tower in Paris"},
                    {"text": "The tower is made of wood.", "evidence": "made of oak wood"},
                    {"text": "It opened in 1889.", "evidence": "It is 330 metres tall"},
                ],
                "category": "Architecture",  # not a configured category
            }
        )

    script.note_answer = invent
    with lore.open(vault_dir) as vault:
        report = vault.sync()
        assert report.llm is not None and report.llm["dropped"] == 4
        assert any("4 ungrounded statement(s) left out" in n for n in report.notices)
        assert len(report.notices) == 1
        row = llm_row(vault, "travel/paris.md")
        assert row["state"] == "llm" and row["summary"] is None and row["category"] is None
        assert [c["text"] for c in row["claims"]] == ["The tower is in Paris."]
        whys = {d["what"]: d["why"] for d in row["dropped"]}
        assert "'999' is not in the input" in whys["summary"]
        assert "not one of the configured categories" in whys["category"]
        note = vault.note("travel/paris.md")
        assert note["summary_source"] == "head_tail"
        assert note["summary"] == long_summary(SHORT["travel/paris.md"])


def test_a_note_where_nothing_is_grounded_keeps_its_heuristic_fields(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    script.note_answer = lambda s, u: json.dumps(
        {
            "summary": "Totally unrelated 12345 words here.",
            "claims": [{"text": "Made up.", "evidence": "never written"}],
            "category": None,
        }
    )
    with lore.open(vault_dir) as vault:
        report = vault.sync()
        assert report.llm is not None and len(report.llm["failed"]) == 3
        assert len(report.notices) == 1 and "kept their heuristic fields" in report.notices[0]
        assert "nothing it said is grounded" in report.notices[0]
        assert llm_row(vault, "pets/cat.md")["state"] == "failed"
        assert vault.note("pets/cat.md")["summary_source"] == "head_tail"
        asked = len(notes_asked(script))
        vault.sync()
        assert len(notes_asked(script)) == asked  # recorded: not paid for again


# -- failures ----------------------------------------------------------------------------


def test_prose_for_one_note_fails_that_note_only(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)

    def answer(system: str, user: str) -> str | int:
        if "宠物猫" in user:
            return "Sure! This note is about a cat."
        return scripted_note_answer(system, user)

    script.note_answer = answer
    with lore.open(vault_dir) as vault:
        report = vault.sync()
        assert report.llm is not None and report.llm["notes"] == 2
        prose = "answered prose instead of JSON: 'Sure! This note is about a cat.'"
        assert report.llm["failed"] == [
            {"path": "pets/cat.md", "why": f"LLM openai:scripted-chat {prose}"}
        ]
        assert len(report.notices) == 1 and "pets/cat.md" in report.notices[0]
        assert vault.mode == "mode2"  # the LLM still works for the rest
        assert vault.note("pets/cat.md")["summary_source"] == "head_tail"
        assert vault.note("rules/dedup.md")["summary_source"] == "llm"
        asked = len(notes_asked(script))
        assert not vault.sync().notices
        assert len(notes_asked(script)) == asked  # the failure is recorded, not re-asked


def test_retry_asks_again_for_the_failed_notes_only(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`lore llm retry` forgets the recorded failures (all, or under --path) and syncs: the
    failed notes are asked again, the others are not; a second retry has nothing to do."""
    url, script = scripted
    llm_env(monkeypatch, url)
    script.note_answer = lambda s, u: (
        "Sure! A note." if "宠物猫" in u or "Eiffel" in u else scripted_note_answer(s, u)
    )
    with lore.open(vault_dir) as vault:
        failed = vault.sync().llm
        assert failed is not None
        assert [f["path"] for f in failed["failed"]] == ["pets/cat.md", "travel/paris.md"]
    script.note_answer = scripted_note_answer  # the model answers well now
    runner = CliRunner()
    asked = len(notes_asked(script))
    only = runner.invoke(main, ["llm", "retry", "--path", "pets/", "--vault", str(vault_dir)])
    assert only.exit_code == 0, only.output
    assert "1 note(s) asked again: 1 now have LLM fields, 0 failed again" in only.output
    assert ["宠物猫" in m for m in notes_asked(script)[asked:]] == [True]  # the cat only
    with lore.open(vault_dir) as vault:
        assert llm_row(vault, "pets/cat.md")["state"] == "llm"
        assert llm_row(vault, "travel/paris.md")["state"] == "failed"  # not under pets/
        rest = vault.retry_llm_fields()
        assert rest.retried == ["travel/paris.md"]
        assert rest.states == {"travel/paris.md": "llm"}
        assert vault.note("travel/paris.md")["summary_source"] == "llm"
        asked = len(notes_asked(script))
        assert vault.retry_llm_fields().retried == []
        assert len(notes_asked(script)) == asked
    none = runner.invoke(main, ["llm", "retry", "--vault", str(vault_dir), "--json"])
    assert none.exit_code == 0 and json.loads(none.output) == {
        "retried": [],
        "states": {},
        "sync": None,
    }


@pytest.mark.parametrize("fault", ["prose", "500", "timeout", "down"])
def test_failures_fall_back_never_fail_the_sync_never_lose_the_cache(
    vault_dir: Path, scripted: tuple[str, Script], fault: str
) -> None:
    url, script = scripted
    with lore.open(vault_dir) as vault:
        vault.capabilities.use(chat=quick_chat(url))
        vault.sync()  # every note has its fields; the answers are cached
        kept = cache_rows(vault)
        claims = vault.note("travel/paris.md")["claims"]
    for rel in SHORT:  # every note changes: every note needs new answers
        path = vault_dir / rel
        path.write_text(path.read_text(encoding="utf-8") + "\nEdited 2026.\n", encoding="utf-8")
    faults: dict[str, Callable[[str, str], str | int]] = {
        "prose": lambda s, u: "I would be happy to summarise this note for you!",
        "500": lambda s, u: 500,
        "timeout": lambda s, u: "slow",
        "down": lambda s, u: 500,
    }
    script.note_answer = faults[fault]
    where = closed_port_url() if fault == "down" else url
    with lore.open(vault_dir) as vault:
        vault.capabilities.use(chat=quick_chat(where, timeout=0.05 if fault == "timeout" else 5))
        report = vault.sync()  # never raises
        assert sorted(report.changed) == sorted(SHORT)
        assert len(report.notices) == 1 and "llm unavailable" in report.notices[0]
        assert vault.mode == "mode4"
        assert report.llm is not None and report.llm["pending"] == 3  # nobody recorded failed
        for rel in SHORT:
            assert vault.note(rel)["summary_source"] == "head_tail"
        assert vault.search("Eiffel")[0].path == "travel/paris.md"
        assert cache_rows(vault) >= kept  # what was cached is still there
    script.note_answer = None
    with lore.open(vault_dir) as vault:  # a later session with the model back
        vault.capabilities.use(chat=quick_chat(url))
        report = vault.sync()
        assert report.llm is not None and report.llm["notes"] == 3 and not report.notices
        assert vault.note("travel/paris.md")["claims"] == claims


# -- the author's fields win -------------------------------------------------------------


def test_the_authors_summary_and_category_win(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _script = scripted
    llm_env(monkeypatch, url)
    body = "猫是一种常见的宠物，喜欢吃鱼，也喜欢睡觉。\n\n它们每天睡十四个小时。\n"
    own = "title: 猫\nsummary: 作者写的摘要：猫爱睡觉。\ncategory: 规则"
    # What `lore ingest` writes: lore's own head and tail of the body, not the author's.
    lores = "title: 猫二\nsummary: |-\n  " + long_summary(body).replace("\n", "\n  ")
    root = make(
        tmp_path / "vault",
        {"own.md": f"---\n{own}\n---\n{body}", "captured.md": f"---\n{lores}\n---\n{body}"},
        CONFIG + '\n[access]\nguest = ["own.md"]\n',
    )
    with lore.open(root) as vault:
        vault.sync()
        own = vault.note("own.md")
        assert (
            own["summary"] == "作者写的摘要：猫爱睡觉。" and own["summary_source"] == "frontmatter"
        )
        assert own["claims"] and own["category"] == "规则"  # the model said 宠物; the author 规则
        assert llm_row(vault, "own.md")["category"] == "宠物"
        captured = vault.note("captured.md")
        assert captured["summary_source"] == "llm"
        assert vault.status().categories == {"规则": 1, "宠物": 1}
        guest = vault.status(principal="guest")  # counts of what the guest may see only
        assert guest.categories == {"规则": 1} and guest.llm_fields["notes"] == 1
        assert [h.path for h in vault.search("猫", category="规则")] == ["own.md"]
        assert [h.path for h in vault.search("猫", category="宠物")] == ["captured.md"]


# -- where the fields are shown ----------------------------------------------------------


def test_category_filter_and_facet_in_the_cli_and_mcp(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _script = scripted
    llm_env(monkeypatch, url)
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(vault_dir)]).exit_code == 0
    found = runner.invoke(
        main, ["search", "tower", "--category", "travel", "--vault", str(vault_dir), "--json"]
    )
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["hits"]
    assert [h["path"] for h in hits] == ["travel/paris.md"] and hits[0]["category"] == "Travel"
    none = runner.invoke(main, ["search", "tower", "--category", "宠物", "--vault", str(vault_dir)])
    assert "all were filtered out" in none.stdout and "--category" not in none.stderr
    typo = runner.invoke(
        main, ["search", "tower", "--category", "Trave", "--vault", str(vault_dir)]
    )
    assert typo.exit_code == 0 and typo.stderr.count("\n") == 1
    assert "--category 'trave': no note has this category (there are: " in typo.stderr
    assert "Travel" in typo.stderr
    status = runner.invoke(main, ["status", "--vault", str(vault_dir), "--json"])
    data = json.loads(status.stdout)
    assert data["categories"] == {"Travel": 1, "宠物": 1, "规则": 1}
    assert data["llm_fields"]["notes"] == 3
    shown = runner.invoke(main, ["show", "travel/paris.md", "--vault", str(vault_dir)])
    assert "claims: 2" in shown.stdout and "The Eiffel Tower is a wrought iron" in shown.stdout
    assert "summary_source: llm" in shown.stdout
    llm = runner.invoke(main, ["llm", "status", "--vault", str(vault_dir), "--json"])
    info = json.loads(llm.stdout)
    assert info["notes"] == 3 and info["pending_calls"] == 0
    assert info["cache"]["tasks"]["note"]["entries"] == 3 and info["cache"]["bytes"] > 0

    from lore.mcp.server import LoreServer

    async def tools() -> tuple[dict[str, Any], dict[str, Any]]:
        with lore.open(vault_dir) as vault:
            server = LoreServer(vault)
            found = await server.call("search", {"query": "tower", "category": "Travel"})
            read = await server.call("read_note", {"path": "travel/paris.md"})
        return json.loads(found.content[0].text), json.loads(read.content[0].text)  # type: ignore[union-attr]

    search, read = anyio.run(tools)
    assert [h["path"] for h in search["hits"]] == ["travel/paris.md"]
    assert search["hits"][0]["claims"][0].startswith("The Eiffel Tower")
    assert read["summary_source"] == "llm" and read["category"] == "Travel"
    assert read["claims"][0]["evidence"]


def test_hits_explain_which_text_their_vector_came_from(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _script = scripted
    llm_env(monkeypatch, url)
    embed_env(monkeypatch, url)
    config = CONFIG + "llm_context_tokens = 2400\n"
    root = make(tmp_path / "vault", {**SHORT, "atlas.md": long_note()}, config)
    with lore.open(root) as vault:
        vault.sync()
        assert vault.mode == "mode1"
        texts = {
            str(k)
            for (k,) in vault.store.query(
                "SELECT t.kind FROM note_texts t JOIN notes n ON n.id = t.note_id"
                " WHERE n.path = 'atlas.md'"
            )
        }
        assert texts == {"summary", "llm_summary", "passage", "tags"}  # head+tail stays
        said = set()
        for query in ("project Atlas budget", "Eiffel Tower Paris", "宠物猫"):
            for hit in vault.search(query, explain=True, mode="mode3"):
                assert hit.explain is not None and hit.explain.vector_text
                said.add(hit.explain.vector_text)
        assert said <= {
            "the whole note (one passage)",
            "the summary by the LLM (openai:scripted-chat)",
            "the summary: head and tail of the text",
        } | {s for s in said if s.startswith("a passage")}
        assert "the whole note (one passage)" in said


def test_an_index_planned_before_keeps_its_vectors_and_gains_the_head_and_tail(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index whose LLM notes embedded the LLM's summary instead of the head and tail
    (before the two were kept side by side) plans those notes again once, at the next sync:
    no model call, and no other note's texts touched."""
    from lore.derive.passages import note_texts
    from lore.index.note_llm_sync import TEXTS_KEY
    from lore.index.semantic import load_sources, planned

    url, script = scripted
    llm_env(monkeypatch, url)
    config = CONFIG + "llm_context_tokens = 2400\n"
    root = make(tmp_path / "vault", {**SHORT, "atlas.md": long_note()}, config)

    def kinds(vault: lore.Vault, path: str) -> list[str]:
        return [
            str(k)
            for (k,) in vault.store.query(
                "SELECT t.kind FROM note_texts t JOIN notes n ON n.id = t.note_id"
                " WHERE n.path = ? ORDER BY t.kind, t.seq",
                [path],
            )
        ]

    with lore.open(root) as vault:
        vault.sync()
        planned_now = kinds(vault, "atlas.md")
        assert "llm_summary" in planned_now and "summary" in planned_now
        cat = kinds(vault, "pets/cat.md")
        [(nid,)] = vault.store.query("SELECT id FROM notes WHERE path = 'atlas.md'")
        old = load_sources(vault.store, [int(nid)])[int(nid)]
        with vault.store.transaction():  # the plan of before: the LLM's summary alone
            vault.store.write_texts(
                int(nid),
                planned(note_texts(old.title, old.body, old.headings, old.summary, old.tags)),
            )
            vault.store.delete_meta(TEXTS_KEY)
        assert "llm_summary" not in kinds(vault, "atlas.md")
        asked = len(script.chats("note"))
        vault.sync()
        assert kinds(vault, "atlas.md") == planned_now
        assert kinds(vault, "pets/cat.md") == cat
        assert len(script.chats("note")) == asked  # no model call


def test_context_views_carry_the_claims(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _script = scripted
    llm_env(monkeypatch, url)
    with lore.open(vault_dir) as vault:
        vault.sync()
        view = vault.context("Eiffel Tower height", budget=4096)
        assert "key claims (LLM, inferred):" in view.text
        assert "- The Eiffel Tower is a wrought iron tower in Paris." in view.text


def test_fields_off_and_no_llm_make_no_call(
    vault_dir: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    llm_env(monkeypatch, url)
    monkeypatch.setenv("LORE_LLM_FIELDS", "0")
    with lore.open(vault_dir) as vault:
        report = vault.sync()
        assert notes_asked(script) == [] and len(script.chats("tags")) == 3
        assert report.llm is None and not report.notices
        assert vault.llm_status()["fields"] == "off"
    monkeypatch.delenv("LORE_LLM_PROVIDER")
    with lore.open(vault_dir) as vault:
        assert vault.sync().llm is None
        assert vault.llm_status()["model"] is None
