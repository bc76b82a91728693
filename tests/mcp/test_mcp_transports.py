"""Real transports: `lore mcp` as a subprocess driven by the SDK's stdio client, and
`lore mcp --http` on 127.0.0.1 with its Host/Origin checks; plus the CLI's own errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from backend_support import child_env
from click.testing import CliRunner
from conftest import drop_database, isolated_module, new_database
from mcp import Client, StdioServerParameters
from mcp_support import (  # noqa: F401 - the *_fixture names are fixtures
    Sample,
    call,
    call_error,
    indexed_sample_fixture,
    indexed_samples,
    sample_fixture,
)

from lore.cli import main
from lore.errors import install_hint

LORE = Path(sys.executable).parent / "lore"
CORE = ["search", "read_note", "list_tags", "status"]


@pytest.mark.anyio
async def test_stdio_subprocess(sample: Sample, tmp_path: Path) -> None:
    vault = sample.copy(tmp_path)
    # The SDK starts the server with a few variables of its own (HOME, PATH): this test's
    # are given, so the server's index is the one of the backend the test runs on (LORE_DB).
    # On PostgreSQL the database is named on the command line too (--db, as a client's
    # config has it), where a file would be the vault's own.
    db = os.environ.get("LORE_DB")
    params = StdioServerParameters(
        command=str(LORE),
        args=["mcp", "--vault", str(vault), *(["--db", db] if db else [])],
        env=child_env(),
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with Client(params) as client:
            assert f"{sample.notes} notes" in (client.instructions or "")
            status = await call(client, "status", {})
            assert status["db"].startswith("postgresql://" if db else str(vault))
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == [*CORE, "lookup", "recent", "context", "snapshot"]
            data = await call(client, "search", {"q": "JIRA-1234", "limit": 2})
            assert data["hits"] and data["hits"][0]["anchor"].startswith(data["hits"][0]["path"])
            note = await call(client, "read_note", {"path": data["hits"][0]["path"]})
            assert "JIRA-1234" in note["text"]
            assert "outside" in await call_error(client, "read_note", {"path": "../x.md"})
        errlog.seek(0)
        assert "Traceback" not in errlog.read()


def _post(url: str, headers: dict[str, str]) -> tuple[int, str]:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        }
    ).encode()
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


@pytest.fixture(scope="module")
def http_server(
    indexed_sample: Sample, tmp_path_factory: pytest.TempPathFactory, user_cache: Path
) -> Iterator[str]:
    """One `lore mcp --http` for the module's HTTP tests (they only read; its start is
    most of their cost), over a copy of the sample on the module's backend: on PostgreSQL
    in a database of its own, so the sample's own can still be cloned meanwhile."""
    base = tmp_path_factory.mktemp("mcp-http")
    server = indexed_sample.server
    url = new_database(server) if server is not None else None
    with isolated_module(base, user_cache) as env:
        if url is not None:
            env.setenv("LORE_DB", url)
        vault = indexed_sample.copy(base)
        proc = subprocess.Popen(
            [str(LORE), "mcp", "--http", "--port", "0", "--vault", str(vault)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # "lore mcp: serving VAULT at URL", once listening
        assert " at http://127.0.0.1:" in line, line
        yield line.rsplit(" at ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()
        if server is not None and url is not None:
            drop_database(server, url)


@pytest.mark.anyio
async def test_streamable_http_on_loopback(http_server: str) -> None:
    assert http_server.startswith("http://127.0.0.1:") and http_server.endswith("/mcp")
    async with Client(http_server) as client:
        data = await call(client, "search", {"query": "GMV 口径", "limit": 1})
        assert data["hits"][0]["path"] == "metrics/GMV 口径.md"


def test_http_refuses_foreign_host_and_origin(http_server: str) -> None:
    port = http_server.split(":")[2].split("/")[0]
    ok, _ = _post(http_server, {})
    assert ok == 200
    same_origin, _ = _post(http_server, {"Origin": f"http://127.0.0.1:{port}"})
    assert same_origin == 200
    rebinding, text = _post(http_server, {"Host": f"evil.example:{port}"})
    assert rebinding == 421 and "Host" in text
    wrong_port, _ = _post(http_server, {"Host": "127.0.0.1:1"})
    assert wrong_port == 421
    cross_site, text = _post(http_server, {"Origin": "http://evil.example"})
    assert cross_site == 403 and "Origin" in text
    other_local, _ = _post(http_server, {"Origin": "http://localhost:1"})
    assert other_local == 403


def test_http_port_in_use_is_a_one_line_error(sample: Sample, tmp_path: Path) -> None:
    import socket

    vault = sample.copy(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            main, ["mcp", "--http", "--port", str(port), "--vault", str(vault)]
        )
    assert result.exit_code == 1
    assert result.stderr.startswith(f"lore: error: --port {port}: cannot listen")
    assert result.stderr.count("\n") == 1


def test_mcp_without_the_sdk_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(sys.modules):
        if name == "mcp" or name.startswith(("mcp.", "lore.mcp.server")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp → ImportError
    result = CliRunner().invoke(main, ["mcp", "--vault", str(tmp_path)])
    assert result.exit_code == 1
    assert "lore: error: lore mcp needs the MCP SDK" in result.stderr
    assert install_hint("mcp") in result.stderr  # this checkout, never PyPI's unrelated lore


def test_mcp_on_a_missing_vault_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["mcp", "--vault", str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert result.stderr.startswith("lore: error: vault") and "does not exist" in result.stderr


def test_http_options_need_http(tmp_path: Path) -> None:
    for extra in (["--port", "9000"], ["--allow-origin", "http://localhost:3000"]):
        result = CliRunner().invoke(main, ["mcp", "--vault", str(tmp_path), *extra])
        assert result.exit_code == 2 and "go with --http" in result.stderr


def test_print_config_gives_absolute_paths_and_needs_no_sdk(tmp_path: Path) -> None:
    """The JSON block an MCP client takes: this lore's executable and the vault, both
    absolute (clients start servers from anywhere and do not expand ~)."""
    vault = tmp_path / "notes"
    vault.mkdir()
    result = CliRunner().invoke(main, ["mcp", "--print-config", "--vault", str(vault)])
    assert result.exit_code == 0, result.output
    config = json.loads(result.stdout)
    server = config["mcpServers"]["lore"]
    command = Path(server["command"])
    assert command.is_absolute() and command.exists()
    assert server["args"][-3:] == ["mcp", "--vault", str(vault.resolve())]
    assert "lore index" in result.stderr  # no index yet: says how to make one
