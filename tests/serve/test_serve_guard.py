"""Hostile requests against a real `lore serve`: forged Host and Origin (DNS rebinding),
forms without the CSRF token, bodies and URLs that are too large, the rate limit (an
injected clock: no sleeps), traversal in note paths (raw `../`, encoded, absolute,
symlinked, NUL, backslashes), hostile query strings. Each is one clear 4xx JSON error, and
nothing is written."""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_support import Clock, make_vault, running
from test_library_writes import tree
from test_serve_api import _error

import lore
from lore.serve.api import PREFIX
from lore.serve.background import Background

NOTE = "public/客户去重规则 v2.md"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("guard")
    root = make_vault(folder / "vault", clusters=False)
    (folder / "secret.md").write_text("TOPSECRET outside the vault", encoding="utf-8")
    os.symlink(folder / "secret.md", root / "public" / "link.md")
    os.symlink(folder, root / "public" / "linkdir")
    clock = Clock()
    with lore.open(root) as vault:
        tokens = {
            "writer": vault.add_token("writer", principal=None, can_write=True).secret,
            "limited": vault.add_token("limited", principal=None).secret,
        }
    with running(root, require_token=True, allow_write=True, clock=clock) as server:
        yield {"server": server, "root": root, "tokens": tokens, "clock": clock}


@pytest.fixture(autouse=True)
def full_buckets(served: dict[str, Any]) -> None:
    """Every test starts with a full rate-limit bucket (an hour passes on the clock)."""
    served["clock"].now += 3600


