"""The Vault façade: the composition root that the CLI, the MCP server and Python users share.

import lore
with lore.open("~/notes") as vault:
    vault.sync()
    for hit in vault.search("客户去重规则 v2"):
        print(hit.path, hit.date, hit.heading, hit.snippet)
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .capabilities import Capabilities
from .config import Settings, load_settings
from .errors import ConfigError, NoIndexError, NotFoundError, PathError, VaultError, shown
from .model import SearchResult, SyncReport

if TYPE_CHECKING:
    from .edit.notes import NoteChange, NoteWriter, TrashItem

    # Indexing and checking are imported when called: a one-shot `lore search` process
    # pays for what it runs (YAML, the ignore rules, the embedder are not on its path).
    from .index.doctor import DoctorReport
    from .index.embed import EmbedReport
    from .interest.model import InterestMap
    from .interest.report import Report
    from .memory.access import Access
    from .memory.derive import MemoryViews
    from .memory.links import LinkReport
    from .memory.model import (
        CheckReport,
        ContextView,
        DigestReport,
        LookupResult,
        Memory,
        RecentResult,
        Snapshot,
    )
    from .memory.services import MemoryServices
    from .memory.settings import MemorySettings, MemorySettingsSource
    from .tokens import NewToken, TokenInfo
from .retrieve.budget import QueryCosts
from .retrieve.budget import budget_ms as budget_ms_from
from .retrieve.hybrid import hybrid_search
from .retrieve.query import check_query
from .retrieve.search import SearchOptions, make_filters
from .store.base import Store
from .store.rows import NoteRecord
from .store.sqlite import TOKENIZER_VERSION, SqliteStore, default_db_path


@dataclass(frozen=True)
class Status:
    vault: str
    db: str
    notes: int
    tags: int
    links: int
    last_sync: str | None
    schema_version: int
    mode: str
    capabilities: dict[str, str]
    # Issue 19: notes by category (the author's, else the LLM's) and the notes' LLM fields.
    categories: dict[str, int] = field(default_factory=dict)
    llm_fields: dict[str, int] = field(default_factory=dict)
    # Issue 15: the backend and its versions (Store.engine), for the owner only.
    engine: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def resolve_vault(path: str | os.PathLike[str]) -> Path:
    if "\x00" in str(path):
        raise VaultError(f"vault {str(path)!r}: a path cannot contain NUL")
    raw = Path(path).expanduser()
    if not raw.exists():
        raise VaultError(f"vault {shown(str(raw))} does not exist")
    if not raw.is_dir():
        raise VaultError(f"vault {shown(str(raw))} is not a folder")
    resolved = raw.resolve()
    try:
        str(resolved).encode("utf-8")
    except UnicodeEncodeError:  # SQLite and the index store paths as UTF-8 text
        raise VaultError(
            f"vault {shown(str(resolved))}: its path is not valid UTF-8",
            hint="rename the folder (or one above it) to a UTF-8 name",
        ) from None
    return resolved


class Vault:
    """An open vault and its index. Use as a context manager, or call `close()`."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.store: Store
        if isinstance(settings.db, str):  # a database server (lore.store.postgres)
            from .store.postgres import PostgresStore

            self.store = PostgresStore(settings.db, root)
        else:
            in_vault = settings.db is None
            if in_vault:
                _prepare_index_folder(root)
            db_path = index_path(root, settings)
            bound = db_path.resolve().parent == (root / ".lore").resolve()
            self.store = SqliteStore(db_path, root, bound_to_vault=bound, nofollow=in_vault)
        self.capabilities = Capabilities(settings, self.store)
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
        """The `[memory]` and `[access]` settings, read once per opened vault and again when
        the config file changes (on first use: a vault whose memory settings are wrong
        still opens, and says so when they count)."""
        return self._memory_source.get()

    @cached_property
    def _memory_source(self) -> MemorySettingsSource:
        from .memory.settings import MemorySettingsSource

        return MemorySettingsSource(self.root)

    @cached_property
    def _memory(self) -> MemoryServices:
        """What the memory services (lookup, remember, context, ...) work with."""
        from .memory.services import MemoryServices

        return MemoryServices(
            root=self.root,
            store=self.store,
            source=self._memory_source,
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
        from .memory.derive import MemoryViews

        return MemoryViews(self._memory_source.get)

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

    def __enter__(self) -> Vault:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def db_path(self) -> Path | str:
        """The index file, or the database URL without its password."""
        return self.store.db_path

    def _sqlite(self, what: str) -> SqliteStore:
        """The index, for the parts that only an SQLite index has yet."""
        if isinstance(self.store, SqliteStore):
            return self.store
        raise ConfigError(
            f"{what}: not on the PostgreSQL backend yet ({self.store.db_path})",
            hint="use an index file for it (--db PATH, or no --db)",
        )

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
        from .index.sync import sync as run_sync

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
        from .index.sync import sync as run_sync

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
        from .index.sync import sync as run_sync

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
        from .memory.recall import scope_search

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
        from .store.note_llm import category_counts
        from .store.sql_base import sql_store

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

    # -- agent memory (lore.memory) ------------------------------------------------------------
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
        from .memory.write import remember

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
        from .memory.digest import digest

        return digest(self._memory, data, name=name, date=date, trust=trust, use_llm=use_llm)

    def lookup(self, query: str, *, limit: int = 5, principal: str | None = None) -> LookupResult:
        """L1 entity card → L2 index → L3 raw scan → L4 not found; the answer names its level."""
        from .memory.lookup import lookup

        return lookup(self._memory, query, limit=limit, principal=principal)

    def recent(
        self, *, days: int = 7, limit: int = 20, principal: str | None = None
    ) -> RecentResult:
        """Entities and notes active in the last `days` days, with their activity."""
        from .memory.recent import recent

        return recent(self._memory, days=days, limit=limit, principal=principal)

    def context(
        self, task: str, *, budget: int = 4096, principal: str | None = None
    ) -> ContextView:
        """Core conclusions, entity cards and the best evidence for a task, within `budget`."""
        from .memory.context import context

        return context(self._memory, task, budget=budget, principal=principal)

    def snapshot(self, *, principal: str | None = None, budget: int = 2048) -> Snapshot:
        """A 1–2 KB cold-start summary: open items, recent discussion, next steps."""
        from .memory.snapshot import snapshot

        return snapshot(self._memory, principal=principal, budget=budget)

    def check(
        self, *, fix: bool = False, stale_days: int | None = None, principal: str | None = None
    ) -> CheckReport:
        """Memory hygiene findings; with `fix`, repair what is mechanical; `principal`
        checks only what it may see."""
        from .memory.check import check

        return check(self._memory, fix=fix, stale_days=stale_days, principal=principal)

    # -- the interest map (lore.interest) -------------------------------------------------------
    def build_clusters(self, *, today: dt.date | None = None, **overrides: Any) -> InterestMap:
        """Cluster the indexed notes into an interest map and store it (replacing the last
        one; cluster ids stay stable). `overrides` are interest settings by name
        (`cluster_algo="hierarchical"`, `min_size=3`, ...; see lore.interest.settings).
        Uses the stored vectors, or the notes' words when there are none; calls no
        embedding model. `today` (default: LORE_TODAY, else today) anchors the trends."""
        from .errors import ConfigError
        from .interest.build import build_map
        from .interest.settings import load_interest_settings
        from .providers.none import Absent

        settings = load_interest_settings(self.root, **overrides)
        chat = None
        if settings.llm_labels != "off":
            provider = self.capabilities.chat()
            chat = None if isinstance(provider, Absent) else provider
            if chat is None and settings.llm_labels == "on":
                raise ConfigError("llm_labels on: no LLM configured", hint="set LORE_LLM_PROVIDER")
        if today is None:
            today = self._memory_settings.today_date()
        return build_map(self.store, settings, today=today, chat=chat)

    def clusters(self) -> InterestMap | None:
        """The stored interest map, exactly as last built (None before the first
        `lore clusters build`); a message says when the index changed since."""
        from .interest.build import load

        return load(self.store)

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
        from .interest.report import build_report

        return build_report(
            self.store,
            self.clusters(),
            vault_name=self.root.name,
            recent=lambda days, limit: self.recent(days=days, limit=limit),
            clock=lambda: self._memory_settings.today_date(),
            since=since,
            today=today,
            limit=limit,
        )

    def note(self, path: str, *, principal: str | None = None) -> dict[str, Any]:
        """The indexed record of one note (path relative to the vault); a note outside
        `principal`'s access rules is not there for it."""
        rel = self.relative_path(path)
        access = self.access(principal)
        # The same answer for a note that is hidden and one that is not there at all.
        missing = NotFoundError(
            f"{shown(path)}: not an indexed note of"
            f" {self.root if access.unrestricted else self.root.name}",
            hint="run `lore index`" if access.unrestricted else None,
        )
        if not access.allows(rel):
            raise missing
        record = self.store.note_record(rel)
        if record is None:
            raise missing
        from .derive.summary import author_summary
        from .store.note_llm import fields_of
        from .store.sql_base import sql_store

        fields = fields_of(sql_store(self.store), [record.id]).get(record.id)
        if fields is not None and fields.llm_summary:
            summary_source = "llm"
        elif author_summary(record.frontmatter, record.body, record.title) is not None:
            summary_source = "frontmatter"
        else:
            summary_source = "head_tail"
        shown_note = note_json(record)
        if fields is not None and fields.llm_summary:  # the index's text adds the claims
            shown_note["summary"] = fields.llm_summary
        return {
            **shown_note,
            "summary_source": summary_source,  # frontmatter | llm | head_tail
            "claims": fields.claims if fields else [],  # [{text, evidence}], grounded
            "category": fields.category if fields else None,
            "llm_model": fields.model if fields else None,
        }

    def find_note(self, ref: str) -> dict[str, Any]:
        """The indexed note `ref` names: its path (with or without `.md`), its front-matter
        id, or its title, an alias or its file name when one note has it (else the error
        lists the notes that do)."""
        text = ref.strip()
        for candidate in dict.fromkeys([text, f"{text}.md", f"{text}.markdown"]):
            rel = self.relative_path(candidate)  # refuses a path outside the vault
            if self.store.has_note(rel):
                return self.note(rel)
        by_id = self.note_path_for_id(text)
        if by_id is not None:
            return self.note(by_id)
        named = self.notes_named(text)
        if len(named) == 1:
            return self.note(named[0])
        if named:
            shown_paths = ", ".join(named[:10]) + (", …" if len(named) > 10 else "")
            raise PathError(
                f"{shown(ref)}: {len(named)} notes have this name: {shown_paths}",
                hint="give one of the paths",
            )
        words = shlex.quote(text) if shown(text) == text else "WORDS"
        raise PathError(
            f"{shown(ref)}: no indexed note has this path, id, title or alias",
            hint=f"find it with `lore search {words}`",
        )

    def notes_named(self, name: str) -> list[str]:
        """Paths of the notes whose title, an alias or file name is `name` (case and
        spacing aside), by path."""
        from .derive.fields import note_names

        key = " ".join(name.casefold().split())
        if not key:
            return []
        return [
            path
            for path, title, fm in self.store.notes_maybe_named(name.strip())
            if key in {" ".join(n.casefold().split()) for n in note_names(title, fm, path)}
        ]

    def note_path_for_id(self, note_id: str) -> str | None:
        """The path of the note whose front matter says `id: <note_id>` (first by path)."""
        return self.store.path_for_id(str(note_id).strip())

    def tag_counts(self, *, principal: str | None = None) -> list[tuple[str, int]]:
        """Every tag (as first written, by case-folded key) with how many notes carry it,
        most used first, ties by tag; only the notes `principal` may see count."""
        return self.store.tag_counts(self.access(principal).globs)

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

    def status(self, *, principal: str | None = None) -> Status:
        """Facts about the index; with `principal`, counts of what it may see only, and
        the vault by name (not where it is on this machine)."""
        from .index.pinyin import chinese_status
        from .store import note_llm
        from .store.sql_base import sql_store

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
        from .index.note_llm import FieldSettings
        from .index.note_llm_sync import llm_status
        from .providers.none import Absent

        chat = self.capabilities.chat()
        model = None if isinstance(chat, Absent) else chat.identity
        return llm_status(self.store, model, FieldSettings.of(self.settings), self.settings)

    def doctor(self) -> DoctorReport:
        """Check the index against the files and inside out, changing neither (see
        lore.index.doctor for the checks and their repairs)."""
        from .index.doctor import run_doctor

        return run_doctor(
            self.store,
            self.root,
            embedder=self.capabilities.embedder,
            heuristic_tags=self.capabilities.heuristic_tags(),
            semantic_needed=self.capabilities.semantic_needed(),
            gitignore=self.settings.gitignore,
        )

    # -- who sees what, links, note writes, tokens (issue 16) -----------------------------------
    def access(self, principal: str | None = None) -> Access:
        """What `principal` may see by the vault's `[access]` rules (None: everything)."""
        from .memory.access import Access, access_for

        if principal is None:  # the owner: no need to read the rules
            return Access(None, None)
        return access_for(self._memory_settings, principal)

    def links(self, path: str, *, principal: str | None = None) -> LinkReport:
        """A note's outgoing `[[links]]` (resolved) and its backlinks, as `principal`
        may see them."""
        from .memory.links import link_report

        note = self.note(path, principal=principal)
        return link_report(
            self.store,
            self._memory_settings,
            self.access(principal),
            note["path"],
            note["title"],
        )

    def entity_card(
        self, path: str, *, name: str | None = None, principal: str | None = None
    ) -> dict[str, Any] | None:
        """The entity card the note at `path` defines (the one called `name`), as `lookup`
        shows it at L1 (None: the note is no card)."""
        from .memory.lookup import card_at

        return card_at(self._memory, self.relative_path(path), name=name, principal=principal)

    def visible_clusters(self, *, principal: str | None = None) -> InterestMap | None:
        """The stored interest map as `principal` may see it: clusters re-described from
        their visible members alone (lore.interest.scope)."""
        from .interest.labels import note_tags
        from .interest.scope import scope_map

        stored = self.clusters()
        access = self.access(principal)
        if stored is None or access.unrestricted:
            return stored
        return scope_map(stored, access, note_tags(self.store))

    def _writer(self, principal: str | None) -> NoteWriter:
        from .edit.notes import NoteWriter

        return NoteWriter(self.root, self.access(principal))

    def _indexed(self, change: NoteChange) -> NoteChange:
        """Sync what a write changed; the change says whether the index holds it now."""
        from .errors import IndexBusyError, IndexFullError, IndexReadOnlyError

        try:
            self.sync()
        except (IndexBusyError, IndexReadOnlyError, IndexFullError):
            return change  # written; the next sync takes it in
        return replace(change, indexed=self.store.indexed_hash(change.path) == change.hash)

    def note_source(self, path: str, *, principal: str | None = None) -> dict[str, str]:
        """The note file's whole text as it is now (front matter included) and its content
        hash, the `base_hash` an edit of it names."""
        text, digest = self._writer(principal).source(path)
        return {"path": path, "text": text, "hash": digest}

    def write_note(self, path: str, text: str, *, principal: str | None = None) -> NoteChange:
        """Create the note `path` (refused when anything is there) and index it."""
        return self._indexed(self._writer(principal).create(path, text))

    def edit_note(
        self,
        path: str,
        *,
        base_hash: str,
        text: str | None = None,
        append: str | None = None,
        section: str | None = None,
        principal: str | None = None,
    ) -> NoteChange:
        """Replace the note's text (or one section's, with `section`) or `append` to it
        (or to a section), if it still holds what `base_hash` (its `hash`) says; else
        ConflictError and nothing written."""
        writer = self._writer(principal)
        change = writer.edit(
            path, base_hash=base_hash, text=text, append_text=append, section=section
        )
        return self._indexed(change)

    def move_note(
        self, path: str, to: str, *, base_hash: str | None = None, principal: str | None = None
    ) -> NoteChange:
        """Move a note to a free path inside the vault."""
        return self._indexed(self._writer(principal).move(path, to, base_hash=base_hash))

    def delete_note(
        self, path: str, *, base_hash: str | None = None, principal: str | None = None
    ) -> NoteChange:
        """Move a note to the vault's trash (`.lore/trash/`, never indexed); restorable."""
        return self._indexed(self._writer(principal).delete(path, base_hash=base_hash))

    def restore_note(
        self, trash_id: str, *, to: str | None = None, principal: str | None = None
    ) -> NoteChange:
        """Put a deleted note back where it was (or at `to`)."""
        return self._indexed(self._writer(principal).restore(trash_id, to=to))

    def trash(self, *, principal: str | None = None) -> list[TrashItem]:
        """The deleted notes `principal` may see, newest first."""
        return self._writer(principal).trash()

    def add_token(self, name: str, *, principal: str | None, can_write: bool = False) -> NewToken:
        """A new access token for `lore serve` (its secret is in the result, once)."""
        from .tokens import add_token

        return add_token(
            self._sqlite("access tokens"), name, principal=principal, can_write=can_write
        )

    def tokens(self) -> list[TokenInfo]:
        from .tokens import list_tokens

        return list_tokens(self._sqlite("access tokens"))

    def revoke_token(self, name: str) -> TokenInfo:
        from .tokens import revoke_token

        return revoke_token(self._sqlite("access tokens"), name)

    def record_token_use(self, name: str) -> None:
        """Note that the token `name` was used now (to the minute; `lore token list`)."""
        from .tokens import record_use

        record_use(self._sqlite("access tokens"), name)

    def verify_token(self, secret: str) -> TokenInfo | None:
        """The valid token whose secret this is (None: unknown or revoked)."""
        from .tokens import verify_token

        return verify_token(self._sqlite("access tokens"), secret)


def note_json(record: NoteRecord) -> dict[str, Any]:
    """The shape of one note for `lore show --json`, the Python API and MCP read_note."""
    return {
        "path": record.path,
        "title": record.title,
        "title_source": record.title_source,
        "date": record.date,
        "date_source": record.date_source,
        "frontmatter": record.frontmatter,
        "tags": [{"tag": t, "origin": o} for t, o in record.tags],
        "derived_tags": [{"tag": t, "origin": o} for t, o in record.derived_tags],
        "links": record.links,
        "headings": [{"level": h[0], "text": h[1], "line": h[3]} for h in record.headings],
        "summary": record.summary,
        "body": record.body,
        "body_line": record.body_line,
        "size": record.size,
        "hash": record.hash,
        "truncated": record.truncated,
    }


def _prepare_index_folder(root: Path) -> None:
    """Make `<vault>/.lore` (never through a symlink) and refuse index files there that
    are links: a vault could ship `.lore/index.sqlite` pointing at another vault's index,
    or at any file of yours, for SQLite to write into."""
    from .safe_write import open_folder
    from .store.sqlite import DEFAULT_DB_NAME

    with open_folder(root, ".lore") as folder:
        for suffix in ("", "-wal", "-shm", "-journal"):
            folder.check_target(DEFAULT_DB_NAME + suffix)


def open_vault(
    vault: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    *,
    create: bool = True,
    **settings: Any,
) -> Vault:
    """Open a vault (default: $LORE_VAULT, then the current folder) and its index.

    With `create=False` a vault without an index is refused (NoIndexError, whose hint is
    the command that makes one) instead of getting a new, empty index: the command line
    makes a first index only when asked to (`lore index PATH`)."""
    if vault is None:
        vault = os.environ.get("LORE_VAULT") or "."
    root = resolve_vault(vault)
    loaded = load_settings(root, db=db, **settings)
    if not create and not isinstance(loaded.db, str):  # a database is asked, not looked at
        db_path = index_path(root, loaded)
        if not db_path.exists():
            where = [shlex.quote(str(root))]
            if db_path != default_db_path(root):
                where += ["--db", shlex.quote(str(db_path))]
            raise NoIndexError(
                f"{shown(str(root))} has no lore index yet",
                hint=f"create one with `lore index {' '.join(where)}`",
            )
    return Vault(root, loaded)


def index_path(root: Path, settings: Settings) -> Path:
    """Where the index of this vault is (--db / LORE_DB / config, else .lore/index.sqlite)."""
    if isinstance(settings.db, str):
        raise ConfigError(f"{settings.db.split('@')[-1]}: a database URL, not an index file")
    db_path = settings.db if settings.db is not None else default_db_path(root)
    return db_path if db_path.is_absolute() else Path.cwd() / db_path


def broad_folder(root: Path) -> str | None:
    """What `root` is when it is too broad to index without asking twice: the home folder
    or the root of a file system (every Markdown file of every project under it)."""
    if root == Path(root.anchor):
        return "the root of the file system"
    try:
        home = Path.home().resolve()
    except (RuntimeError, KeyError):  # no home folder known
        return None
    return "your home folder" if root == home else None
