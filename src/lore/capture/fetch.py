"""Get a page: over HTTP with httpx (the `capture` extra), or through the user's own scraper.

The built-in fetch follows redirects (at most 10), refuses bodies larger than `max_bytes`
(by Content-Length before reading, and while streaming and inflating gzip/deflate), gives
up when no byte arrives for `timeout` seconds or the whole fetch takes longer than four
times that (a deadline every socket operation honours, see guard.py), can refuse local and
private addresses (`allow_private=False`), and decodes the body with the charset from the
headers or the page's own `<meta>` (see decode.py).

`LORE_SCRAPE_CMD` replaces it: the command is run with the URL as its last argument and must
print the page (HTML or Markdown) on stdout and exit 0, within the same time and size limits.
Every failure is a CaptureError whose message names the URL.
"""

from __future__ import annotations

import shlex
import subprocess
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import CaptureError, install_hint
from ..version import __version__
from .decode import UndecodableText, decode_bytes, header_charset, looks_like_html

DEFAULT_TIMEOUT = 15.0
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
MAX_TIMEOUT = 3600.0  # the ranges of --timeout and --max-size (CaptureOptions checks them)
MAX_BYTES_LIMIT = 1024 * 1024 * 1024
MAX_REDIRECTS = 10
USER_AGENT = f"Mozilla/5.0 (compatible; lore/{__version__}; local-first knowledge base)"
_CHUNK = 64 * 1024
Clock = Callable[[], float]
_TEXT_TYPES = (
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "text/x-markdown",
)


@dataclass(frozen=True)
class Fetched:
    """A page as text. `url` is where it was finally read from (after redirects)."""

    url: str
    text: str
    kind: str  # html | markdown | text


