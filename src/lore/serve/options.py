"""What `lore serve` is started with, checked once: where it listens, whether it needs
tokens, what it allows, its limits. Every number has a range; a bad one is one line."""

from __future__ import annotations

import ipaddress
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import ConfigError

DEFAULT_PORT = 8765
MAX_BODY = 1024 * 1024  # bytes of a request body (note texts are capped at 4 MiB by lore.edit)
MAX_QUERY = 4096  # bytes of a query string
MAX_PATH = 2048  # bytes of a request path
DEFAULT_RATE = 600  # requests per token and minute (0: no limit)
DEFAULT_BURST = 60
DEFAULT_THREADS = 8  # vaults open at once for requests (one SQLite connection each)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    allow_write: bool = False
    require_token: bool = False  # forced on for any host that is not a loopback address
    allowed_hosts: tuple[str, ...] = ()  # extra Host names (a reverse proxy's public name)
    allowed_origins: tuple[str, ...] = ()  # extra browser Origins (scheme://host[:port])
    max_body: int = MAX_BODY
    rate: int = DEFAULT_RATE
    burst: int = DEFAULT_BURST
    threads: int = DEFAULT_THREADS
    watch: str = "auto"  # auto | events | poll | off: how the index follows the files
    allow_private_ingest: bool = False  # let `ingest` fetch loopback/private addresses
    secure_cookies: bool = False  # set when served over https (behind a TLS proxy)
    clock: Callable[[], float] = time.monotonic  # for the rate limit (tests inject one)
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))  # CSRF key

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"--port {self.port}: not in 0-65535")
        if not 1024 <= self.max_body <= 64 * 1024 * 1024:
            raise ConfigError(f"--max-body {self.max_body}: not in 1024-{64 * 1024 * 1024}")
        if not 0 <= self.rate <= 1_000_000:
            raise ConfigError(f"--rate {self.rate}: not in 0-1000000 requests a minute")
        if not 1 <= self.burst <= 100_000:
            raise ConfigError(f"--burst {self.burst}: not in 1-100000")
        if not 1 <= self.threads <= 64:
            raise ConfigError(f"--threads {self.threads}: not in 1-64")
        if self.watch not in ("auto", "events", "poll", "off"):
            raise ConfigError(f"--watch {self.watch!r}: one of auto, events, poll, off")
        for origin in self.allowed_origins:
            if not origin.startswith(("http://", "https://")) or origin.count("/") != 2:
                raise ConfigError(
                    f"--allow-origin {origin!r}: give scheme://host[:port], e.g."
                    " https://notes.example.com"
                )

    @property
    def tokens_required(self) -> bool:
        return self.require_token or not is_loopback(self.host)

    def hosts(self, port: int) -> set[str]:
        """Host header values accepted (DNS rebinding: any other name is refused)."""
        names = {self.host, *self.allowed_hosts}
        if is_loopback(self.host):
            names |= {"127.0.0.1", "localhost", "[::1]"}
        out: set[str] = set()
        for name in names:
            shown = f"[{name}]" if ":" in name and not name.startswith("[") else name
            out |= {shown.lower(), f"{shown}:{port}".lower()}
        return out

    def origins(self, port: int) -> set[str]:
        """Origin header values accepted on requests that change something."""
        found = {f"{scheme}://{host}" for host in self.hosts(port) for scheme in ("http", "https")}
        return found | {o.rstrip("/").lower() for o in self.allowed_origins}
