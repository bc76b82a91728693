"""Derive the memory tables inside the sync transaction (one hook call from index/sync.py).

Per note (from the stored row, so a rebuild derives exactly what incremental syncs did):
entity definitions and their aliases, relation and wikilink edges, and the entries of daily
notes and of the core file. Mentions also depend on the vault's alias table: when that
changes (a card added, an alias edited), every note's mentions are recomputed; otherwise
only the changed notes'. The alias table's signature is kept in `meta`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..derive.fields import note_fts_fields
from ..derive.tokenize import terms
from ..store.base import Store
from ..store.note_rows import NoteText
from .cards import in_folder, parse_cards
from .entries import parse_core, parse_daily
from .keys import fold_key, link_key
from .mentions import Matcher, forms
from .registry import Registry
from .settings import MemorySettings

_SECTION_HINT = re.compile(r"^#{2,6}[ \t].*[)）][ \t]*$", re.MULTILINE)
_DAILY_NAME = re.compile(r"(?:^|/)\d{4}-\d{2}-\d{2}[^/]*\.(?:md|markdown)$")
META_LAYOUT = "memory_layout"
META_STALE = "memory_stale"  # set by the m002 migration on an index that already has notes
DEFAULT_LAYOUT = MemorySettings().layout


def is_daily(path: str, settings: MemorySettings) -> bool:
    return in_folder(path, settings.dir) and _DAILY_NAME.search(path) is not None


def _note_rows(note: NoteText, settings: MemorySettings) -> dict[str, list[tuple[Any, ...]]]:
    rows: dict[str, list[tuple[Any, ...]]] = {
        "entity_defs": [],
        "entity_aliases": [],
        "entity_edges": [],
        "memory_entries": [],
    }
    body = note.body
    if in_folder(note.path, settings.entities) or "[[" in body or _SECTION_HINT.search(body):
        parsed = parse_cards(
            note.path,
            note.title,
            note.frontmatter,
            body,
            note.body_line,
            entities_dir=settings.entities,
        )
        for seq, card in enumerate(c for c in parsed.cards if c.key):
            rows["entity_defs"].append(
                (
                    note.id,
                    seq,
                    card.name,
                    card.key,
                    card.type,
                    card.kind,
                    card.line,
                    card.definition,
                    json.dumps(card.tags, ensure_ascii=False),
                    card.last_activity,
                    card.last_activity_raw,
                    card.status,
                    int(card.pinned),
                    json.dumps([[e.date, e.text, e.line] for e in card.events], ensure_ascii=False),
                    json.dumps(card.problems, ensure_ascii=False),
                )
            )
            seen: set[str] = set()
            for position, alias in enumerate([card.name, *card.aliases]):
                key = fold_key(alias)
                if key and key not in seen:
                    seen.add(key)
                    rows["entity_aliases"].append(
                        (note.id, seq, alias, key, int(position == 0), position)
                    )
        for seq, edge in enumerate(parsed.edges):
            rows["entity_edges"].append(
                (
                    note.id,
                    seq,
                    edge.source,
                    edge.relation,
                    edge.target,
                    link_key(edge.target),
                    edge.line,
                    edge.kind,
                )
            )
    entries = []
    if note.path == settings.core:
        entries = parse_core(body, note.body_line, note.date)
    elif is_daily(note.path, settings):
        entries = parse_daily(body, note.body_line, note.date)
    for seq, entry in enumerate(entries):
        rows["memory_entries"].append(
            (
                note.id,
                seq,
                entry.kind,
                entry.anchor,
                entry.heading,
                entry.line,
                entry.end_line,
                entry.text_line,
                entry.date,
                entry.time,
                entry.status,
                entry.trust,
                entry.source,
                entry.target,
                json.dumps(entry.entities, ensure_ascii=False),
                entry.text,
            )
        )
    return rows


def _phrases(surface: str) -> set[str]:
    """The token phrases of a spelling's forms ("zhang san", "zhangsan")."""
    return {p for form in forms(surface) if (p := " ".join(terms(form)))}