def size_text(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _too_large(url: str, max_bytes: int, size: int | None = None) -> CaptureError:
    what = f" ({size_text(size)})" if size is not None else ""
    return CaptureError(
        f"{url}: the page is larger than {size_text(max_bytes)}{what}; nothing written",
        hint="raise the limit with --max-size",
    )


def _kind(media_type: str, text: str) -> str:
    if media_type in ("text/markdown", "text/x-markdown"):
        return "markdown"
    if media_type == "text/plain":
        return "html" if looks_like_html(text) else "text"
    return "html"


def fetch_url(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    allow_private: bool = True,
    clock: Clock = time.monotonic,
) -> Fetched:
    """Download `url` with httpx and decode it; CaptureError on any failure.

    The whole fetch (connect, redirects, headers, body) ends within 4 × `timeout` seconds
    by `clock`; no read waits longer than `timeout`. `allow_private=False` refuses hosts
    that resolve to loopback, private or link-local addresses, after every redirect (see
    lore.capture.guard)."""
    try:
        import httpx
    except ImportError:
        raise CaptureError(
            f"{url}: fetching web pages needs the capture extra",
            hint=f"{install_hint('capture')}, or set LORE_SCRAPE_CMD",
        ) from None
    from .guard import Deadline, RefusedAddress, guarded_transport

    deadline = Deadline(4 * timeout, clock)
    try:
        with (
            httpx.Client(
                transport=guarded_transport(url, deadline, allow_private=allow_private),
                follow_redirects=True,
                max_redirects=MAX_REDIRECTS,
                timeout=httpx.Timeout(timeout),
                headers={
                    "User-Agent": USER_AGENT,
                    "Accept": "text/html,*/*;q=0.8",
                    "Accept-Encoding": "gzip, deflate",  # the ones inflated here, bounded
                },
            ) as client,
            client.stream("GET", url) as response,
        ):
            final = str(response.url)
            if response.status_code >= 400:
                reason = response.reason_phrase or "error"
                raise CaptureError(f"{url}: HTTP {response.status_code} {reason}; nothing written")
            content_type = response.headers.get("content-type", "")
            media_type = content_type.split(";", 1)[0].strip().lower()
            if media_type and media_type not in _TEXT_TYPES:
                raise CaptureError(f"{url}: not a web page ({media_type}); nothing written")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(url, max_bytes, int(declared))
            coding = response.headers.get("content-encoding", "")
            data = read_body(response.iter_raw(_CHUNK), coding, url, max_bytes)
    except RefusedAddress as exc:
        raise CaptureError(
            f"{url}: {exc}", hint="the operator can allow private addresses"
        ) from None
    except httpx.TimeoutException:
        if deadline.expired:
            raise CaptureError(
                f"{url}: the download took longer than {4 * timeout:g} s; nothing written",
                hint="try again, or raise --timeout",
            ) from None
        raise CaptureError(
            f"{url}: no response within {timeout:g} s (timed out); nothing written",
            hint="try again, or raise --timeout",
        ) from None
    except httpx.TooManyRedirects:
        raise CaptureError(f"{url}: more than {MAX_REDIRECTS} redirects; nothing written") from None
    except httpx.UnsupportedProtocol as exc:
        raise CaptureError(f"{url}: redirected to an unsupported address ({exc})") from None
    except httpx.HTTPError as exc:
        raise CaptureError(f"{url}: {_http_reason(exc)}; nothing written") from None
    try:
        text = decode_bytes(data, header_charset(content_type), html=media_type != "text/plain")
    except UndecodableText as exc:
        raise CaptureError(f"{url}: {exc}; nothing written") from None
    return Fetched(final, text, _kind(media_type, text))


_CODINGS = ("", "identity", "gzip", "x-gzip", "deflate")


def _inflater(coding: str, first: bytes) -> Any:
    """A zlib decompressor for a Content-Encoding, given the body's first bytes: "deflate"
    is zlib-wrapped as the standard says (first byte 0x78) or raw, as some servers send."""
    if coding == "deflate":
        return zlib.decompressobj(zlib.MAX_WBITS if first[:1] == b"x" else -zlib.MAX_WBITS)
    return zlib.decompressobj(16 + zlib.MAX_WBITS)


def read_body(chunks: Iterable[bytes], coding: str, url: str, max_bytes: int) -> bytes:
    """The body, decompressed as it arrives and never past `max_bytes` of output: a small
    compressed body that inflates to gigabytes (a "gzip bomb") stops at the limit, having
    held at most `max_bytes` + one chunk in memory."""
    coding = coding.strip().lower()
    if coding not in _CODINGS:
        raise CaptureError(f"{url}: content encoding {coding!r} is not supported; nothing written")
    compressed = coding not in ("", "identity")
    inflater = None
    out: list[bytes] = []
    size = received = 0
    try:
        for chunk in chunks:
            if not chunk:
                continue
            received += len(chunk)
            if received > max_bytes:
                raise _too_large(url, max_bytes)
            if compressed:
                inflater = inflater or _inflater(coding, chunk)
                chunk = inflater.decompress(chunk, max_bytes - size + 1)
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(url, max_bytes)
            out.append(chunk)
        if inflater is not None:
            out.append(inflater.flush())
            if size + len(out[-1]) > max_bytes:
                raise _too_large(url, max_bytes)
    except zlib.error as exc:
        raise CaptureError(
            f"{url}: the compressed body is damaged ({exc}); nothing written"
        ) from None
    return b"".join(out)


def _http_reason(exc: Exception) -> str:
    text = [line.strip().rstrip(".") for line in str(exc).strip().splitlines()]
    name = type(exc).__name__
    if name == "ConnectError":
        return f"cannot connect ({text[0] if text else 'refused'})"
    return f"{name}: {text[0]}" if text else name


def scrape_url(
    url: str,
    command: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Fetched:
    """Run the user's scraper (`LORE_SCRAPE_CMD`) for `url` and read what it printed."""
    try:
        argv = [*shlex.split(command), url]
    except ValueError as exc:
        raise CaptureError(f"LORE_SCRAPE_CMD: cannot parse {command!r} ({exc})") from None
    limit = 4 * timeout
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        raise CaptureError(
            f"{url}: cannot run LORE_SCRAPE_CMD {argv[0]!r} ({exc.strerror or exc})"
        ) from None
    assert proc.stdout is not None and proc.stderr is not None
    errors: list[bytes] = []
    stderr = proc.stderr
    reader = threading.Thread(target=lambda: errors.append(stderr.read()), daemon=True)
    reader.start()
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        proc.kill()

    timer = threading.Timer(limit, expire)
    timer.start()
    chunks: list[bytes] = []
    received = 0
    try:
        while chunk := proc.stdout.read(_CHUNK):
            received += len(chunk)
            if received > max_bytes:
                proc.kill()
                raise _too_large(url, max_bytes)
            chunks.append(chunk)
        status = proc.wait()
    finally:
        timer.cancel()
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(1.0)
    if expired.is_set():
        raise CaptureError(f"{url}: LORE_SCRAPE_CMD did not finish within {limit:g} s")
    if status != 0:
        last = (b"".join(errors).decode("utf-8", "replace").strip().splitlines() or [""])[-1]
        detail = f": {last[:200]}" if last else ""
        raise CaptureError(f"{url}: LORE_SCRAPE_CMD exited with status {status}{detail}")
    data = b"".join(chunks)
    try:
        text = decode_bytes(data, html=True)
    except UndecodableText as exc:
        raise CaptureError(f"{url}: LORE_SCRAPE_CMD printed {exc}") from None
    if not text.strip():
        raise CaptureError(f"{url}: LORE_SCRAPE_CMD printed nothing")
    return Fetched(url, text, "html" if looks_like_html(text) else "markdown")
