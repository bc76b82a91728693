"""The errors lore raises. Every one carries a one-line message meant for the user and,
where there is one, the remedy (`hint`).

    LoreError
    ├── ConfigError          a setting or argument is wrong (names the setting or argument)
    ├── VaultError           the vault path is missing, not a folder, or unreadable
    ├── PathError            a path escapes the vault or is not a note in it
    │   └── NotFoundError    no such note (or trash item) in the index
    ├── AccessError          the caller's access rules or token do not allow this
    ├── ConflictError        a note changed since the caller read it: nothing written
    ├── IndexError_          the index cannot be used as it is
    │   ├── IndexBusyError   another process holds the write lock
    │   ├── IndexFullError   the disk is full: nothing was written
    │   ├── IndexReadOnlyError  the index can be read but not updated
    │   ├── VaultMismatchError  the index belongs to another vault
    │   ├── SchemaError      the index was written by a newer lore, or is damaged
    │   └── NoIndexError     the vault has no index yet (`lore index PATH` makes one)
    ├── QueryError           a query argument cannot be used (a bad date, a bad limit)
    └── CaptureError         a page or file cannot be captured (names the URL or file)
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=1)
def _unsafe() -> re.Pattern[str]:
    """C0/C1 controls, bidirectional marks/overrides/isolates, lone surrogates (undecodable
    bytes); U+2028/U+2029 end a line too (str.splitlines, many terminals). Compiled when a
    message is first made, not by every process that imports the errors."""
    return re.compile(
        r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
    )


def shown(text: str) -> str:
    """A user-supplied string (a path, an argument) as it may appear in a one-line message:
    its repr() when it holds characters that could break the line, recolour a terminal or
    reorder what is displayed; as it is otherwise."""
    return repr(text) if _unsafe().search(text) else text


def quoted_safely(text: object, limit: int = 160) -> str:
    """Words lore did not write (SQLite's own message about a damaged file, which can hold
    any bytes of a damaged page) fit for a one-line message: each unsafe character as its
    escape, at most `limit` characters."""
    escaped = _unsafe().sub(lambda m: repr(m.group())[1:-1], str(text))
    return escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"


def install_hint(extra: str) -> str:
    """How to add an optional part: from the lore checkout (`lore` on PyPI is an unrelated
    project, so `pip install lore[...]` would install someone else's package)."""
    from pathlib import Path

    return install_command(extra, Path(__file__).resolve().parents[2])  # src/lore/errors.py


def install_command(extra: str, checkout: object) -> str:
    """The command that adds `extra` to the Python running lore, from `checkout` when it is
    lore's source tree: it names the checkout and this Python's pip, so it can be pasted in
    any folder (a user runs `lore` in a vault, where `.` is not the checkout)."""
    import shlex
    import sys
    from pathlib import Path

    root = Path(str(checkout))
    if not (root / "pyproject.toml").is_file() or not (root / "src" / "lore").is_dir():
        return f"in the lore checkout run: .venv/bin/pip install -e '.[{extra}]'"
    target = shlex.quote(f"{root}[{extra}]")
    return f"run: {shlex.quote(sys.executable)} -m pip install -e {target}"


class LoreError(Exception):
    """Base of every error lore raises on purpose; `str()` is the one-line message."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class ConfigError(LoreError):
    pass


class VaultError(LoreError):
    pass


class PathError(LoreError):
    pass


class NotFoundError(PathError):
    pass


class AccessError(LoreError):
    pass


class ConflictError(LoreError):
    pass


class IndexError_(LoreError):  # noqa: N801 - the builtin IndexError is taken
    pass


class IndexBusyError(IndexError_):
    pass


class IndexFullError(IndexError_):
    pass


class IndexReadOnlyError(IndexError_):
    pass


class VaultMismatchError(IndexError_):
    pass


class SchemaError(IndexError_):
    pass


class NoIndexError(IndexError_):
    pass


class QueryError(LoreError):
    pass


class CaptureError(LoreError):
    pass
