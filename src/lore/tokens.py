"""Access tokens for `lore serve`: each names a principal of the vault's `[access]` table
(or the owner, who sees everything) and whether it may write.

    token = add_token(store, "alice-laptop", principal="guest", can_write=False)
    token.secret            # shown once: "lore_…"; only its sha256 is kept in the index
    verify_token(store, token.secret)  → TokenInfo, or None (unknown, revoked)
    revoke_token(store, "alice-laptop")

Secrets are 32 random bytes, so a plain sha256 is enough to keep them (nothing to guess
from a hash of a random value); a lookup by hash leaks nothing a timing attack could use.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, NotFoundError, shown
from .store.base import Store
from .store.token_rows import TokenRow

PREFIX = "lore_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
MAX_SECRET = 200  # longer presented secrets are refused without hashing

Clock = Callable[[], dt.datetime]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class TokenInfo:
    """A token as the index keeps it (never its secret)."""

    name: str
    principal: str | None  # None: the owner (every note)
    can_write: bool
    created: str
    revoked: str | None = None
    last_used: str | None = None

    @property
    def valid(self) -> bool:
        return self.revoked is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "principal": self.principal,
            "owner": self.principal is None,
            "write": self.can_write,
            "created": self.created,
            "revoked": self.revoked,
            "last_used": self.last_used,
        }


@dataclass(frozen=True)
class NewToken:
    info: TokenInfo
    secret: str  # the only time it exists outside the holder's hands

    def to_dict(self) -> dict[str, Any]:
        return {**self.info.to_dict(), "secret": self.secret}


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _info(row: TokenRow) -> TokenInfo:
    return TokenInfo(
        row.name, row.principal, row.can_write, row.created, row.revoked, row.last_used
    )


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise ConfigError(
            f"token name {shown(name)!s}: use 1-64 letters, digits, '.', '_', '@' or '-',"
            " starting with a letter or digit"
        )
    return name


def add_token(
    store: Store,
    name: str,
    *,
    principal: str | None,
    can_write: bool = False,
    clock: Clock = _now,
) -> NewToken:
    """Make a token; refuses a name already used (revoked ones included: names are not
    reused, so logs stay unambiguous)."""
    check_name(name)
    if principal is not None and not principal.strip():
        raise ConfigError("--as: the principal is empty")
    if store.token_by_name(name) is not None:
        raise ConfigError(
            f"token {name!r} exists already", hint="choose another name, or revoke that one"
        )
    secret = PREFIX + secrets.token_urlsafe(32)
    created = clock().isoformat(timespec="seconds")
    store.add_token_row(
        TokenRow(name, principal, can_write, created, None, None), secret_hash(secret)
    )
    return NewToken(TokenInfo(name, principal, can_write, created), secret)


def list_tokens(store: Store) -> list[TokenInfo]:
    return [_info(row) for row in store.token_rows()]


def revoke_token(store: Store, name: str, *, clock: Clock = _now) -> TokenInfo:
    if not store.revoke_token_row(name, clock().isoformat(timespec="seconds")):
        known = store.token_by_name(name)
        if known is None:
            raise NotFoundError(f"no token named {shown(name)}", hint="see `lore token list`")
        raise ConfigError(f"token {name!r} was revoked already ({known.revoked})")
    row = store.token_by_name(name)
    assert row is not None
    return _info(row)


def verify_token(store: Store, secret: str) -> TokenInfo | None:
    """The valid token whose secret this is; None when unknown or revoked."""
    if not secret.startswith(PREFIX) or len(secret) > MAX_SECRET:
        return None
    row = store.token_by_hash(secret_hash(secret))
    if row is None or row.revoked is not None:
        return None
    return _info(row)


def record_use(store: Store, name: str, *, clock: Clock = _now) -> None:
    store.touch_token(name, clock().isoformat(timespec="minutes"))
