"""The network side of a fetch: a total deadline on every socket operation, and which
addresses a fetch may connect to.

httpx's timeouts are per operation: a server that sends a byte every few seconds never
trips them, and a check between body chunks runs only as often as a chunk fills. Here the
connection itself carries the deadline: connect, TLS handshake, every read and write get
at most the time left, so a fetch ends by its deadline whatever the server does (headers
dripped one byte at a time included).

With `allow_private=False` (for lore's server, whose callers are not the machine's owner)
every connection, the first and each one a redirect leads to, is checked after DNS
resolution: a host that resolves to a loopback, private, link-local or other non-global
address is refused, and the connection goes to the checked address itself, so the name
cannot resolve elsewhere in between. Proxies from the environment are then not used (a
proxy resolves names itself). The command line keeps the default, `allow_private=True`:
fetching the user's own intranet page is the user's business.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

Clock = Callable[[], float]
# The stream and backend below follow httpcore's NetworkStream/NetworkBackend interfaces
# without importing httpcore here: httpx comes with the capture extra, imported when used.


class RefusedAddress(Exception):
    """A connection the address policy refuses; the message names the host and address."""


def is_public(address: str) -> bool:
    """Is this IP address globally routable (not loopback, private, link-local, ...)?"""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class Deadline:
    """The time left to a fixed end, by an injectable clock; `expired` once it is past."""

    def __init__(self, seconds: float, clock: Clock = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = clock() + seconds
        self.expired = False

    def left(self, timeout: float | None) -> float:
        """The timeout for the next operation: `timeout`, cut to the time left."""
        remaining = self._end - self._clock()
        if remaining <= 0:
            import httpcore

            self.expired = True
            raise httpcore.ReadTimeout(f"the whole fetch took longer than {self.seconds:g} s")
        return remaining if timeout is None else min(timeout, remaining)


class _Stream:
    def __init__(self, inner: Any, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, self._deadline.left(timeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> _Stream:
        inner = self._inner.start_tls(ssl_context, server_hostname, self._deadline.left(timeout))
        return _Stream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    def __init__(self, deadline: Deadline, allow_private: bool) -> None:
        import httpcore

        self._inner = httpcore.SyncBackend()
        self._deadline = deadline
        self._allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _Stream:
        target = host
        if not self._allow_private:
            target = self._checked_address(host, port)
        stream = self._inner.connect_tcp(
            target, port, self._deadline.left(timeout), local_address, socket_options
        )
        return _Stream(stream, self._deadline)

    def _checked_address(self, host: str, port: int) -> str:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            import httpcore

            raise httpcore.ConnectError(f"cannot resolve {host} ({exc})") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        refused = [a for a in addresses if not is_public(a)]
        if refused or not addresses:
            raise RefusedAddress(
                f"{host} is a local or private address ({refused[0] if refused else 'none'});"
                " not fetched here"
            )
        return addresses[0]

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _Stream:
        raise RefusedAddress(f"unix socket {path}: not fetched")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(min(seconds, self._deadline.left(seconds)))


def guarded_transport(url: str, deadline: Deadline, *, allow_private: bool) -> httpx.HTTPTransport:
    """httpx's own transport (its request/response and error mapping) over a connection
    pool whose sockets carry the deadline and the address policy. With `allow_private`,
    the environment's proxy for the URL (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) is used, as
    httpx would; without it, never."""
    import httpcore
    import httpx

    transport = httpx.HTTPTransport(trust_env=allow_private)
    backend = _Backend(deadline, allow_private)
    context = httpx.create_ssl_context(trust_env=allow_private)
    proxy = _env_proxy(url) if allow_private else None
    # The one private attribute used: HTTPTransport takes no network backend of its own.
    if proxy is not None:
        transport._pool = httpcore.HTTPProxy(
            proxy_url=proxy,
            ssl_context=context,
            network_backend=backend,  # type: ignore[arg-type]
        )
    else:
        transport._pool = httpcore.ConnectionPool(
            ssl_context=context,
            network_backend=backend,  # type: ignore[arg-type]
        )
    return transport


def _env_proxy(url: str) -> str | None:
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy
