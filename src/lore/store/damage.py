"""Which exceptions mean the index file itself is damaged, told by name so that the
command line can ask without importing the database driver (`lore --help` stays light)."""

from __future__ import annotations

# (module, class name) of the SQLite driver's errors for a damaged or foreign file.
_DAMAGE = {("apsw", "CorruptError"), ("apsw", "NotADBError")}


def is_damage(exc: BaseException) -> bool:
    return (type(exc).__module__, type(exc).__name__) in _DAMAGE
