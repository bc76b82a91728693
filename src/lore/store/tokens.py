"""SQL for the access tokens of `lore serve` (schema m005_tokens). Only the sha256 of a
secret is stored; the secret itself is shown once, when it is made (lore.tokens)."""

from __future__ import annotations

from dataclasses import dataclass

from .sqlite import SqliteStore

_COLUMNS = "name, principal, can_write, created, revoked, last_used"


@dataclass(frozen=True)
class TokenRow:
    name: str
    principal: str | None  # None: the owner's token, sees everything
    can_write: bool
    created: str
    revoked: str | None
    last_used: str | None


def _row(values: tuple[object, ...]) -> TokenRow:
    name, principal, can_write, created, revoked, last_used = values
    return TokenRow(
        str(name),
        None if principal is None else str(principal),
        bool(can_write),
        str(created),
        None if revoked is None else str(revoked),
        None if last_used is None else str(last_used),
    )


def insert(
    store: SqliteStore,
    *,
    name: str,
    secret_hash: str,
    principal: str | None,
    can_write: bool,
    created: str,
) -> None:
    with store.transaction():
        store.db.execute(
            "INSERT INTO tokens(name, hash, principal, can_write, created) VALUES (?,?,?,?,?)",
            (name, secret_hash, principal, int(can_write), created),
        )


def by_name(store: SqliteStore, name: str) -> TokenRow | None:
    rows = store.query(f"SELECT {_COLUMNS} FROM tokens WHERE name = ?", [name])
    return _row(rows[0]) if rows else None


def by_hash(store: SqliteStore, secret_hash: str) -> TokenRow | None:
    rows = store.query(f"SELECT {_COLUMNS} FROM tokens WHERE hash = ?", [secret_hash])
    return _row(rows[0]) if rows else None


def all_rows(store: SqliteStore) -> list[TokenRow]:
    return [_row(r) for r in store.query(f"SELECT {_COLUMNS} FROM tokens ORDER BY name")]


def revoke(store: SqliteStore, name: str, when: str) -> bool:
    """Mark `name` revoked; False when there is no such valid token."""
    with store.transaction():
        store.db.execute(
            "UPDATE tokens SET revoked = ? WHERE name = ? AND revoked IS NULL", (when, name)
        )
        return bool(store.db.changes())


def touch(store: SqliteStore, name: str, when: str) -> None:
    """Record a use (at most one write per token and minute: `when` is to the minute)."""
    with store.transaction():
        store.db.execute(
            "UPDATE tokens SET last_used = ? WHERE name = ? AND coalesce(last_used, '') < ?",
            (when, name, when),
        )
