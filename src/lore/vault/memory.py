"""Agent memory and the interest map through the vault: each call hands the service
(lore.memory, lore.interest) what it needs, never the Vault."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    # Indexing and checking are imported when called: a one-shot `lore search` process
    # pays for what it runs (YAML, the ignore rules, the embedder are not on its path).
    from ..interest.model import InterestMap
    from ..interest.report import Report
    from ..memory.model import (
        CheckReport,
        ContextView,
        DigestReport,
        LookupResult,
        Memory,
        RecentResult,
        Snapshot,
    )
from .core import VaultCore


class MemoryFacade(VaultCore):
    """Memory (remember, lookup, context, ...), the interest map and reports."""

    def remember(
        self,
        text: str,
        *,
        entities: list[str] | tuple[str, ...] = (),
        status: str = "claimed",
        source: str | None = None,
        trust: str = "inferred",
        at: dt.datetime | None = None,
        principal: str | None = None,
    ) -> Memory:
        """Append an entry to today's daily note (memory/YYYY-MM-DD.md) and index it;
        `principal` may write only where its access rules allow."""
        from ..memory.write import remember

        return remember(
            self._memory,
            text,
            entities=entities,
            status=status,
            source=source,
            trust=trust,
            at=at,
            principal=principal,
        )

    def digest(
        self,
        data: str,
        *,
        name: str = "stdin",
        date: str | None = None,
        trust: str = "inferred",
        use_llm: bool = True,
    ) -> DigestReport:
        """Extract decisions, conclusions, open items and lessons into the day's note: by
        the configured LLM (cached, grounded; heuristic on failure) unless `use_llm` is
        False, else heuristically. `.method` names the extractor, `.notices` what failed."""
        from ..memory.digest import digest

        return digest(self._memory, data, name=name, date=date, trust=trust, use_llm=use_llm)

    def lookup(self, query: str, *, limit: int = 5, principal: str | None = None) -> LookupResult:
        """L1 entity card → L2 index → L3 raw scan → L4 not found; the answer names its level."""
        from ..memory.lookup import lookup

        return lookup(self._memory, query, limit=limit, principal=principal)

    def recent(
        self, *, days: int = 7, limit: int = 20, principal: str | None = None
    ) -> RecentResult:
        """Entities and notes active in the last `days` days, with their activity."""
        from ..memory.recent import recent

        return recent(self._memory, days=days, limit=limit, principal=principal)

    def context(
        self, task: str, *, budget: int = 4096, principal: str | None = None
    ) -> ContextView:
        """Core conclusions, entity cards and the best evidence for a task, within `budget`."""
        from ..memory.context import context

        return context(self._memory, task, budget=budget, principal=principal)

    def snapshot(self, *, principal: str | None = None, budget: int = 2048) -> Snapshot:
        """A 1–2 KB cold-start summary: open items, recent discussion, next steps."""
        from ..memory.snapshot import snapshot

        return snapshot(self._memory, principal=principal, budget=budget)

    def check(
        self, *, fix: bool = False, stale_days: int | None = None, principal: str | None = None
    ) -> CheckReport:
        """Memory hygiene findings; with `fix`, repair what is mechanical; `principal`
        checks only what it may see."""
        from ..memory.check import check

        return check(self._memory, fix=fix, stale_days=stale_days, principal=principal)

    def entity_card(
        self, path: str, *, name: str | None = None, principal: str | None = None
    ) -> dict[str, Any] | None:
        """The entity card the note at `path` defines (the one called `name`), as `lookup`
        shows it at L1 (None: the note is no card)."""
        from ..memory.lookup import card_at

        return card_at(self._memory, self.relative_path(path), name=name, principal=principal)

    # -- the interest map (lore.interest) -------------------------------------------------------
    def build_clusters(self, *, today: dt.date | None = None, **overrides: Any) -> InterestMap:
        """Cluster the indexed notes into an interest map and store it (replacing the last
        one; cluster ids stay stable). `overrides` are interest settings by name
        (`cluster_algo="hierarchical"`, `min_size=3`, ...; see lore.interest.settings).
        Uses the stored vectors, or the notes' words when there are none; calls no
        embedding model. `today` (default: LORE_TODAY, else today) anchors the trends."""
        from ..interest.build import build_map
        from ..interest.settings import with_overrides
        from ..providers.none import Absent

        settings = with_overrides(self._settings.interest(), overrides)
        chat = None
        if settings.llm_labels != "off":
            provider = self.capabilities.chat()
            chat = None if isinstance(provider, Absent) else provider
            if chat is None and settings.llm_labels == "on":
                raise ConfigError("llm_labels on: no LLM configured", hint="set LORE_LLM_PROVIDER")
        return build_map(self.store, settings, today=today or self.today(), chat=chat)

    def clusters(self) -> InterestMap | None:
        """The stored interest map, exactly as last built (None before the first
        `lore clusters build`); a message says when the index changed since."""
        from ..interest.build import load

        return load(self.store)

    def visible_clusters(self, *, principal: str | None = None) -> InterestMap | None:
        """The stored interest map as `principal` may see it: clusters re-described from
        their visible members alone (lore.interest.scope)."""
        from ..interest.labels import note_tags
        from ..interest.scope import scope_map

        stored = self.clusters()
        access = self.access(principal)
        if stored is None or access.unrestricted:
            return stored
        return scope_map(stored, access, note_tags(self.store))

    # -- reports (lore.interest.report) ---------------------------------------------------------
    def report(
        self,
        *,
        since: str | None = None,
        today: dt.date | str | None = None,
        limit: int = 50,
    ) -> Report:
        """New notes since `since` (default: the last 7 days, or the 7 days up to the newest
        note), top tags, active entities and the stored interest map (None when
        `lore clusters build` has not run). Reads the index; never reclusters."""
        from ..interest.report import build_report

        return build_report(
            self.store,
            self.clusters(),
            vault_name=self.root.name,
            recent=lambda days, limit: self.recent(days=days, limit=limit),
            clock=self.today,
            since=since,
            today=today,
            limit=limit,
        )
