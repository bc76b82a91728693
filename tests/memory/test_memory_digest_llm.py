"""The LLM path of `digest`: a real scripted chat server on 127.0.0.1, the CLI in a real
process pointed at it by LORE_LLM_*. The answer is used, grounded and cached (a second run
asks nothing and changes no byte); any failure falls back to the heuristic extractor with
one notice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from backend_support import child_env
from click.testing import CliRunner
from conftest import first_index
from hypothesis import given
from hypothesis import strategies as st
from memory_support import ChatScript, chat_server, digest_answer, write

import lore
from lore.cli import main
from lore.index.grounding import _ELLIPSIS, _QUOTES, MIN_EVIDENCE, _units, normalise, quoted
from lore.memory.digest import read_transcript
from lore.memory.digest_llm import DIGEST_PROMPT_VERSION, DIGEST_SYSTEM, MAX_ITEMS, validate
from lore.memory.extract import extract
from lore.providers.base import ProviderError

MakeVault = Callable[..., Path]
MODEL = "scripted-chat"
METHOD = f"llm:openai:{MODEL}"
LLM_ENV = (
    "LORE_LLM_PROVIDER",
    "LORE_LLM_BASE_URL",
    "LORE_LLM_MODEL",
    "LORE_LLM_TIMEOUT",
    "LORE_LLM_BACKOFF",
)

SESSION = "\n".join(
    json.dumps(line, ensure_ascii=False)
    for line in [
        {"role": "user", "content": "Which cache?", "timestamp": "2026-11-18T09:00:00+08:00"},
        {"role": "assistant", "content": "The load test shows Redis Cluster at 3 ms p99."},
        {"role": "user", "content": "OK, we go with Redis Cluster for the session store."},
        {"role": "user", "content": "Ask ops about the machine budget by Friday."},
        {"role": "assistant", "content": "Last time we shipped without a load test."},
    ]
)
GOOD = digest_answer(
    decisions=[("Redis Cluster is the session store.", "we go with Redis Cluster")],
    conclusions=[("Redis Cluster has 3 ms p99 in the load test.", "Redis Cluster at 3 ms p99")],
    open_items=[("Ask ops about the machine budget by Friday.", "machine budget by Friday")],
    lessons=[("Never ship without a load test.", "shipped without a load test")],
)


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in os.environ:
        if name.startswith("LORE_") and name != "LORE_DB":  # LORE_DB: this test's backend
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[tuple[str, ChatScript]]:
    with chat_server() as running:
        yield running


@pytest.fixture
def root(make_vault: MakeVault, on_backend: str) -> Path:
    """The memory vault, indexed on SQLite or on PostgreSQL: each test that uses it runs on
    both (the answers' validation below runs once)."""
    return first_index(write(make_vault()))


def llm_env(url: str) -> dict[str, str]:
    return child_env(
        LORE_LLM_PROVIDER="openai",
        LORE_LLM_BASE_URL=url,
        LORE_LLM_MODEL=MODEL,
        LORE_LLM_TIMEOUT="5",
        LORE_LLM_BACKOFF="0",  # the retries are still made, without sleeping
    )


def lore_cli(url: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lore", *map(str, args)],
        capture_output=True,
        text=True,
        env=llm_env(url),
        timeout=120,
    )


def digest_cli(url: str, root: Path, source: Path, *extra: str) -> tuple[dict[str, Any], str]:
    done = lore_cli(url, "digest", source, "--vault", root, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def notices(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("lore: notice: ")]


def heuristic_items(data: str) -> dict[str, list[str]]:
    return extract(read_transcript(data, "x")[0])


def session_file(tmp_path: Path, data: str = SESSION, name: str = "session.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(data, encoding="utf-8")
    return path


def test_llm_answer_is_used_then_never_asked_again(
    server: tuple[str, ChatScript], root: Path, tmp_path: Path
) -> None:
    url, script = server
    script.digest = [GOOD]
    source = session_file(tmp_path)
    report, stderr = digest_cli(url, root, source)
    assert report["created"] and report["method"] == METHOD and not report["dropped"]
    assert report["items"]["decisions"] == ["Redis Cluster is the session store."]
    assert report["items"]["lessons"] == ["Never ship without a load test."]
    assert not notices(stderr)
    asked = script.digest_requests()
    assert len(asked) == 1
    assert asked[0]["model"] == MODEL and asked[0]["messages"][0]["content"] == DIGEST_SYSTEM
    assert "we go with Redis Cluster" in asked[0]["messages"][1]["content"]
    note = root / report["path"]
    text = note.read_text(encoding="utf-8")
    assert "- [ ] Ask ops about the machine budget by Friday." in text
    assert text.rstrip().endswith(f"status: claimed · extractor: {METHOD}")
    before, served = note.read_bytes(), len(script.requests)

    again, stderr = digest_cli(url, root, source)
    assert not again["created"] and "digested before" in again["reason"]
    assert len(script.requests) == served and not notices(stderr)
    assert note.read_bytes() == before

    # The answer is cached by (input hash, model, prompt version): with the section gone
    # from the files and the index, digesting again writes the same bytes and asks nothing.
    note.unlink()
    assert lore_cli(url, "index", "--vault", root).returncode == 0
    redone, _ = digest_cli(url, root, source)
    assert redone["created"] and redone["method"] == METHOD
    assert note.read_bytes() == before and len(script.requests) == served
    with lore.open(root) as vault:
        rows = vault.store.query("SELECT task, model, prompt_version FROM llm_cache")
    assert ("digest", f"openai:{MODEL}", DIGEST_PROMPT_VERSION) in [tuple(r) for r in rows]


def test_prose_answer_falls_back_with_one_notice(
    server: tuple[str, ChatScript], root: Path, tmp_path: Path
) -> None:
    url, script = server
    script.digest = ["Sure! The team picked Redis Cluster and has a budget question."]
    report, stderr = digest_cli(url, root, session_file(tmp_path))
    assert report["created"] and report["method"] == "heuristic"
    assert report["items"] == heuristic_items(SESSION)
    told = notices(stderr)
    assert len(told) == 1 and "heuristic extractor" in told[0]
    assert "prose instead of JSON" in told[0] and MODEL in told[0]
    assert report["notices"] == [told[0].removeprefix("lore: notice: ")]
    # One question, then the LLM is off for the session: no tag requests after the sync.
    assert len(script.requests) == len(script.digest_requests()) == 1
    text = (root / report["path"]).read_text(encoding="utf-8")
    assert text.rstrip().endswith("extractor: heuristic")


def test_http_500_falls_back(server: tuple[str, ChatScript], root: Path, tmp_path: Path) -> None:
    url, script = server
    script.fallback = 500
    report, stderr = digest_cli(url, root, session_file(tmp_path))
    assert report["created"] and report["method"] == "heuristic"
    assert report["items"] == heuristic_items(SESSION)
    told = notices(stderr)
    assert len(told) == 1 and "HTTP 500" in told[0] and "/chat/completions" in told[0]
    assert len(script.digest_requests()) == 3  # the provider's two retries, then fallback


def test_no_llm_flag_asks_nothing(
    server: tuple[str, ChatScript], root: Path, tmp_path: Path
) -> None:
    url, script = server
    args = ["digest", str(session_file(tmp_path)), "--no-llm", "--vault", str(root), "--json"]
    done = CliRunner().invoke(main, args, env=llm_env(url))
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["method"] == "heuristic" and report["items"] == heuristic_items(SESSION)
    assert not script.digest_requests() and not notices(done.stderr)


def test_chinese_transcript(
    monkeypatch: pytest.MonkeyPatch, server: tuple[str, ChatScript], root: Path
) -> None:
    url, script = server
    data = "\n".join(
        json.dumps(line, ensure_ascii=False)
        for line in [
            {"role": "user", "content": "灰度结果怎么样？", "timestamp": "2026-11-19T10:00:00"},
            {"role": "assistant", "content": "误合并率降到 0.3%，根因是手机号没做归一。"},
            {"role": "user", "content": "那就拍板：下周一全量上线客户去重 v2。"},
            {"role": "user", "content": "张三负责周五前补齐回滚预案。"},
        ]
    )
    script.digest = [
        digest_answer(
            decisions=[("下周一全量上线客户去重 v2。", "下周一全量上线客户去重 v2")],
            conclusions=[("误合并率降到 0.3%，根因是手机号没做归一。", "根因是手机号没做归一")],
            open_items=[("张三周五前补齐回滚预案。", "张三负责周五前补齐回滚预案")],
        )
    ]
    with open_with_llm(monkeypatch, root, url) as vault:
        report = vault.digest(data, name="灰度.jsonl")
        hit = vault.lookup("回滚预案").hits[0]
    assert report.method == METHOD and report.date == "2026-11-19"
    assert report.items["decisions"] == ["下周一全量上线客户去重 v2。"]
    assert report.items["open_items"] == ["张三周五前补齐回滚预案。"]
    assert not report.dropped and not report.notices
    assert "误合并率降到 0.3%" in script.digest_requests()[0]["messages"][1]["content"]
    text = (root / "memory/2026-11-19.md").read_text(encoding="utf-8")
    assert "## Digest · 灰度.jsonl {#d-" in text and "- [ ] 张三周五前补齐回滚预案。" in text
    assert hit.path == "memory/2026-11-19.md"


# -- in-process: grounding, shapes, an endpoint that is down --------------------------------


def open_with_llm(monkeypatch: pytest.MonkeyPatch, root: Path, url: str) -> lore.Vault:
    for key, value in llm_env(url).items():
        if key in LLM_ENV:
            monkeypatch.setenv(key, value)
    return lore.open(root)


def test_ungrounded_items_are_dropped(
    monkeypatch: pytest.MonkeyPatch, server: tuple[str, ChatScript], root: Path
) -> None:
    url, script = server
    script.digest = [
        digest_answer(
            decisions=[
                ("Redis Cluster is the session store.", "we go with Redis Cluster"),
                ("Memcached replaces Redis.", "we picked Memcached"),  # evidence made up
            ],
            conclusions=[("Redis Cluster has 9 ms p99.", "Redis Cluster at 3 ms p99")],  # 9
            lessons=[("Quarterly revenue doubled in Europe.", "without a load test")],
        )
    ]
    with open_with_llm(monkeypatch, root, url) as vault:
        report = vault.digest(SESSION, name="s.jsonl")
    assert report.method == METHOD and report.created and not report.notices
    assert report.items["decisions"] == ["Redis Cluster is the session store."]
    assert not report.items["conclusions"] and not report.items["lessons"]
    why = {d["text"]: d["why"] for d in report.dropped}
    assert why == {
        "Memcached replaces Redis.": "its evidence is not a quote of the input",
        "Redis Cluster has 9 ms p99.": "'9' is not in the input",
        "Quarterly revenue doubled in Europe.": "most of its words are not in the input",
    }
    text = (root / report.path).read_text(encoding="utf-8")
    assert "Memcached" not in text and "9 ms" not in text and "revenue" not in text


def test_an_answer_with_nothing_grounded_is_not_used(
    monkeypatch: pytest.MonkeyPatch, server: tuple[str, ChatScript], root: Path
) -> None:
    url, script = server
    script.digest = [digest_answer(decisions=[("We bought a boat.", "we bought a boat")])]
    with open_with_llm(monkeypatch, root, url) as vault:
        report = vault.digest(SESSION, name="s.jsonl")
    assert report.method == "heuristic" and report.items == heuristic_items(SESSION)
    assert len(report.notices) == 1 and "none of its 1 digest item(s)" in report.notices[0]


@pytest.mark.parametrize(
    ("answer", "named"),
    [
        ('{"decisions": "Redis"}', "decisions is not a list"),
        ('{"decisions": [], "summary": "x"}', "unexpected key 'summary'"),
        ('{"decisions": ["Redis Cluster"]}', "decisions[0]: expected an object"),
        ('{"lessons": [{"text": "x"}]}', "lessons[0].evidence"),
        ("[1, 2]", "not an object"),
    ],
)
def test_answers_out_of_shape_fall_back(
    monkeypatch: pytest.MonkeyPatch,
    server: tuple[str, ChatScript],
    root: Path,
    answer: str,
    named: str,
) -> None:
    url, script = server
    script.digest = [answer]
    with open_with_llm(monkeypatch, root, url) as vault:
        report = vault.digest(SESSION, name="s.jsonl")
        assert report.method == "heuristic" and report.created
        assert len(report.notices) == 1 and named in report.notices[0]
        # Told once: the LLM is off for the rest of the session, the next digest is quiet.
        later = vault.digest("We decided to keep the old cron job.", name="t.txt")
        assert later.method == "heuristic" and not later.notices
    assert len(script.digest_requests()) == 1


def test_endpoint_down_falls_back(
    monkeypatch: pytest.MonkeyPatch, root: Path, unused_url: str
) -> None:
    monkeypatch.setenv("LORE_LLM_TIMEOUT", "2")
    with open_with_llm(monkeypatch, root, unused_url) as vault:
        report = vault.digest(SESSION, name="s.jsonl")
    assert report.method == "heuristic" and report.created
    assert len(report.notices) == 1 and "unreachable" in report.notices[0]


@pytest.fixture
def unused_url() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# -- the validator and the grounding as parsers -----------------------------------------------


def test_validate_limits() -> None:
    item = {"text": "t", "evidence": "e"}
    assert validate({})["decisions"] == []
    with pytest.raises(ProviderError, match="at most 10"):
        validate({"decisions": [item] * (MAX_ITEMS + 1)})
    with pytest.raises(ProviderError, match="at most 300"):
        validate({"lessons": [{"text": "x" * 301, "evidence": "e"}]})
    with pytest.raises(ProviderError, match="unexpected key 'why'"):
        validate({"lessons": [{**item, "why": "w"}]})


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)
KEYS = st.sampled_from(["decisions", "conclusions", "open_items", "lessons", "text", "x"])


@given(st.dictionaries(KEYS, JSON | st.lists(st.dictionaries(KEYS, JSON), max_size=3)))
def test_validate_accepts_one_shape_and_refuses_the_rest_cleanly(answer: dict[str, Any]) -> None:
    try:
        shape = validate(answer)
    except ProviderError as exc:
        assert "\n" not in str(exc)
        return
    assert set(shape) == {"decisions", "conclusions", "open_items", "lessons"}
    assert all(set(i) == {"text", "evidence"} for items in shape.values() for i in items)


@given(st.text(min_size=1, max_size=200), st.integers(0, 200), st.integers(0, 60))
def test_a_real_quote_is_grounded_when_long_enough(material: str, start: int, size: int) -> None:
    text = normalise(material)
    piece = text[start : start + size]
    parts = [p.strip(_QUOTES) for p in _ELLIPSIS.split(piece)]
    assert quoted(piece, text) == (sum(_units(p) for p in parts if p) >= MIN_EVIDENCE)
