"""Which optional parts are present, which mode that gives, and what to do after a sync.

Modes (seed 000): mode1 = LLM + embeddings, mode2 = LLM only, mode3 = embeddings only,
mode4 = neither. A part counts only when it is configured, has not failed in this session,
and (for embeddings) the index holds vectors from that same provider. A part that fails
(endpoint down, timeout, bad answer) is switched off for the rest of the session and the
user is told once; the work finishes in the next lower mode and nothing stored is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .errors import LoreError, install_hint
from .providers.none import Absent

if TYPE_CHECKING:
    from .config import LoreSettings
    from .index.embed import EmbedReport
    from .index.note_llm_sync import FieldsReport
    from .providers.base import ChatProvider, EmbeddingProvider
    from .providers.settings import ProviderSettings
    from .store.base import Store

Progress = Callable[[int, int, str], None]
MODES = ("mode1", "mode2", "mode3", "mode4")


def mode_for(embeddings: bool, llm: bool) -> str:
    return {(True, True): "mode1", (False, True): "mode2", (True, False): "mode3"}.get(
        (embeddings, llm), "mode4"
    )


def mode_parts(mode: str) -> tuple[bool, bool]:
    """(embeddings, llm) that a mode uses."""
    return {"mode1": (True, True), "mode2": (False, True), "mode3": (True, False)}.get(
        mode, (False, False)
    )


class AfterSync:
    """What after_sync did (a plain class: a search, which imports this module, makes none)."""

    def __init__(self) -> None:
        self.derived = 0
        self.embed: EmbedReport | None = None
        self.fields: FieldsReport | None = None
        self.notices: list[str] = []


def _attached(provider: Any, store: Store) -> Any:
    """Give a provider that keeps derived data in the index (local-fast's word table) the
    index to keep it in (an SQLite index: elsewhere the provider keeps it in memory)."""
    from .store.sqlite import SqliteStore

    attach = getattr(provider, "attach", None)
    if attach is not None and isinstance(store, SqliteStore):
        attach(store)
    return provider


class Capabilities:
    def __init__(self, settings: LoreSettings, providers: ProviderSettings, store: Store) -> None:
        self.settings = settings  # how a search ranks (lore.retrieve.hybrid reads it)
        self.providers = providers  # which models, and how much of them a sync may use
        self.store = store
        self._embedder: EmbeddingProvider | Absent | None = None
        self._chat: ChatProvider | Absent | None = None
        self.failed: dict[str, str] = {}  # part -> why it was switched off
        self._told: set[str] = set()
        self._owned: list[Any] = []  # providers made here, closed with the vault

    def close(self) -> None:
        """Stop what the providers made here hold (local worker processes)."""
        for provider in self._owned:
            closer = getattr(provider, "close", None)
            if closer is not None:
                closer()
        self._owned.clear()

    # -- providers -------------------------------------------------------------------------
    def use(
        self,
        *,
        embedder: EmbeddingProvider | Absent | None = None,
        chat: ChatProvider | Absent | None = None,
    ) -> None:
        """Use these provider objects instead of the configured ones (Python API users
        with their own provider, and tests)."""
        if embedder is not None:
            self._embedder = _attached(embedder, self.store)
        if chat is not None:
            self._chat = chat
        self.failed.clear()
        self._told.clear()

    def embedder(self) -> EmbeddingProvider | Absent:
        if self._embedder is None:
            from .providers.registry import embedding_provider

            self._embedder = _attached(embedding_provider(self.providers), self.store)
            self._owned.append(self._embedder)
        return self._embedder

    def chat(self) -> ChatProvider | Absent:
        if self._chat is None:
            from .providers.registry import chat_provider

            self._chat = chat_provider(self.providers)
        return self._chat

    def fail(self, part: str, error: LoreError | str) -> str | None:
        """Switch `part` off for this session; the notice to show, the first time only."""
        reason = str(error)
        self.failed[part] = reason
        if part in self._told:
            return None
        self._told.add(part)
        lower = self.mode()[0]
        return f"{part} unavailable, working in {lower}: {reason}"

    # -- mode ------------------------------------------------------------------------------
    def embeddings_state(self, *, detail: bool = False) -> tuple[bool, str]:
        provider = self.embedder()
        if isinstance(provider, Absent):
            return False, provider.reason
        if "embeddings" in self.failed:
            return False, f"failed in this session: {self.failed['embeddings']}"
        from .index.embed import VEC_LAYOUT, has_vectors, pending_count, stored_identity

        identity, dim = stored_identity(self.store)
        if identity is not None and self.store.get_meta("vec_layout") != VEC_LAYOUT:
            return False, "vectors stored by an older lore: run `lore embed` to redo them"
        if identity is None or not has_vectors(self.store):
            cannot = self.store.vectors_unavailable()
            if cannot is not None:
                return False, f"{provider.identity} configured, but {cannot}"
            return False, f"{provider.identity} configured, but no vectors yet: run `lore embed`"
        if identity != provider.identity:
            return False, (
                f"the index holds vectors from {identity}, not {provider.identity}: "
                "run `lore embed --rebuild`"
            )
        pending = pending_count(self.store, identity) if detail else 0
        note = f"; {pending} note(s) not embedded yet (run `lore embed`)" if pending else ""
        return True, f"{identity} ({dim} dimensions){note}"

    def llm_state(self) -> tuple[bool, str]:
        provider = self.chat()
        if isinstance(provider, Absent):
            return False, provider.reason
        if "llm" in self.failed:
            return False, f"failed in this session: {self.failed['llm']}"
        return True, provider.identity

    def mode(self, *, detail: bool = False) -> tuple[str, dict[str, str]]:
        """The active mode and, per part, what is present or why it is not (`detail`: also
        count the notes still waiting to be embedded, for `lore status`)."""
        emb, emb_why = self.embeddings_state(detail=detail)
        llm, llm_why = self.llm_state()
        return mode_for(emb, llm), {"embeddings": emb_why, "llm": llm_why}

    def semantic_needed(self) -> bool:
        """Does anything read the semantic layer's derived rows (keyword tags, texts to
        embed)? Not in mode 4 with keywords off: the sync then skips deriving them."""
        return self.heuristic_tags() or not isinstance(self.embedder(), Absent)

    def heuristic_tags(self) -> bool:
        """Derive keyword tags from note text? `auto`: when a provider will use them (tag
        vectors, LLM prompts); mode 4 ranks by full text and the authors' own tags."""
        setting = self.settings.heuristic_tags
        if setting != "auto":
            return setting == "on"
        return not isinstance(self.embedder(), Absent) or not isinstance(self.chat(), Absent)

    # -- after a sync ----------------------------------------------------------------------
    def after_sync(
        self,
        *,
        force: bool = False,
        progress: Progress | None = None,
        llm_budget: int | None = None,
        llm_progress: Progress | None = None,
    ) -> AfterSync:
        """Derive tags and texts for changed notes; with an LLM, the notes' fields (summary,
        key claims, category) and its tags, at most `llm_budget` calls (default: the
        `llm_budget` setting); with an embedding provider, the missing vectors. Provider
        faults become notices, never errors."""
        from .index import semantic
        from .index.embed import IdentityMismatch, embed_missing
        from .index.llm_cache import BudgetedChat, BudgetSpent

        result = AfterSync()
        if self.semantic_needed():
            result.derived = semantic.refresh(self.store, force=force, tags=self.heuristic_tags())
        chat = self.chat()
        budgeted = None
        if not isinstance(chat, Absent) and "llm" not in self.failed:
            limit = self.providers.llm_budget if llm_budget is None else llm_budget
            budgeted = BudgetedChat(chat, limit)
        result.fields = self._note_fields(budgeted, result, llm_progress)
        if budgeted is not None and "llm" not in self.failed:
            from .index.llm_tags import tag_notes

            try:
                tag_notes(self.store, budgeted)
            except BudgetSpent:
                pass  # the rest are tagged by the next sync
            except LoreError as exc:
                self._notice(result, self.fail("llm", exc))
        provider = self.embedder()
        if not isinstance(provider, Absent) and "embeddings" not in self.failed:
            try:
                result.embed = embed_missing(self.store, provider, progress=progress)
            except IdentityMismatch as exc:
                self._notice(result, f"embeddings skipped: {exc}")
            except LoreError as exc:
                self._notice(result, self.fail("embeddings", exc))
        return result

    def _note_fields(self, chat: Any, result: AfterSync, progress: Progress | None) -> FieldsReport:
        """The notes' LLM fields (lore.index.note_llm_sync); the stored ones only, without
        an LLM or with `llm_fields` off."""
        from .index.note_llm import FieldSettings
        from .index.note_llm_sync import refresh_fields

        fs = FieldSettings.of(self.providers)
        use = chat if self.providers.llm_fields else None
        if use is not None:
            try:
                fs.text_budget()
            except LoreError as exc:  # a request budget too small for any note
                self._notice(result, f"LLM note fields skipped: {exc}")
                use = None
        report = refresh_fields(self.store, use, fs, progress=progress)
        if report.error is not None:  # one notice: the part is off for this session
            self._notice(result, self.fail("llm", f"LLM note fields: {report.error}"))
        else:
            self._notice(result, report.notice())
        return report

    @staticmethod
    def _notice(result: AfterSync, notice: str | None) -> None:
        if notice:
            result.notices.append(notice)

    def describe(self) -> dict[str, Any]:
        mode, why = self.mode()
        return {"mode": mode, **why}

    # -- lore embed ------------------------------------------------------------------------
    def embed(self, *, rebuild: bool = False, progress: Progress | None = None) -> EmbedReport:
        """Fill in missing vectors (all of them with `rebuild`). Errors are raised: this is
        the explicit command, so a failure is its result (batches done so far are kept)."""
        from .errors import ConfigError
        from .index import semantic
        from .index.embed import drop_vectors, embed_missing

        provider = self.embedder()
        if isinstance(provider, Absent):
            raise ConfigError(
                "no embedding provider configured",
                hint=f"set LORE_EMBED_PROVIDER=local ({install_hint('local')}) or openai",
            )
        semantic.refresh(self.store, tags=self.heuristic_tags())
        if rebuild:
            drop_vectors(self.store)
        self.failed.pop("embeddings", None)
        return embed_missing(self.store, provider, progress=progress)
