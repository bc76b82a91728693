"""Issue 13, classes 5 and 8: a fetch ends at its total deadline whatever the server does,
never inflates a body past the size limit, and, with `allow_private=False`, never
connects to a loopback, private or link-local address, not even after a redirect.

Real HTTP servers on the loopback range; the deadline runs on an injected clock (each
reading of it advances one second), so no test waits."""

from __future__ import annotations

import functools
import threading
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lore.capture import guard
from lore.capture.fetch import fetch_url
from lore.capture.ingest import CaptureOptions
from lore.errors import CaptureError, ConfigError

PAGE = b"<html><head><title>Bounded</title></head><body><p>" + b"bounded words " * 50 + b"</p>"
BOMB_OUTPUT = 256 * 1024 * 1024  # what the bomb inflates to: 256 MiB of zeros
LIMIT = 1024 * 1024


@functools.lru_cache(maxsize=2)
def _bomb(coding: str) -> bytes:
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}[coding]
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    zeros = bytes(1024 * 1024)
    parts = [packer.compress(zeros) for _ in range(BOMB_OUTPUT // len(zeros))]
    return b"".join(parts) + packer.flush()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that hangs up (deadline, size cap) is what these tests expect


class Server:
    """One loopback HTTP server; `hits` counts the requests it received."""

    def __init__(self, host: str = "127.0.0.1", redirect_to: str | None = None) -> None:
        self.hits = 0
        self.sent = 0
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                owner.hits += 1
                try:
                    self.route()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as it should

            def route(self) -> None:
                if redirect_to is not None:
                    self.send_response(302)
                    self.send_header("Location", redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/drip-body":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    self._drip(b"<p>" + b"x" * 99_997)
                elif self.path == "/drip-headers":
                    self._drip(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Pad: " + b"y" * 5000
                    )
                elif self.path in ("/bomb/gzip", "/bomb/deflate"):
                    coding = self.path.rsplit("/", 1)[1]
                    self._send(_bomb(coding), coding)
                elif self.path in ("/page/gzip", "/page/deflate", "/page/raw-deflate"):
                    coding = self.path.rsplit("/", 1)[1]
                    wbits = {"gzip": 31, "deflate": 15, "raw-deflate": -15}[coding]
                    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
                    self._send(packer.compress(PAGE) + packer.flush(), coding.replace("raw-", ""))
                else:
                    self._send(PAGE, None)

            def _send(self, body: bytes, coding: str | None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                if coding:
                    self.send_header("Content-Encoding", coding)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _drip(self, data: bytes) -> None:
                for i in range(len(data)):
                    if owner.stop.wait(0.01):
                        return
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    owner.sent += 1

        self.httpd = _QuietServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://{host}:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def ticking(step: float = 1.0) -> Callable[[], float]:
    """A clock that advances `step` seconds each time it is read."""
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock


@pytest.mark.parametrize("path", ["/drip-body", "/drip-headers"])
def test_a_dripping_server_is_cut_off_at_the_total_deadline(server: Server, path: str) -> None:
    server.sent = 0
    with pytest.raises(CaptureError) as caught:
        fetch_url(server.base + path, timeout=5.0, clock=ticking())
    message = str(caught.value)
    assert "\n" not in message and server.base + path in message
    assert "took longer than 20 s" in message and "nothing written" in message
    assert server.sent < 1000  # stopped long before the page was whole


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compression_bomb_stops_at_the_limit_with_bounded_memory(
    server: Server, coding: str
) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(CaptureError, match=r"larger than 1\.0 MB; nothing written"):
            fetch_url(f"{server.base}/bomb/{coding}", max_bytes=LIMIT)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Inflating the whole body (as httpx's own decoder does, chunk by chunk) peaks at
    # hundreds of MB; bounded inflation holds the limit and a chunk or two.
    assert peak < 8 * LIMIT, peak


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate"])
def test_compressed_pages_are_still_read(server: Server, coding: str) -> None:
    page = fetch_url(f"{server.base}/page/{coding}")
    assert "bounded words" in page.text and page.kind == "html"


def test_private_addresses_are_refused_when_asked_and_allowed_by_default(server: Server) -> None:
    assert "bounded words" in fetch_url(server.base + "/").text  # the CLI's default
    before = server.hits
    port = server.base.rsplit(":", 1)[1]
    for url in (server.base + "/", f"http://localhost:{port}/", f"http://[::1]:{port}/"):
        with pytest.raises(CaptureError) as caught:
            fetch_url(url, allow_private=False)
        message = str(caught.value)
        assert "local or private address" in message and "\n" not in message, message
    assert server.hits == before  # not one connection reached it


def test_a_redirect_to_a_private_address_is_refused(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """127.0.0.2 stands in for a public host (the one thing the test changes is which
    address counts as public); it redirects to the loopback server."""
    front = Server("127.0.0.2", redirect_to=server.base + "/")
    real = guard.is_public
    monkeypatch.setattr(guard, "is_public", lambda a: a == "127.0.0.2" or real(a))
    try:
        before = server.hits
        with pytest.raises(CaptureError, match=r"127\.0\.0\.1\); not fetched here"):
            fetch_url(front.base + "/", allow_private=False)
        assert front.hits == 1 and server.hits == before
        assert "bounded words" in fetch_url(front.base + "/").text  # allowed: followed
    finally:
        front.close()


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
     "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "224.0.0.1"],
)  # fmt: skip
def test_non_global_addresses_are_not_public(address: str) -> None:
    assert guard.is_public(address) is False


def test_public_addresses_are_public() -> None:
    assert guard.is_public("93.184.216.34") and guard.is_public("2606:2800:220:1::")


@pytest.mark.parametrize(
    ("options", "named"),
    [({"timeout": 0.0}, "--timeout"), ({"timeout": float("nan")}, "--timeout"),
     ({"timeout": 1e300}, "--timeout"), ({"max_bytes": 0}, "--max-size"),
     ({"max_bytes": 2**62}, "--max-size")],
)  # fmt: skip
def test_capture_options_have_ranges(options: dict[str, float], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        CaptureOptions(**options)  # type: ignore[arg-type]
