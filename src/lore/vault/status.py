"""Facts about the index: `status`, the notes' LLM fields, `doctor`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Indexing and checking are imported when called: a one-shot `lore search` process
    # pays for what it runs (YAML, the ignore rules, the embedder are not on its path),
    # and the result types with them (lore.vault.reports).
    from ..index.doctor import DoctorReport
    from .reports import LlmRetry, Status

from .core import VaultCore


class StatusFacade(VaultCore):
    """What `lore status`, `lore llm status` and `lore doctor` report."""

    def status(self, *, principal: str | None = None) -> Status:
        """Facts about the index; with `principal`, counts of what it may see only, and
        the vault by name (not where it is on this machine)."""
        from ..index.pinyin import chinese_status
        from ..store import note_llm
        from ..store.sql_base import sql_store
        from .reports import Status

        mode, why = self.capabilities.mode(detail=True)
        meta = self.store.all_meta()
        access = self.access(principal)
        count = self.store.counts(access.globs)
        why = dict(why)
        db = sql_store(self.store)
        fields = note_llm.stats(db, access.globs)
        categories = dict(note_llm.category_counts(db, access.globs))
        return Status(
            vault=str(self.root) if access.unrestricted else self.root.name,
            db=str(self.db_path) if access.unrestricted else "",
            notes=count["notes"],
            tags=count["tags"],
            links=count["links"],
            last_sync=meta.get("last_sync"),
            schema_version=int(meta.get("schema_version", "0")),
            mode=mode,
            capabilities={
                "full_text": "yes (BM25, CJK-aware)",
                **chinese_status(self.store, access.globs),
                **why,
            },
            categories=categories,
            llm_fields={k: fields[k] for k in ("notes", "failed", "outdated", "claims")},
            engine=self.store.engine() if access.unrestricted else {},
        )

    def llm_status(self) -> dict[str, Any]:
        """The notes' LLM fields: how many notes have them (by model), failed or are
        outdated, the calls still to make, the call budget and the model-answer cache."""
        from ..index.note_llm import FieldSettings
        from ..index.note_llm_sync import llm_status
        from ..providers.none import Absent

        chat = self.capabilities.chat()
        model = None if isinstance(chat, Absent) else chat.identity
        return llm_status(self.store, model, FieldSettings.of(self.providers), self.providers)

    def retry_llm_fields(
        self,
        path: str | None = None,
        *,
        sync: bool = True,
        llm_budget: int | None = None,
        llm_progress: Callable[[int, int, str], None] | None = None,
    ) -> LlmRetry:
        """Ask the model again for the notes whose LLM fields failed (all of them, or those
        under `path`, a glob or a folder): a failure is otherwise kept, and not paid for
        again, until the note, the settings or the model change. With `sync`, a sync asks
        now (within `llm_budget` calls), else the next one does."""
        from ..store.note_llm import forget_failures, states_of
        from ..store.sql_base import sql_store
        from .reports import LlmRetry

        store = sql_store(self.store)
        with store.transaction():
            paths = forget_failures(store, path)
        report = (
            self.sync(llm_budget=llm_budget, llm_progress=llm_progress) if sync and paths else None
        )
        states = states_of(store, paths) if report is not None else {}
        return LlmRetry(paths, states, report)

    def doctor(self) -> DoctorReport:
        """Check the index against the files and inside out, changing neither (see
        lore.index.doctor for the checks and their repairs)."""
        from ..index.doctor import run_doctor

        return run_doctor(
            self.store,
            self.root,
            embedder=self.capabilities.embedder,
            heuristic_tags=self.capabilities.heuristic_tags(),
            semantic_needed=self.capabilities.semantic_needed(),
            gitignore=self.settings.gitignore,
        )
