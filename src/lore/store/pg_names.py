"""The names the PostgreSQL store is reached by (issue 15): the database URL as messages
show it (without its password), the vault's namespace (a schema) and the advisory lock
that serialises its syncs, and the statements' `?` parameters in psycopg's spelling."""

from __future__ import annotations

import re
import zlib
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import ConfigError

_NAMESPACE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def redacted(url: str) -> str:
    """The URL without its password (in the user part or a `password=` parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = [(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query)]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/*")))


def namespace_for(url: str, vault_root: Path) -> tuple[str, str]:
    """(the URL libpq gets, the vault's schema name): `vault=` is lore's own parameter,
    taken out of the URL; without it the vault folder's name, folded to a SQL name."""
    parts = urlsplit(url)
    params = parse_qsl(parts.query, keep_blank_values=True)
    named = [v for k, v in params if k == "vault"]
    rest = [(k, v) for k, v in params if k != "vault"]
    if named:
        name = named[-1]
        if not _NAMESPACE.match(name):
            raise ConfigError(
                f"database URL {redacted(url)}: vault={name!r} is not a namespace name",
                hint="use lower-case letters, digits and _ (at most 63, not starting with a digit)",
            )
    else:
        folded = re.sub(r"[^a-z0-9_]+", "_", vault_root.name.casefold()).strip("_")
        name = ("vault_" + folded)[:63] if folded else "vault"
    return urlunsplit(parts._replace(query=urlencode(rest))), name


# What a `?` may stand inside without being a parameter: a string literal ('…', with ''
# for a quote; E'…' also with backslash escapes), a quoted name ("…"), a dollar-quoted
# body ($tag$…$tag$), a comment (-- to the end of the line, /* … */).
_NOT_PARAMETERS = re.compile(
    r"""(?<![\w$])[eE]'(?:[^'\\]|\\.|'')*'?|'(?:[^']|'')*'?|"(?:[^"]|"")*"?"""
    r"|(?<![\w$])(\$[A-Za-z_]*\$)[\s\S]*?(?:\1|$)|--[^\n]*|/\*[\s\S]*?(?:\*/|$)|\?"
)


@lru_cache(maxsize=1024)
def psycopg_sql(sql: str) -> str:
    """The statement with each `?` parameter written as psycopg's `%s`; a `?` inside a
    literal, a quoted name or a comment is left as it is (psycopg's own placeholders pass
    through)."""
    return _NOT_PARAMETERS.sub(lambda m: "%s" if m.group() == "?" else m.group(), sql)


def lock_key(namespace: str) -> int:
    """The advisory lock of one vault's schema (a 32-bit key of its name)."""
    return zlib.crc32(namespace.encode())
