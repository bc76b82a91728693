"""What the memory services are given instead of the `Vault`: the vault's folder, its
store, the memory settings (read once, again only when the config file changes), a
searcher and a syncer, and the few settings and capabilities they use. `lore.vault` builds
one per opened vault; memory never imports the vault, and `Vault.search` calling into
memory and memory searching back is a call through `search`, not an import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..model import SearchResult
from .access import Access
from .registry import Registry

if TYPE_CHECKING:
    from ..capabilities import Capabilities
    from ..model.sync import SyncReport
    from ..store.base import Store
    from .settings import MemorySettings


class Searcher(Protocol):
    """A vault's search, as the memory path calls it (lore.vault.Vault.search)."""

    def __call__(
        self, query: str, limit: int = 10, *, principal: str | None = None
    ) -> SearchResult: ...


class Syncer(Protocol):
    """Brings the index up to date with the files (lore.vault.Vault.sync)."""

    def __call__(self) -> SyncReport: ...


class MemoryServices:
    # A plain class: every search makes one, and a dataclass costs a cold process to define.
    def __init__(
        self,
        *,
        root: Path,
        store: Store,
        memory_settings: Callable[[], MemorySettings],  # as they are now (lore.settings)
        search: Searcher,
        sync: Syncer,
        capabilities: Capabilities,  # the chat model a digest may use, and its failures
        mode: Callable[[], str],  # the capability mode searches run in now
        highlight: tuple[str, str],
        gitignore: bool,
    ) -> None:
        self.root = root
        self.store = store
        self.memory_settings = memory_settings
        self.search = search
        self.sync = sync
        self.capabilities = capabilities
        self.mode = mode
        self.highlight = highlight
        self.gitignore = gitignore
        self._registries: dict[tuple[tuple[int, int], tuple[str, ...] | None], Registry] = {}

    @property
    def settings(self) -> MemorySettings:
        return self.memory_settings()

    def registry(self, access: Access) -> Registry:
        """The entities `access` may see, built once until the index changes (every search
        that expands aliases needs it; rebuilding it per query read every card row). Keyed
        by the generation read before the rows: a change made meanwhile is never served."""
        generation = self.store.generation()
        key = (generation, access.patterns)
        registry = self._registries.get(key)
        if registry is None:
            registry = Registry.build(self.store.entity_rows(), access)
            if any(old != generation for old, _patterns in self._registries):
                self._registries = {}  # an older index: those are stale
            self._registries[key] = registry
        return registry
