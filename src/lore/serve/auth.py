"""Who a request is, and what it may do: tokens (a bearer header for scripts and agents,
an HttpOnly cookie for the pages), CSRF tokens for forms, and a rate limit per token.

On a loopback address without `--require-token`, a request without a token is the
vault's owner (it could read the files anyway); a request that presents a token is that
token, and a token that is unknown or revoked is refused, never ignored.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Callable
from dataclasses import dataclass
from http.cookies import SimpleCookie

from ..tokens import TokenInfo

COOKIE = "lore_token"
LANG_COOKIE = "lore_lang"


@dataclass(frozen=True)
class Identity:
    """The caller of one request."""

    token: str | None  # the token's name; None: the owner on a loopback address
    principal: str | None  # the [access] principal; None: sees everything
    can_write: bool
    via: str  # local | bearer | cookie

    @property
    def key(self) -> str:
        """What the rate limit and CSRF tokens are bound to."""
        return f"token:{self.token}" if self.token is not None else "local"

    @classmethod
    def local(cls) -> Identity:
        return cls(None, None, True, "local")

    @classmethod
    def of(cls, info: TokenInfo, via: str) -> Identity:
        return cls(info.name, info.principal, info.can_write, via)


def presented_secret(headers: dict[str, str]) -> tuple[str | None, str]:
    """(the secret a request presents, how): `Authorization: Bearer …` first, then the
    page cookie; (None, "local") when there is none."""
    auth = headers.get("authorization", "")
    if auth:
        scheme, _, value = auth.partition(" ")
        return (value.strip() if scheme.lower() == "bearer" else auth), "bearer"
    cookie = headers.get("cookie", "")
    if cookie:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(cookie)
        except Exception:  # a malformed Cookie header is as if there were none
            return None, "local"
        if COOKIE in jar:
            return jar[COOKIE].value, "cookie"
    return None, "local"


def csrf_token(secret: bytes, identity: Identity) -> str:
    """The token a form of this caller carries (stable for the server's life)."""
    return hmac.new(secret, identity.key.encode(), hashlib.sha256).hexdigest()[:40]


def csrf_ok(secret: bytes, identity: Identity, presented: str | None) -> bool:
    return bool(presented) and hmac.compare_digest(
        csrf_token(secret, identity), str(presented)[:200]
    )


class RateLimiter:
    """A token bucket per caller: `rate` requests a minute, up to `burst` at once. The
    clock is injected (seconds, monotonic), so tests need no sleeps."""

    def __init__(self, rate: int, burst: int, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key → (tokens, at)

    def take(self, key: str) -> float:
        """0 when the request may go on, else the seconds to wait before the next one."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate / 60.0)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) * 60.0 / self.rate

    @staticmethod
    def retry_after(wait: float) -> str:
        return str(max(1, math.ceil(wait)))
