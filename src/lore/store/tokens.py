"""SQL for the access tokens of `lore serve` (SQLite schema m005_tokens, PostgreSQL
m005_tokens). Only the sha256 of a secret is stored; the secret itself is shown once, when
it is made (lore.tokens). The statements are the same on both backends, so they live here
once, over each backend's `query`, `execute` and `transaction`."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .token_rows import StoredToken, TokenRow

_COLUMNS = "name, principal, can_write, created, revoked, last_used"


class _Sql(Protocol):
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int: ...
    def transaction(self) -> AbstractContextManager[None]: ...


def _row(values: Sequence[object]) -> TokenRow:
    from .token_rows import TokenRow  # the rows are made when a token is read

    name, principal, can_write, created, revoked, last_used = values
    return TokenRow(
        str(name),
        None if principal is None else str(principal),
        bool(can_write),
        str(created),
        None if revoked is None else str(revoked),
        None if last_used is None else str(last_used),
    )


class TokenSql:
    """Mixed into both stores (SqliteStore, PostgresStore)."""

    def add_token_row(self: _Sql, row: TokenRow, secret_hash: str) -> None:
        with self.transaction():
            self.execute(
                f"INSERT INTO tokens({_COLUMNS}, hash) VALUES (?,?,?,?,?,?,?)",
                (
                    row.name,
                    row.principal,
                    int(row.can_write),
                    row.created,
                    row.revoked,
                    row.last_used,
                    secret_hash,
                ),
            )

    def token_by_name(self: _Sql, name: str) -> TokenRow | None:
        rows = self.query(f"SELECT {_COLUMNS} FROM tokens WHERE name = ?", [name])
        return _row(rows[0]) if rows else None

    def token_by_hash(self: _Sql, secret_hash: str) -> TokenRow | None:
        rows = self.query(f"SELECT {_COLUMNS} FROM tokens WHERE hash = ?", [secret_hash])
        return _row(rows[0]) if rows else None

    def token_rows(self: _Sql) -> list[TokenRow]:
        return [_row(r) for r in self.query(f"SELECT {_COLUMNS} FROM tokens ORDER BY name")]

    def stored_tokens(self: _Sql) -> list[StoredToken]:
        """Every token with the hash of its secret, by name (for `lore migrate`)."""
        from .token_rows import StoredToken

        rows = self.query(f"SELECT {_COLUMNS}, hash FROM tokens ORDER BY name")
        return [StoredToken(_row(r[:-1]), str(r[-1])) for r in rows]

    def revoke_token_row(self: _Sql, name: str, when: str) -> bool:
        """Mark `name` revoked; False when there is no such valid token."""
        with self.transaction():
            changed = self.execute(
                "UPDATE tokens SET revoked = ? WHERE name = ? AND revoked IS NULL", (when, name)
            )
        return changed > 0

    def touch_token(self: _Sql, name: str, when: str) -> None:
        """Record a use (at most one write per token and minute: `when` is to the minute)."""
        with self.transaction():
            self.execute(
                "UPDATE tokens SET last_used = ? WHERE name = ? AND coalesce(last_used, '') < ?",
                (when, name, when),
            )
