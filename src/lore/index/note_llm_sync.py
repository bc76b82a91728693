"""After the sync transaction: give notes their LLM fields and put them into the index.

Runs after every sync and rebuild, with or without an LLM:

1. rows of deleted notes are dropped;
2. summaries of current rows that the index does not hold (a rebuild derived the note
   from its file again) are put back: from the stored rows, with no model call;
3. with an LLM (and `llm_fields` on): every note with text and without current fields
   gets them (lore.index.note_llm), in path order, within the sync's call budget. Each
   note is committed on its own: its row, its summary in the full-text index (the
   `summary` field) and in the texts to embed (the summary vector), so an interruption
   loses at most one note's answers, which are cached anyway.

A note's summary is the author's (`summary:` in its front matter) when there is one, else
the model's grounded summary, else the head and tail of its text. Nothing is written into
the note files.

Failures never stop the sync. An answer out of shape (prose, a wrong key) or with nothing
grounded fails that note only: it keeps its heuristic fields, and the failure is recorded
(so the same question is not paid for again until the note, the settings or the model
change). A failed request (endpoint down, timeout, HTTP 5xx) ends this sync's calls: the
notes left wait for the next sync. So do MAX_BAD_IN_A_ROW failed answers in a row: that
is the model, not the notes, and those notes are not recorded as failed. The budget spent
ends the calls too; notes whose answers are all cached are still completed (they cost
nothing).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..derive.fields import distinct_terms, note_fts_fields
from ..derive.summary import author_summary, base_summary
from ..errors import ConfigError
from ..providers.base import ProviderError
from ..store import note_llm as sql
from ..store.note_llm_rows import LlmRow, NoteSource
from ..store.sql_base import sql_store
from .grounding import BadAnswer
from .llm_cache import BudgetedChat, BudgetSpent
from .note_llm import Derived, FieldSettings, calls_needed, derive
from .semantic import load_sources, planned, texts_of

if TYPE_CHECKING:
    from ..providers.settings import ProviderSettings
    from ..store.base import Store
    from ..store.sql_base import SqlStore

Progress = Callable[[int, int, str], None]
# Notes in a row whose answers are out of shape before the model is taken as unusable for
# the rest of the session (a model that answers prose to everything is not asked 10k times).
MAX_BAD_IN_A_ROW = 3


@dataclass
class FieldsReport:
    """What one sync did about the notes' LLM fields."""

    model: str | None = None
    notes: int = 0  # notes given fields by this sync
    calls: int = 0  # model calls made (cached answers are not calls)
    pending: int = 0  # notes still without fields (budget spent, endpoint down)
    failed: list[dict[str, str]] = field(default_factory=list)  # path, why
    dropped: int = 0  # statements left out: not grounded in their note
    restored: int = 0  # summaries put back from stored rows
    budget: int | None = None
    error: str | None = None  # the failed request that ended this sync's calls
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "notes": self.notes,
            "calls": self.calls,
            "pending": self.pending,
            "failed": self.failed,
            "dropped": self.dropped,
            "restored": self.restored,
            "budget": self.budget,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }

    def notice(self) -> str | None:
        """One line for the user about what fell back or waits (None: nothing did)."""
        said = []
        if self.failed:
            first = self.failed[0]
            more = f" and {len(self.failed) - 1} more" if len(self.failed) > 1 else ""
            said.append(
                f"{len(self.failed)} note(s) kept their heuristic fields"
                f" ({first['path']}: {first['why']}{more})"
            )
        if self.dropped:
            said.append(f"{self.dropped} ungrounded statement(s) left out")
        if self.pending and self.error is None:
            said.append(
                f"{self.pending} note(s) wait for the next sync (call budget {self.budget} spent)"
            )
        return "LLM note fields: " + "; ".join(said) if said else None


# How the texts to embed of a note with an LLM summary are planned (lore.index.semantic.
# texts_of). An index planned them otherwise (the LLM's summary instead of the head and
# tail) until this key said so: those notes alone are planned again, once, with no model
# call and no other note touched (a new passages version would re-derive every note).
TEXTS_KEY = "llm_texts_plan"
TEXTS_PLAN = "beside-head-tail"


def replan_summarised(store: SqlStore) -> None:
    """Plan the LLM notes' texts again (no write at all when there are none: a sync that
    has nothing to do writes nothing, even on a full disk)."""
    todo = sql.summarised(store)
    if not todo:
        return
    with store.transaction():
        for note_id in todo:
            fresh = load_sources(store, [note_id]).get(note_id)
            if fresh is not None and sql.has_texts(store, note_id):
                store.write_texts(note_id, planned(texts_of(fresh)))
        store.set_meta(TEXTS_KEY, TEXTS_PLAN)


