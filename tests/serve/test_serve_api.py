"""The JSON API against a real uvicorn on 127.0.0.1: every endpoint with and without a
token, owner and principal tokens, revoked and unknown tokens, read-only and write tokens,
the `--json` shapes, writes with the hash guard, and the OpenAPI document."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from serve_support import PUBLIC_NOTES, make_vault, running
from test_library_writes import tree

import lore
from lore.cli import main
from lore.serve.api import ENDPOINTS, PREFIX
from lore.serve.background import Background

NOTE = "public/客户去重规则 v2.md"
QUERY_ARGS = {"q": "客户 去重", "task": "客户去重规则", "url": "https://example.com/"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = make_vault(tmp_path_factory.mktemp("api") / "vault")
    with lore.open(root) as vault:
        tokens = {
            "owner": vault.add_token("owner", principal=None).secret,
            "guest": vault.add_token("guest", principal="guest").secret,
            "revoked": vault.add_token("old", principal=None).secret,
        }
        vault.revoke_token("old")
        cluster = vault.visible_clusters(principal="guest").clusters[0].id  # type: ignore[union-attr]
    with running(root, require_token=True) as server:
        yield {"server": server, "root": root, "tokens": tokens, "cluster": cluster}


def _url(path: str, cluster: int) -> str:
    return PREFIX + path.replace("{path}", quote(NOTE)).replace("{id}", str(cluster))


def _params(endpoint: Any) -> dict[str, str]:
    return {a.name: QUERY_ARGS[a.name] for a in endpoint.args if a.required}


def _error(response: Any, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code
    message = body["error"]["message"]
    assert message and "\n" not in message and "Traceback" not in message
    return str(message)


READS = [e for e in ENDPOINTS if e.method == "GET"]


@pytest.mark.parametrize("endpoint", READS, ids=[e.path for e in READS])
def test_every_read_endpoint_by_token(served: dict[str, Any], endpoint: Any) -> None:
    server: Background = served["server"]
    url = _url(endpoint.path, served["cluster"])
    params = _params(endpoint)
    with server.client() as anonymous:
        _error(anonymous.get(url, params=params), 401, "unauthorized")
    for name in ("revoked",):
        with server.client(served["tokens"][name]) as client:
            _error(client.get(url, params=params), 401, "unauthorized")
    with server.client("lore_" + "x" * 43) as client:
        _error(client.get(url, params=params), 401, "unauthorized")
    with server.client(served["tokens"]["owner"]) as owner:
        answer = owner.get(url, params=params)
        assert answer.status_code == 200, answer.text
        assert isinstance(answer.json(), dict)
    with server.client(served["tokens"]["guest"]) as guest:
        answer = guest.get(url, params=params)
        if endpoint.owner_only:
            _error(answer, 403, "forbidden")
        else:
            assert answer.status_code == 200, answer.text


def test_shapes_are_those_of_the_cli_json(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    root = str(served["root"])
    runner = CliRunner()

    def cli(*args: str) -> Any:
        result = runner.invoke(main, [*args, "--vault", root, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    with server.client(served["tokens"]["owner"]) as owner:
        api = owner.get(f"{PREFIX}/search", params={"q": "客户 去重", "limit": 5}).json()
        assert api == cli("search", "客户 去重", "--limit", "5")
        assert owner.get(f"{PREFIX}/notes/{quote(NOTE)}").json() == cli("show", NOTE)
        assert owner.get(f"{PREFIX}/links/{quote(NOTE)}").json() == cli("links", NOTE)
        lookup = owner.get(f"{PREFIX}/lookup", params={"q": "架构说明"}).json()
        assert lookup == cli("lookup", "架构说明")
    with server.client(served["tokens"]["guest"]) as guest:
        api = guest.get(f"{PREFIX}/search", params={"q": "客户", "limit": 50}).json()
        assert api == cli("search", "客户", "--limit", "50", "--as", "guest")
        assert guest.get(f"{PREFIX}/status").json()["notes"] == PUBLIC_NOTES


def test_the_openapi_document_names_every_route(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    with server.client(served["tokens"]["guest"]) as client:
        doc = client.get(f"{PREFIX}/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    for endpoint in ENDPOINTS:
        operation = doc["paths"][PREFIX + endpoint.path][endpoint.method.lower()]
        assert operation["summary"] == endpoint.summary
        if endpoint.write:
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            assert set(schema["properties"]) == {a.name for a in endpoint.args}
    assert doc["security"] == [{"token": []}]


def test_bad_arguments_are_named(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    with server.client(served["tokens"]["owner"]) as client:
        assert "limit" in _error(client.get(f"{PREFIX}/search?q=x&limit=abc"), 400, "bad_request")
        assert "limit" in _error(client.get(f"{PREFIX}/search?q=x&limit=0"), 400, "bad_request")
        assert "q: required" in _error(client.get(f"{PREFIX}/search"), 400, "bad_request")
        assert "'qq'" in _error(client.get(f"{PREFIX}/search?qq=x"), 400, "bad_request")
        assert "mode" in _error(client.get(f"{PREFIX}/search?q=x&mode=5"), 400, "bad_request")
        assert "since" in _error(
            client.get(f"{PREFIX}/search?q=x&since=2026-13"), 400, "bad_request"
        )
        _error(client.get(f"{PREFIX}/notes/{quote('public/none.md')}"), 404, "not_found")
        _error(client.get(f"{PREFIX}/clusters/999999"), 404, "not_found")
        _error(client.get(f"{PREFIX}/nothing"), 404, "not_found")
        _error(client.delete(f"{PREFIX}/search"), 405, "method_not_allowed")


@pytest.fixture
def writable(tmp_path: Path) -> Iterator[dict[str, Any]]:
    root = make_vault(tmp_path / "vault", clusters=False)
    with lore.open(root) as vault:
        tokens = {
            "writer": vault.add_token("writer", principal=None, can_write=True).secret,
            "reader": vault.add_token("reader", principal=None).secret,
            "guest": vault.add_token("guest", principal="guest", can_write=True).secret,
        }
    with running(root, require_token=True, allow_write=True) as server:
        yield {"server": server, "root": root, "tokens": tokens}


def test_writes_need_a_write_token(writable: dict[str, Any]) -> None:
    server: Background = writable["server"]
    root: Path = writable["root"]
    body = {"path": "public/新.md", "text": "# 新\n"}
    before = tree(root)
    with server.client() as anonymous:
        _error(anonymous.post(f"{PREFIX}/notes", json=body), 401, "unauthorized")
    with server.client(writable["tokens"]["reader"]) as reader:
        assert "read-only" in _error(reader.post(f"{PREFIX}/notes", json=body), 403, "forbidden")
        _error(reader.post(f"{PREFIX}/remember", json={"text": "x"}), 403, "forbidden")
    with server.client(writable["tokens"]["guest"]) as guest:
        outside = {"path": "private/x.md", "text": "x"}
        assert "guest" in _error(guest.post(f"{PREFIX}/notes", json=outside), 403, "forbidden")
        ingest = guest.post(f"{PREFIX}/ingest", json={"url": "https://example.com/"})
        _error(ingest, 403, "forbidden")
    with server.client(writable["tokens"]["writer"]) as writer:
        form = writer.post(f"{PREFIX}/notes", data={"path": "a.md", "text": "x"})
        _error(form, 415, "unsupported_media")
        _error(writer.post(f"{PREFIX}/notes", content=b"[1, 2]", headers=_JSON), 400, "bad_json")
        _error(writer.post(f"{PREFIX}/notes", content=b"{no", headers=_JSON), 400, "bad_json")
        extra = {**body, "overwrite": True}
        assert "overwrite" in _error(writer.post(f"{PREFIX}/notes", json=extra), 400, "bad_request")
    assert tree(root) == before
    with server.client(writable["tokens"]["writer"]) as writer:
        made = writer.post(f"{PREFIX}/notes", json=body)
        assert made.status_code == 201 and made.json()["indexed"] is True
        _error(writer.post(f"{PREFIX}/notes", json=body), 409, "conflict")
        found = writer.get(f"{PREFIX}/search", params={"q": "新", "path": "public/新.md"})
        assert [h["path"] for h in found.json()["hits"]] == ["public/新.md"]


_JSON = {"Content-Type": "application/json"}


def test_edit_move_delete_restore(writable: dict[str, Any]) -> None:
    server: Background = writable["server"]
    root: Path = writable["root"]
    with server.client(writable["tokens"]["writer"]) as writer:
        note = writer.get(f"{PREFIX}/notes/{quote(NOTE)}").json()
        edit = {"path": NOTE, "base_hash": note["hash"], "append": "- 追加", "section": "计划"}
        changed = writer.post(f"{PREFIX}/notes/edit", json=edit)
        assert changed.status_code == 200, changed.text
        assert changed.json()["previous_hash"] == note["hash"]
        before = tree(root)
        stale = writer.post(f"{PREFIX}/notes/edit", json={**edit, "append": "- 再来"})
        assert "changed since" in _error(stale, 409, "conflict")
        assert tree(root) == before
        moved = writer.post(
            f"{PREFIX}/notes/move", json={"path": NOTE, "to": "public/规则/去重 v2.md"}
        ).json()
        assert moved["moved_from"] == NOTE and (root / "public/规则/去重 v2.md").is_file()
        gone = writer.post(f"{PREFIX}/notes/delete", json={"path": "public/规则/去重 v2.md"})
        trash_id = gone.json()["trash_id"]
        assert [i["id"] for i in writer.get(f"{PREFIX}/trash").json()["items"]] == [trash_id]
        _error(writer.get(f"{PREFIX}/notes/{quote('public/规则/去重 v2.md')}"), 404, "not_found")
        back = writer.post(f"{PREFIX}/notes/restore", json={"id": trash_id, "to": NOTE})
        assert back.json()["path"] == NOTE
        assert "- 追加" in writer.get(f"{PREFIX}/notes/{quote(NOTE)}").json()["body"]
        memory = writer.post(f"{PREFIX}/remember", json={"text": "灰度结论：保留回滚开关"})
        assert memory.status_code == 200 and memory.json()["pointer"].startswith("memory/")


def test_writing_is_off_without_allow_write(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault", clusters=False)
    with lore.open(root) as vault:
        secret = vault.add_token("w", principal=None, can_write=True).secret
    before = tree(root)
    with running(root, require_token=True) as server, server.client(secret) as client:
        answer = client.post(f"{PREFIX}/notes", json={"path": "a.md", "text": "x"})
        assert "--allow-write" in _error(answer, 403, "forbidden")
        assert client.get(f"{PREFIX}/status").json()["server"]["write"] is False
    assert tree(root) == before


def test_loopback_needs_no_token_but_refuses_a_bad_one(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault", clusters=False)
    with lore.open(root) as vault:
        guest = vault.add_token("guest", principal="guest").secret
    with running(root) as server:
        with server.client() as local:
            assert local.get(f"{PREFIX}/status").json()["server"]["principal"] is None
        with server.client("lore_nope") as bad:
            _error(bad.get(f"{PREFIX}/status"), 401, "unauthorized")
        with server.client(guest) as client:  # a token given is the token, on loopback too
            assert client.get(f"{PREFIX}/status").json()["notes"] == PUBLIC_NOTES
    with lore.open(root) as vault:
        (used,) = vault.tokens()
        assert used.last_used is not None  # `lore token list` shows when it was last used


def test_ingest_takes_urls_only_and_refuses_private_addresses(writable: dict[str, Any]) -> None:
    server: Background = writable["server"]
    root: Path = writable["root"]
    before = tree(root)
    with server.client(writable["tokens"]["writer"]) as writer:
        local = writer.post(f"{PREFIX}/ingest", json={"url": server.url + "/api/v1/status"})
        assert "127.0.0.1" in _error(local, 422, "capture_failed")
        for source in ("/etc/passwd", "file:///etc/passwd", str(root / "public")):
            _error(writer.post(f"{PREFIX}/ingest", json={"url": source}), 400, "bad_request")
    assert tree(root) == before


def test_search_takes_a_time_budget(served: dict[str, Any]) -> None:
    """budget_ms reaches the search (issue 18): `degraded` says what it skipped (nothing
    with ten minutes), and a budget out of range is a 400 naming the argument."""
    server: Background = served["server"]
    with server.client(served["tokens"]["owner"]) as owner:
        answer = owner.get(PREFIX + "/search", params={"q": "客户 去重", "budget_ms": 600_000})
        assert answer.status_code == 200, answer.text
        assert answer.json()["degraded"] == [] and answer.json()["hits"]
        message = _error(
            owner.get(PREFIX + "/search", params={"q": "x", "budget_ms": 0}), 400, "bad_request"
        )
        assert "budget_ms" in message
