"""The vault's composition root and what every service is built on: lifecycle, the
settings and clock, indexing, search, and who may see what (lore.vault)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from ..capabilities import Capabilities
from ..config import LoreSettings
from ..errors import PathError, shown
from ..model import SearchResult
from ..providers.settings import ProviderSettings

if TYPE_CHECKING:
    # Indexing and checking are imported when called: a one-shot `lore search` process
    # pays for what it runs (YAML, the ignore rules, the embedder are not on its path).
    from ..index.embed import EmbedReport
    from ..memory.access import Access
    from ..memory.derive import MemoryViews
    from ..memory.services import MemoryServices
    from ..memory.settings import MemorySettings
    from ..model.sync import SyncReport
    from ..settings import Settings
    from ..store.base import Store
from ..retrieve.budget import QueryCosts
from ..retrieve.budget import budget_ms as budget_ms_from
from ..retrieve.hybrid import hybrid_search
from ..retrieve.query import check_query
from ..retrieve.search import SearchOptions, make_filters
from ..store.sqlite import TOKENIZER_VERSION, SqliteStore
from .paths import index_path, prepare_index_folder
from .settings import SettingsSource


class VaultCore:
    """The composition root every part of the façade shares: it builds the store, the
    capabilities (providers), the settings and the clock, and hands the services what they
    need. `settings` is the [lore] section, `providers` the providers section (by default
    the one `settings` holds); every section (lore.settings) is read here, once.
    Lifecycle, indexing, search and who may see what live here too: each service is built
    on them."""

    def __init__(
        self,
        root: Path,
        settings: LoreSettings,
        given: Settings | None = None,
        providers: ProviderSettings | None = None,
    ) -> None:
        self.root = root
        self.settings = settings
        self._settings = SettingsSource(root, settings, given, providers)
        self.providers = self._settings.providers
        self.store: Store
        if isinstance(settings.db, str):  # a database server (lore.store.postgres)
            from ..store.postgres import PostgresStore

            self.store = PostgresStore(settings.db, root)
        else:
            in_vault = settings.db is None
            if in_vault:
                prepare_index_folder(root)
            db_path = index_path(root, settings)
            bound = db_path.resolve().parent == (root / ".lore").resolve()
            self.store = SqliteStore(db_path, root, bound_to_vault=bound, nofollow=in_vault)
        self.capabilities = Capabilities(settings, self.providers, self.store)
        # What each part of a search costs here: what a query's time budget decides on.
        self.query_costs = QueryCosts()
        self._notices = list(settings.notices)
        if self.store.read_only:
            self._notices.append(
                f"index {self.store.db_path} is read-only: answers come from it as it is, and it"
                " cannot be updated (make it writable, or use --db or LORE_DB for another index)"
            )

    # -- what the services are given (lore.memory, lore.interest: never the Vault) ------------
    @property
    def _memory_settings(self) -> MemorySettings:
        """The `[memory]` and `[access]` settings (lore.vault.settings.SettingsSource)."""
        return self._settings.memory()

    def today(self) -> dt.date:
        """The date lore takes as today: LORE_TODAY, `[memory] today` or the `settings`
        given to `lore.open`, else the machine's. Every dated answer and write uses it."""
        return self._settings.today()

    @cached_property
    def _memory(self) -> MemoryServices:
        """What the memory services (lookup, remember, context, ...) work with."""
        from ..memory.services import MemoryServices

        return MemoryServices(
            root=self.root,
            store=self.store,
            memory_settings=self._settings.memory,
            search=self.search,
            sync=self.sync,
            capabilities=self.capabilities,
            mode=lambda: self.mode,
            highlight=self.settings.highlight,
            gitignore=self.settings.gitignore,
        )

    @cached_property
    def derived_views(self) -> MemoryViews:
        """What every sync keeps in step beside the notes (lore.index.sync.DerivedViews)."""
        from ..memory.derive import MemoryViews

        return MemoryViews(self._settings.memory)

    @property
    def read_only(self) -> bool:
        """The index can be read but not updated (a read-only file, folder or disk)."""
        return self.store.read_only

    def take_notices(self) -> list[str]:
        """What this vault has to say once (a vault setting ignored, a read-only index):
        the first call returns it, later calls nothing. The CLI prints it when it opens
        the vault, the MCP server puts it on its first answer, and `sync()` and
        `search()` put it on their result for whatever is left."""
        notices, self._notices = self._notices, []
        return notices

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        self.capabilities.close()
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def db_path(self) -> Path | str:
        """The index file, or the database URL without its password."""
        return self.store.db_path

    @property
    def mode(self) -> str:
        """The capability mode searches run in now (see lore.capabilities)."""
        return self.capabilities.mode()[0]

    # -- indexing ----------------------------------------------------------------------------
    def sync(
        self,
        progress: Callable[[int, int, str], None] | None = None,
        *,
        llm_budget: int | None = None,
        llm_progress: Callable[[int, int, str], None] | None = None,
        jobs: int | None = None,
    ) -> SyncReport:
        """Bring the index up to date with the files (only what changed is written), then
        derive tags and, with a provider configured, the notes' LLM fields and vectors of
        what changed. `llm_budget` caps the model calls (default: the `llm_budget`
        setting; the rest are made by later syncs); `llm_progress` sees them. `jobs`:
        processes that parse the notes (default: LORE_INDEX_JOBS, else the idle cores for
        a large change; see lore.index.parallel)."""
        from ..index.sync import sync as run_sync

        report = run_sync(
            self.store, self.root, progress=progress, jobs=jobs, **self._scan_settings()
        )
        return self._after_sync(report, force=False, budget=llm_budget, llm_progress=llm_progress)

    def rebuild(
        self,
        progress: Callable[[int, int, str], None] | None = None,
        *,
        llm_budget: int | None = None,
        llm_progress: Callable[[int, int, str], None] | None = None,
        jobs: int | None = None,
    ) -> SyncReport:
        """Drop every derived row and derive it again from the files, in one transaction
        (the notes' LLM fields come back from the stored answers, with no model call).
        `jobs` as for sync."""
        from ..index.sync import sync as run_sync

        report = run_sync(
            self.store,
            self.root,
            rebuild=True,
            progress=progress,
            jobs=jobs,
            **self._scan_settings(),
        )
        return self._after_sync(report, force=True, budget=llm_budget, llm_progress=llm_progress)

    def _scan_settings(self) -> dict[str, Any]:
        return {
            "max_file_bytes": self.settings.max_file_bytes,
            "gitignore": self.settings.gitignore,
            "views": self.derived_views,
        }

    def _after_sync(
        self,
        report: SyncReport,
        *,
        force: bool,
        budget: int | None = None,
        llm_progress: Callable[[int, int, str], None] | None = None,
    ) -> SyncReport:
        told = self.take_notices()
        if self.store.read_only:  # nothing changed (else the sync raised): nothing to derive
            return replace(report, notices=told + report.notices)
        after = self.capabilities.after_sync(
            force=force, llm_budget=budget, llm_progress=llm_progress
        )
        embedded = after.embed.embedded if after.embed else 0
        fields = after.fields.to_dict() if after.fields and after.fields.model else None
        return replace(
            report,
            embedded=embedded,
            notices=told + report.notices + after.notices,
            llm=fields,
        )

    def embed(
        self, *, rebuild: bool = False, progress: Callable[[int, int, str], None] | None = None
    ) -> EmbedReport:
        """Embed every note text that has no vector yet (`rebuild`: drop all vectors first,
        e.g. after changing the model). Syncs the files first. Resumable; a second run
        embeds nothing and calls nothing."""
        from ..index.sync import sync as run_sync

        run_sync(self.store, self.root, **self._scan_settings())
        return self.capabilities.embed(rebuild=rebuild, progress=progress)

    # -- querying ----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        tags: list[str] | tuple[str, ...] | str | None = None,
        tag: str | None = None,
        path: str | None = None,
        since: str | None = None,
        until: str | None = None,
        explain: bool = False,
        mode: str | None = None,
        fusion: str | None = None,
        principal: str | None = None,
        expand_aliases: bool = True,
        include_undated: bool = False,
        category: str | None = None,
        budget_ms: int | None = None,
    ) -> SearchResult:
        """Search. Returns a list of Hit (best first) with `.mode`, `.reason`, `.notices`.

        `mode` asks for a lower mode than the configured one (to compare); `fusion`
        overrides the fuser ("weighted" or "rrf"). `principal` limits everything to the
        paths its access rules allow; `expand_aliases` also searches the other spellings of
        entities the query names (lore.memory). `since`/`until` leave out undated notes
        unless `include_undated`. `category`: only notes of this category (the author's
        `category:`, else the one the LLM chose from `[lore] categories`). `budget_ms`
        (default: LORE_QUERY_BUDGET_MS, else none): answer within about this many
        milliseconds, dropping the LLM plan, then the vector channels, then the polished
        snippets when they would not fit; `.degraded` lists what was dropped."""
        budget = self.query_costs.start(budget_ms_from(budget_ms))
        check_query(query)
        tag_list = [tags] if isinstance(tags, str) else list(tags or [])
        if tag:
            tag_list.append(tag)
        filters = make_filters(
            tag_list, path, since, until, include_undated=include_undated, category=category
        )
        options = SearchOptions(
            limit=limit,
            explain=explain,
            markers=self.settings.highlight,
            field_weights=self.settings.field_weights,
            mode=self.mode,
            max_df_ratio=self.settings.max_df_ratio,
        )
        from ..memory.scope import scope_search

        text, filters, refused = scope_search(
            self._memory, query, filters, principal, expand_aliases, options.mode
        )
        if refused is not None:
            return refused
        result = hybrid_search(
            self.capabilities, text, filters, options, mode=mode, fusion=fusion, budget=budget
        )
        budget.finish()
        result.degraded = list(budget.degraded)
        result.query = query
        result.notices[:0] = self.take_notices()
        derived = self.store.get_meta("tokenizer_version")
        if derived is not None and derived != TOKENIZER_VERSION:
            result.notices.append(
                f"this index was derived by an older lore (version {derived}): run `lore index`"
                " to re-derive it, until then some words may not be found"
            )
        if filters.category and not result:
            result.notices += self._unknown_category(filters.category)
        return result

    def _unknown_category(self, wanted: str) -> list[str]:
        """A notice when no note has the category searched for (a typo, or no LLM yet)."""
        from ..store.note_llm import category_counts
        from ..store.sql_base import sql_store

        known = [name for name, _notes in category_counts(sql_store(self.store))]
        if any(name.casefold() == wanted for name in known):
            return []
        if not known:
            return [
                f"--category {wanted!r}: no note has a category yet (front matter `category:`,"
                " or `[lore] categories` with an LLM)"
            ]
        listed = ", ".join(known[:10]) + (", …" if len(known) > 10 else "")
        return [f"--category {wanted!r}: no note has this category (there are: {listed})"]

    # -- who sees what (issue 16) -------------------------------------------------------------
    def access(self, principal: str | None = None) -> Access:
        """What `principal` may see by the vault's `[access]` rules (None: everything)."""
        from ..memory.access import Access, access_for

        if principal is None:  # the owner: no need to read the rules
            return Access(None, None)
        return access_for(self._memory_settings, principal)

    def relative_path(self, path: str | os.PathLike[str]) -> str:
        """A vault-relative POSIX path for `path`; refuses anything outside the vault."""
        raw = Path(path)
        text = str(path)
        if "\x00" in text:
            raise PathError(f"{text!r}: a path cannot contain NUL")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # undecodable bytes from the command line or a file name
            raise PathError(f"{shown(text)}: a path must be valid UTF-8") from None
        candidate = raw if raw.is_absolute() else self.root / raw
        resolved = Path(os.path.normpath(candidate))
        if resolved != self.root and self.root not in resolved.parents:
            raise PathError(f"{shown(text)}: outside the vault {self.root}")
        real = Path(os.path.realpath(resolved))
        if real != self.root and self.root not in real.parents:
            raise PathError(f"{shown(text)}: resolves outside the vault {self.root}")
        return resolved.relative_to(self.root).as_posix()