def raw(server: Background, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (no client normalises the path) and read the answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def get(server: Background, target: str, token: str, extra: str = "") -> tuple[int, dict[str, Any]]:
    request = (
        f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {token}\r\n{extra}Connection: close\r\n\r\n"
    )
    status, _headers, body = raw(server, request.encode("utf-8"))
    return status, json.loads(body) if body.startswith(b"{") else {"raw": body.decode()}


def test_forged_host_and_origin_are_refused(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    with server.client(served["tokens"]["writer"]) as client:
        host = client.get(f"{PREFIX}/status", headers={"Host": f"evil.example:{server.port}"})
        assert "evil.example" in _error(host, 421, "bad_host")
        rebound = client.get(f"{PREFIX}/status", headers={"Host": "127.0.0.1.evil.example"})
        _error(rebound, 421, "bad_host")
        origin = client.get(f"{PREFIX}/status", headers={"Origin": "http://evil.example"})
        _error(origin, 403, "bad_origin")
        same = client.get(f"{PREFIX}/status", headers={"Origin": server.url})
        assert same.status_code == 200
        local = client.get(f"{PREFIX}/status", headers={"Host": f"localhost:{server.port}"})
        assert local.status_code == 200
        cross = client.post(
            f"{PREFIX}/remember", json={"text": "x"}, headers={"Sec-Fetch-Site": "cross-site"}
        )
        _error(cross, 403, "bad_origin")
    no_host, _h, _b = raw(server, f"GET {PREFIX}/status HTTP/1.0\r\n\r\n".encode())
    assert no_host == 421
    twice = f"Host: 127.0.0.1:{server.port}\r\nHost: evil.example\r\n"
    two, _h, _b = raw(server, f"GET {PREFIX}/status HTTP/1.1\r\n{twice}\r\n".encode())
    assert two in (400, 421)


def test_forms_need_the_csrf_token(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    root: Path = served["root"]
    before = tree(root)
    with server.client() as browser:
        signed = browser.post(
            "/login", data={"token": served["tokens"]["writer"], "next": "/memory"}
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/memory"
        cookie = signed.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie
        page = browser.get("/memory")
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert csrf is not None
        forged = browser.post("/memory", data={"text": "forged"})
        assert forged.status_code == 403 and "stale" in forged.text
        wrong = browser.post("/memory", data={"text": "forged", "csrf": "0" * 40})
        assert wrong.status_code == 403
        assert tree(root) == before
        done = browser.post("/memory", data={"text": "a real one", "csrf": csrf.group(1)})
        assert done.status_code == 200 and "a real one" in done.text
        gone = browser.post("/login", data={"token": "lore_wrong"})
        assert gone.status_code == 401
        away = browser.get("/login?next=//evil.example/x")
        assert 'value="/"' in away.text  # never redirected off this server
    with server.client() as api:  # the page cookie is no key to the API
        api.cookies.set("lore_token", served["tokens"]["writer"])
        _error(api.post(f"{PREFIX}/remember", json={"text": "x"}), 401, "unauthorized")


def test_sizes_are_bounded(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    root: Path = served["root"]
    before = tree(root)
    with server.client(served["tokens"]["writer"]) as client:
        huge = {"path": "public/huge.md", "text": "x" * (2 * 1024 * 1024)}
        _error(client.post(f"{PREFIX}/notes", json=huge), 413, "too_large")

        def chunks() -> Iterator[bytes]:
            for _ in range(40):
                yield b"x" * 65536

        streamed = client.post(
            f"{PREFIX}/notes", content=chunks(), headers={"Content-Type": "application/json"}
        )
        _error(streamed, 413, "too_large")
        nested = b"[" * 200_000 + b"]" * 200_000
        _error(
            client.post(
                f"{PREFIX}/notes",
                content=nested[:900_000],
                headers={"Content-Type": "application/json"},
            ),
            400,
            "bad_json",
        )
        _error(client.get(f"{PREFIX}/search", params={"q": "x" * 5000}), 414, "uri_too_long")
        _error(client.get(f"{PREFIX}/notes/" + "a/" * 1500 + "x.md"), 414, "uri_too_long")
    status, _headers, body = raw(
        server,
        (
            f"POST {PREFIX}/notes HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {served['tokens']['writer']}\r\n"
            "Content-Type: application/json\r\nContent-Length: 99999999999\r\n"
            "Connection: close\r\n\r\n{}"
        ).encode(),
    )
    assert status == 413 and json.loads(body)["error"]["code"] == "too_large"
    assert tree(root) == before


def test_the_rate_limit_per_token(tmp_path: Path) -> None:
    root = make_vault(tmp_path / "vault", clusters=False)
    with lore.open(root) as vault:
        one = vault.add_token("one", principal=None).secret
        two = vault.add_token("two", principal="guest").secret
    clock = Clock()
    with running(root, require_token=True, rate=60, burst=3, clock=clock) as server:
        with server.client(one) as client:
            codes = [client.get(f"{PREFIX}/status").status_code for _ in range(3)]
            assert codes == [200, 200, 200]
            refused = client.get(f"{PREFIX}/status")
            assert "retry in 1 s" in _error(refused, 429, "rate_limited")
            assert refused.headers["retry-after"] == "1"
            with server.client(two) as other:  # each token has its own bucket
                assert other.get(f"{PREFIX}/status").status_code == 200
            clock.now += 1.0  # 60 a minute: one more each second
            assert client.get(f"{PREFIX}/status").status_code == 200
            _error(client.get(f"{PREFIX}/status"), 429, "rate_limited")
            clock.now += 60.0  # refilled, up to the burst
            codes = [client.get(f"{PREFIX}/status").status_code for _ in range(4)]
            assert codes == [200, 200, 200, 429]


TRAVERSALS = [
    "../../secret.md",
    "%2e%2e/%2e%2e/secret.md",
    "%2E%2E%2F%2E%2E%2Fsecret.md",
    "public/..%2f..%2f..%2fsecret.md",
    "%2Fetc%2Fpasswd",
    "/etc/passwd",
    "public/link.md",
    "public/linkdir/secret.md",
    "public/x%00.md",
    "..%5c..%5csecret.md",
    "public/%252e%252e/x.md",
    "C:%5Cwindows%5Cwin.ini",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_in_note_paths(served: dict[str, Any], path: str) -> None:
    server: Background = served["server"]
    root: Path = served["root"]
    before = tree(root)
    token = served["tokens"]["writer"]
    for prefix in (f"{PREFIX}/notes/", f"{PREFIX}/links/", "/note/", "/edit/"):
        status, body = get(server, prefix + path, token)
        assert status in (400, 403, 404), (prefix, path, status)
        assert "TOPSECRET" not in json.dumps(body) and "root:" not in json.dumps(body)
    with server.client(token) as client:
        plain = unquote(path)  # a JSON body carries the path decoded
        if "%" in plain:
            return  # doubly encoded: a literal `%2e%2e` folder inside the vault is harmless
        for endpoint, body in (
            ("/notes", {"path": plain, "text": "x"}),
            ("/notes/edit", {"path": plain, "base_hash": "0" * 64, "text": "x"}),
            ("/notes/move", {"path": NOTE, "to": plain}),
            ("/notes/delete", {"path": plain}),
        ):
            answer = client.post(PREFIX + endpoint, json=body)
            assert answer.status_code in (400, 403, 404, 409), (endpoint, plain, answer.text)
            assert "TOPSECRET" not in answer.text
    assert tree(root) == before
    assert (root.parent / "secret.md").read_text(encoding="utf-8") == "TOPSECRET outside the vault"


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(min_size=1, max_size=300))
def test_hostile_query_strings_never_break_the_server(served: dict[str, Any], query: str) -> None:
    server: Background = served["server"]
    served["clock"].now += 3600
    with server.client(served["tokens"]["writer"]) as client:
        for url in (f"{PREFIX}/search", f"{PREFIX}/lookup", "/search"):
            answer = client.get(url, params={"q": query})
            assert answer.status_code in (200, 400), (url, query, answer.text[:300])
            if url.startswith(PREFIX):
                assert isinstance(answer.json(), dict)


def test_security_headers_and_no_directory_listing(served: dict[str, Any]) -> None:
    server: Background = served["server"]
    with server.client(served["tokens"]["writer"]) as client:
        for url in ("/search?q=" + quote("客户"), f"{PREFIX}/status", "/static/app.css"):
            answer = client.get(url)
            csp = answer.headers["content-security-policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp
            assert "frame-ancestors 'none'" in csp
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert answer.headers["referrer-policy"] == "no-referrer"
        page = client.get("/search?q=x").text
        assert "<script>" not in page and " on" + "click=" not in page  # no inline scripts
        for url in ("/static/", "/static", "/static/../pyproject.toml", "/static/%2e%2e/app.py"):
            assert client.get(url, follow_redirects=True).status_code == 404, url
    status, headers, _body = raw(
        server, f"GET /static/app.js HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    )
    assert status == 200 and "javascript" in headers["content-type"]