class _Mentions:
    """Mentions are counted in the notes whose full-text columns hold one of a spelling's
    token phrases, by the spelling's pattern; each note is scanned only for the spellings
    it holds. The same rule whichever way a note is reached, so incremental syncs and
    rebuilds end in the same rows: after an alias change, the full-text index finds the
    notes (a phrase query per spelling); for the notes of one sync, their own token
    columns are checked (exactly what FTS5 would match)."""

    def __init__(self, registry: Registry) -> None:
        self.by_phrase: dict[str, set[tuple[str, str]]] = {}
        for surface, key in registry.spellings():
            for phrase in _phrases(surface):
                self.by_phrase.setdefault(phrase, set()).add((surface, key))
        self._cache: dict[frozenset[tuple[str, str]], Matcher] = {}

    def matcher(self, found: set[tuple[str, str]]) -> Matcher:
        group = frozenset(found)
        if group not in self._cache:
            self._cache[group] = Matcher(sorted(found))
        return self._cache[group]

    def from_index(self, store: Store) -> dict[int, Matcher]:
        per_note: dict[int, set[tuple[str, str]]] = {}
        for phrase, ids in store.notes_matching(self.by_phrase).items():
            for note_id in ids:
                per_note.setdefault(note_id, set()).update(self.by_phrase[phrase])
        return {note_id: self.matcher(found) for note_id, found in per_note.items()}

    def from_columns(self, store: Store, note_id: int) -> Matcher | None:
        columns = [f" {c} " for c in note_fts_fields(*store.note_fields(note_id))]
        found: set[tuple[str, str]] = set()
        for phrase, spellings in self.by_phrase.items():
            if any(f" {phrase} " in column for column in columns):
                found |= spellings
        return self.matcher(found) if found else None


def _mention_rows(
    note: NoteText, matcher: Matcher, own: set[str]
) -> list[tuple[int, str, int, int]]:
    found = matcher.scan(note.body)
    rows = []
    for key, hit in found.items():
        if key not in own:
            line = note.body_line + note.body.count("\n", 0, hit.first)
            rows.append((note.id, key, hit.count, line))
    for key in matcher.scan(note.title):
        if key not in own and key not in found:
            rows.append((note.id, key, 1, 1))
    return sorted(rows)


def memory_stale(store: Store) -> bool:
    """True when the memory tables must be derived in full (an upgraded index)."""
    return store.get_meta(META_STALE) is not None


class MemoryViews:
    """The memory tables as the sync keeps them (lore.index.sync.DerivedViews): the vault
    hands one in, with its memory settings, read when a sync first derives."""

    def __init__(self, settings: Callable[[], MemorySettings]) -> None:
        self._settings = settings

    def stale(self, store: Store) -> bool:
        return memory_stale(store)

    def derive(
        self, store: Store, changed: Sequence[str], deleted_ids: Sequence[int], *, full: bool
    ) -> bool:
        return derive_memory(store, self._settings(), changed, deleted_ids, full=full)


def derive_memory(
    store: Store,
    settings: MemorySettings,
    changed: Sequence[str],
    deleted_ids: Sequence[int],
    *,
    full: bool = False,
) -> bool:
    """Bring the memory tables in line with the notes rows just written (call inside the
    sync transaction; `changed` are the added and changed paths, `full` re-derives all).
    Returns whether every note's rows were derived (asked, or the layout changed)."""
    # Only a non-default layout is recorded, so an index that never needed one holds no
    # bookkeeping a rebuild would not write.
    if (store.get_meta(META_LAYOUT) or DEFAULT_LAYOUT) != settings.layout or memory_stale(store):
        full = True
        store.delete_meta(META_STALE)
    before = None if full else Registry.build(store.entity_rows()).signature()
    ids = store.note_ids(None if full else changed)
    if full:
        store.delete_all()
    else:
        store.delete_for([*deleted_ids, *ids])
    for note in store.note_texts_by_id(ids):
        for table, rows in _note_rows(note, settings).items():
            store.insert_rows(table, rows)

    registry = Registry.build(store.entity_rows())
    defined: dict[str, set[str]] = {}
    for info in registry.entities.values():
        for d in info.defs:
            defined.setdefault(d["path"], set()).add(info.key)
    mentions = _Mentions(registry)
    matchers: dict[int, Matcher] | None = None  # None: look each note up in its own columns
    if full or registry.signature() != before:
        # The alias table changed: every note's mentions may have changed with it.
        store.delete_mentions(None)
        matchers = mentions.from_index(store) if mentions.by_phrase else {}
        ids = sorted(matchers)
    elif not mentions.by_phrase:
        ids = []
    # Texts are read again, a chunk at a time, rather than kept from the first pass: a
    # first sync of a large vault never holds every note's text at once.
    for note in store.note_texts_by_id(ids):
        matcher = mentions.from_columns(store, note.id) if matchers is None else matchers[note.id]
        if matcher is not None:
            rows = _mention_rows(note, matcher, defined.get(note.path, set()))
            store.insert_rows("entity_mentions", rows)
    if settings.layout == DEFAULT_LAYOUT:
        store.delete_meta(META_LAYOUT)
    else:
        store.set_meta(META_LAYOUT, settings.layout)
    return full