def refresh_fields(
    index: Store,
    chat: BudgetedChat | None,
    fs: FieldSettings,
    *,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> FieldsReport:
    """Steps 1-3 above. `chat` None: no LLM (or fields off), steps 1-2 only."""
    store = sql_store(index)
    started = clock()
    report = FieldsReport(model=chat.identity if chat else None)
    if store.read_only:
        return report
    if sql.has_orphans(store):
        with store.transaction():
            sql.delete_orphans(store)
    if store.get_meta(TEXTS_KEY) != TEXTS_PLAN:
        replan_summarised(store)
    behind = sql.summaries_behind(store)
    if behind:
        with store.transaction():
            delta: Counter[str] = Counter()
            report.restored = sum(apply_summary(store, nid, delta) for nid in behind)
            store.apply_df(delta)
    if chat is not None:
        report.budget = chat.limit
        _derive_pending(store, chat, fs, report, progress)
    report.seconds = clock() - started
    return report


def _derive_pending(
    store: SqlStore,
    chat: BudgetedChat,
    fs: FieldSettings,
    report: FieldsReport,
    progress: Progress | None,
) -> None:
    todo = sql.pending(store, fs.version, chat.identity)
    if not todo:
        return
    total = 0
    if progress is not None:
        sources = sql.sources(store, todo)
        total = sum(calls_needed(store, chat.identity, sources[n], fs) for n in todo)
        if chat.limit is not None:
            total = min(total, chat.limit)
        progress(0, total, "")
    streak: list[tuple[str, LlmRow]] = []  # failures since the last note that worked
    for nid in todo:
        source = sql.sources(store, [nid]).get(nid)
        if source is None:
            continue
        before = chat.calls
        try:
            found = derive(store, chat, source, fs)
        except BudgetSpent:
            continue  # later notes may be answered from the cache
        except BadAnswer as exc:
            streak.append(
                (source.path, _failed(source, chat.identity, fs, str(exc), chat.calls - before))
            )
            if len(streak) >= MAX_BAD_IN_A_ROW:
                # Not these notes: the model. They wait (unrecorded) for another session.
                report.error = f"{len(streak)} notes in a row answered out of shape ({exc})"
                break
            continue
        except ProviderError as exc:
            report.error = str(exc)
            break
        row = _row(source, chat.identity, fs, found)
        report.dropped += len(found.dropped)
        if row.state == "llm":
            report.notes += 1
        _keep(store, [*streak, (source.path, row)], report)
        streak = []
        if progress is not None:
            progress(min(chat.calls, total), total, source.path)
    if report.error is None:
        _keep(store, streak, report)
    report.calls = chat.calls
    report.pending = len(sql.pending(store, fs.version, chat.identity))
    if progress is not None and total:
        progress(total, total, "")


def _keep(store: SqlStore, rows: list[tuple[str, LlmRow]], report: FieldsReport) -> None:
    """Store these notes' rows and give the index their summaries, in one transaction."""
    if not rows:
        return
    with store.transaction():
        delta: Counter[str] = Counter()
        for path, row in rows:
            if row.state == "failed":
                report.failed.append({"path": path, "why": row.reason or ""})
            sql.write(store, row)
            apply_summary(store, row.note_id, delta)
        store.apply_df(delta)


def _failed(source: NoteSource, model: str, fs: FieldSettings, why: str, calls: int) -> LlmRow:
    return LlmRow(source.id, source.hash, fs.version, model, "failed", reason=why, calls=calls)


def _row(source: NoteSource, model: str, fs: FieldSettings, found: Derived) -> LlmRow:
    if found.empty and found.dropped:
        why = f"nothing it said is grounded in the note ({found.dropped[0]['why']})"
        return LlmRow(
            source.id, source.hash, fs.version, model, "failed", reason=why,
            dropped=found.dropped, calls=found.calls,
        )  # fmt: skip
    own = author_summary(source.frontmatter, source.body, source.title)
    return LlmRow(
        source.id,
        source.hash,
        fs.version,
        model,
        "llm",
        summary=None if own is not None else found.summary,  # the author's always wins
        claims=found.claims,
        category=found.category,
        dropped=found.dropped,
        calls=found.calls,
    )


def apply_summary(store: SqlStore, note_id: int, delta: Counter[str]) -> bool:
    """Give the index the summary this note should have (inside a transaction): its full
    text `summary` field, the document frequencies (into `delta`) and its texts to embed.
    False when it has it already."""
    source = sql.sources(store, [note_id]).get(note_id)
    if source is None:
        return False
    row = sql.current(store, [note_id]).get(note_id)
    desired = sql.indexed_summary(row.summary, row.claims) if row and row.summary else None
    if desired is None:
        desired = base_summary(source.frontmatter, source.body, source.title)[0]
    if source.summary == desired:
        return False
    old = note_fts_fields(*store.note_fields(note_id))
    sql.set_summary(store, note_id, desired)
    new = note_fts_fields(*store.note_fields(note_id))
    store.replace_text(note_id, new)
    delta.subtract(distinct_terms(old))
    delta.update(distinct_terms(new))
    if sql.has_texts(store, note_id):
        fresh = load_sources(store, [note_id]).get(note_id)
        if fresh is not None:
            store.write_texts(note_id, planned(texts_of(fresh)))
    return True


def llm_status(
    index: Store, model: str | None, fs: FieldSettings, settings: ProviderSettings
) -> dict[str, Any]:
    """`lore llm status`: the fields stored, what is pending (notes, and the calls they
    take now: cached answers are free; without a model every call is counted) and the
    cache of model answers."""
    store = sql_store(index)
    stats = sql.stats(store)
    todo = sql.pending(store, fs.version, model or "")
    sources = sql.sources(store, todo)
    try:
        calls = sum(calls_needed(store, model or "", sources[n], fs) for n in todo)
    except ConfigError as exc:  # the request budget leaves no room for a note
        calls, stats["problem"] = 0, str(exc)
    return {
        "model": model,
        "fields": "on" if settings.llm_fields else "off",
        **stats,
        "pending_notes": len(todo),
        "pending_calls": calls,
        "budget": settings.llm_budget,
        "summary_chars": fs.summary_chars,
        "claims_per_note": fs.claims,
        "context_tokens": fs.context_tokens,
        "categories": list(fs.categories),
        "cache": sql.cache_stats(store),
    }
