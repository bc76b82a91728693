"""Issue 13, class 7: `lore mcp` over stdio answers every request, even one it cannot
read (a lone surrogate escape, broken JSON), with a JSON-RPC error; a client never waits
for ever. A real subprocess, spoken to line by line. And (class 4) a list argument past
its cap is one line."""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import first_index, isolated_module
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    SAMPLE,
    Sample,
    call_error,
    connect,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

LORE = Path(sys.executable).parent / "lore"
ANSWER_WAIT = 30.0  # only reached when no answer comes: the failure this file is about


class Stdio:
    def __init__(self, vault: Path) -> None:
        self.proc = subprocess.Popen(
            [str(LORE), "mcp", "--vault", str(vault)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], ANSWER_WAIT)
        assert ready, "no answer: the client would wait for ever"
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return answer

    def request(self, ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
        )
        return self.answer()

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(30)
        return self.proc.stderr.read().decode("utf-8", "replace")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Iterator[Stdio]:
    """One server for the module (its start is most of a test's cost): every test's bad
    line reaches the same process, which must answer each and read on. Started before any
    test's isolated_env, so it is started in an environment isolated alike. Its index is
    SQLite's alone: these tests are about the transport's framing, which no backend reaches
    (the search answers only show the server reads on)."""
    base = tmp_path_factory.mktemp("mcp-unreadable")
    vault = base / "sample"
    shutil.copytree(SAMPLE, vault, ignore=shutil.ignore_patterns(".lore"))
    with isolated_module(base, user_cache):
        first_index(vault)
        stdio = Stdio(vault)
    init = stdio.request(
        1,
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    )
    assert "result" in init, init
    stdio.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    yield stdio
    assert "Traceback" not in stdio.close()


def _search(ident: int, query_json: str) -> bytes:
    return (
        f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
        f'"params":{{"name":"search","arguments":{{"query":"{query_json}"}}}}}}'
    ).encode()


@pytest.mark.parametrize("escape", ["\\ud800", "a\\udfffb", "\\ud83d", "x\\uDBFF"])
def test_a_lone_surrogate_gets_a_json_rpc_error(server: Stdio, escape: str) -> None:
    server.send(_search(7, escape))
    answer = server.answer()
    assert answer["id"] == 7 and answer["error"]["code"] == -32700
    assert "lone surrogate" in answer["error"]["message"]
    # The server reads on: the next request is answered as usual.
    server.send(_search(8, "JIRA-1234"))
    assert server.answer()["result"]["structuredContent"]["hits"]


def test_a_surrogate_pair_is_a_character_and_is_searched(server: Stdio) -> None:
    server.send(_search(9, "\\ud83d\\ude00 JIRA-1234"))  # 😀, written as a pair
    assert "result" in server.answer()


@pytest.mark.parametrize("line", [b"{", b'{"jsonrpc":"2.0","id":', b"[1, 2", b"\xff\xfe"])
def test_broken_json_gets_a_parse_error_with_a_null_id(server: Stdio, line: bytes) -> None:
    server.send(line)
    answer = server.answer()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    server.send(_search(10, "JIRA-1234"))
    assert server.answer()["id"] == 10


def test_an_unreadable_notification_gets_no_answer(server: Stdio) -> None:
    server.send(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"q":"\\ud800"}}')
    server.send(_search(11, "JIRA-1234"))
    assert server.answer()["id"] == 11  # the first answer is the search's


@pytest.mark.anyio
async def test_a_thousand_tags_over_mcp_is_one_line(sample: Sample, tmp_path: Path) -> None:
    async with connect(sample.copy(tmp_path)) as client:
        message = await call_error(
            client, "search", {"query": "x", "tags": [f"t{i}" for i in range(1000)]}
        )
    assert "1,000 tags given; a search filters by at most 64" in message
