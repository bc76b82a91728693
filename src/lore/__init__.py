"""lore: a local-first knowledge base for people and AI agents.

A folder of Markdown notes is the truth; lore derives a SQLite index from it and answers
questions with the evidence (path, date, heading, snippet) attached.

    import lore
    with lore.open("notes/") as vault:
        vault.sync()
        hits = vault.search("客户去重规则 v2")

Names are imported on first use, so `lore --help` does not pay for SQLite, YAML and the
tokenizer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .version import __version__ as __version__

_EXPORTS = {
    "ConfigError": "errors",
    "IndexBusyError": "errors",
    "IndexFullError": "errors",
    "IndexReadOnlyError": "errors",
    "LoreError": "errors",
    "NoIndexError": "errors",
    "PathError": "errors",
    "QueryError": "errors",
    "SchemaError": "errors",
    "VaultError": "errors",
    "VaultMismatchError": "errors",
    "Explain": "model.explain",
    "Hit": "model",
    "SearchResult": "model",
    "Skipped": "model.sync",
    "SyncReport": "model.sync",
    "DoctorReport": "index.doctor",
    "InterestCluster": "interest.model",
    "InterestMap": "interest.model",
    "CheckReport": "memory.model",
    "ContextView": "memory.model",
    "DigestReport": "memory.model",
    "LookupResult": "memory.model",
    "Memory": "memory.model",
    "MemoryHit": "memory.model",
    "RecentResult": "memory.model",
    "Snapshot": "memory.model",
    "Settings": "settings",
    "load_settings": "settings",
    "Status": "vault",
    "Vault": "vault",
    "open_vault": "vault",
}

__all__ = [
    "CheckReport",
    "ConfigError",
    "ContextView",
    "DigestReport",
    "DoctorReport",
    "Explain",
    "Hit",
    "IndexBusyError",
    "IndexFullError",
    "IndexReadOnlyError",
    "InterestCluster",
    "InterestMap",
    "LookupResult",
    "LoreError",
    "Memory",
    "MemoryHit",
    "NoIndexError",
    "PathError",
    "QueryError",
    "RecentResult",
    "SchemaError",
    "SearchResult",
    "Settings",
    "Skipped",
    "Snapshot",
    "Status",
    "SyncReport",
    "Vault",
    "VaultError",
    "VaultMismatchError",
    "load_settings",
    "open",
    "open_vault",
]

if TYPE_CHECKING:
    from .errors import (
        ConfigError,
        IndexBusyError,
        IndexFullError,
        IndexReadOnlyError,
        LoreError,
        NoIndexError,
        PathError,
        QueryError,
        SchemaError,
        VaultError,
        VaultMismatchError,
    )
    from .index.doctor import DoctorReport
    from .interest.model import InterestCluster, InterestMap
    from .memory.model import (
        CheckReport,
        ContextView,
        DigestReport,
        LookupResult,
        Memory,
        MemoryHit,
        RecentResult,
        Snapshot,
    )
    from .model import Hit, SearchResult
    from .model.explain import Explain
    from .model.sync import Skipped, SyncReport
    from .settings import Settings, load_settings
    from .vault import Status, Vault, open_vault

    open = open_vault  # noqa: A001


def __getattr__(name: str) -> Any:
    if name == "open":
        name = "open_vault"
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lore' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
