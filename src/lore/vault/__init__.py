"""The Vault façade: the composition root that the CLI, the MCP server and Python users share.

import lore
with lore.open("~/notes") as vault:
    vault.sync()
    for hit in vault.search("客户去重规则 v2"):
        print(hit.path, hit.date, hit.heading, hit.snippet)

One class in parts by role: `core` (the composition root: store, providers, settings,
clock; lifecycle, indexing, search, access), `notes`, `memory` (memory, the interest map,
reports) and `status`; `paths` finds the vault and its index.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..config import load_lore_settings, with_overrides
from ..errors import NoIndexError, shown
from ..providers.settings import PROVIDER_NAMES, ProviderSettings
from ..providers.settings import with_overrides as providers_with
from ..store.sqlite import default_db_path
from .memory import MemoryFacade
from .notes import NoteFacade, note_json
from .paths import broad_folder, index_path, resolve_vault
from .status import StatusFacade

if TYPE_CHECKING:
    from ..settings import Settings
    from .reports import Status as Status

__all__ = [
    "Status",
    "Vault",
    "broad_folder",
    "index_path",
    "note_json",
    "open_vault",
    "resolve_vault",
]


def __getattr__(name: str) -> Any:
    # `Status` is made where `status()` makes one (lore.vault.reports), not by every open.
    if name == "Status":
        from .reports import Status

        return Status
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Vault(NoteFacade, MemoryFacade, StatusFacade):
    """An open vault and its index. Use as a context manager, or call `close()`."""


def open_vault(
    vault: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    *,
    create: bool = True,
    settings: Settings | None = None,
    **overrides: Any,
) -> Vault:
    """Open a vault (default: $LORE_VAULT, then the current folder) and its index.

    `settings` (lore.settings.Settings, every section): use these instead of reading the
    config files and LORE_*; `overrides` ([lore] settings by name, and `db`) apply on top
    either way. With `create=False` a vault without an index is refused (NoIndexError,
    whose hint is the command that makes one) instead of getting a new, empty index: the
    command line makes a first index only when asked to (`lore index PATH`)."""
    if vault is None:
        vault = os.environ.get("LORE_VAULT") or "."
    root = resolve_vault(vault)
    if settings is None:
        loaded = load_lore_settings(root, db=db, **overrides)
        providers = ProviderSettings.of(loaded)
    else:
        loaded = with_overrides(settings.lore, {"db": db, **overrides})
        given = {k: v for k, v in overrides.items() if k in PROVIDER_NAMES}
        providers = providers_with(settings.providers, given)
    if not create and not isinstance(loaded.db, str):  # a database is asked, not looked at
        db_path = index_path(root, loaded)
        if not db_path.exists():
            import shlex  # only to say how to make the index

            where = [shlex.quote(str(root))]
            if db_path != default_db_path(root):
                where += ["--db", shlex.quote(str(db_path))]
            raise NoIndexError(
                f"{shown(str(root))} has no lore index yet",
                hint=f"create one with `lore index {' '.join(where)}`",
            )
    return Vault(root, loaded, settings, providers)
