"""The rows of `lore serve`'s access tokens (lore.store.tokens): made when a token is read,
never by a search."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenRow:
    name: str
    principal: str | None  # None: the owner's token, sees everything
    can_write: bool
    created: str
    revoked: str | None
    last_used: str | None


@dataclass(frozen=True)
class StoredToken:
    """A token as `lore migrate` copies it: its row and the hash of its secret."""

    row: TokenRow
    secret_hash: str
