"""The read side of entities for one caller: cards with their relations (out and in), key
events, mention statistics and last activity, all limited to what the caller may see.

Last activity is the latest of: the date written on the card, the card's latest dated
event, and the date of the latest note that mentions the entity, each with its source.
"""

from __future__ import annotations

import datetime as dt
import weakref
from functools import cached_property
from typing import Any

from ..store.base import Store
from .access import Access
from .decay import decay_weight
from .keys import fold_key, link_key
from .registry import EntityInfo, Registry
from .settings import MemorySettings

SOURCE_ORDER = {"card": 0, "event": 1, "mention": 2}
_NOTE_INDEX: weakref.WeakKeyDictionary[Store, tuple[Any, dict[str, str]]] = (
    weakref.WeakKeyDictionary()
)


class Entities:
    def __init__(self, store: Store, settings: MemorySettings, access: Access) -> None:
        self.store = store
        self.settings = settings
        self.access = access
        self.registry = Registry.build(store.entity_rows(), access)

    @cached_property
    def latest(self) -> dict[str, tuple[str, str, int]]:
        return self.store.latest_mentions(self.access.globs, self.settings.today_date().isoformat())

    @cached_property
    def totals(self) -> dict[str, tuple[int, int]]:
        return self.store.mention_totals(self.access.globs)

    @cached_property
    def edges(self) -> list[dict[str, Any]]:
        return self.store.edges(self.access.globs)

    @cached_property
    def note_index(self) -> dict[str, str]:
        """Link key → note path: by title, by file name, by path without the suffix.

        Building it reads every note's path and title, so it is kept per open index until
        the index changes (a long-running MCP server resolves links without re-reading)."""
        stamp = (self.store.generation(), self.access.globs)
        cached = _NOTE_INDEX.get(self.store)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        index: dict[str, str] = {}
        for path, title, _date in self.store.note_keys(self.access.globs):
            stem = path.rsplit(".", 1)[0]
            for key in (fold_key(title), link_key(path), fold_key(stem)):
                if key:
                    index.setdefault(key, path)
        _NOTE_INDEX[self.store] = (stamp, index)
        return index

    def resolve_target(self, target: str) -> dict[str, Any]:
        """What a link points at: an entity, a note, or nothing (a dangling edge)."""
        key = link_key(target)
        entity, claimants = self.registry.resolve(target.rsplit("/", 1)[-1])
        if entity is None and key in self.registry.entities:
            entity = key
        if entity is not None:
            info = self.registry.entities[entity]
            return {"kind": "entity", "name": info.name, "path": info.card["path"]}
        if len(claimants) > 1:
            names = [self.registry.entities[c].name for c in claimants]
            return {"kind": "ambiguous", "names": names}
        # A target with a folder names that note first (a Markdown link is a path; several
        # notes may be README.md), then any note of its file name, as Obsidian resolves.
        whole = fold_key(_without_suffix(target.strip().replace("\\", "/")))
        path = self.note_index.get(whole) if "/" in target else None
        path = path or self.note_index.get(key)
        if path is not None:
            return {"kind": "note", "path": path}
        return {"kind": None}

    def last_activity(self, info: EntityInfo) -> dict[str, Any]:
        candidates: list[tuple[str, str, str, int]] = []  # (date, source, path, line)
        for d in info.defs:
            if d["last_activity"]:
                candidates.append((d["last_activity"], "card", d["path"], d["line"]))
            for date, _text, line in d["events"]:
                if date:
                    candidates.append((date, "event", d["path"], int(line)))
        mention = self.latest.get(info.key)
        if mention is not None:
            candidates.append((mention[0], "mention", mention[1], mention[2]))
        declared = max((c[0] for c in candidates if c[1] == "card"), default=None)
        if not candidates:
            return {"date": None, "source": None, "path": None, "line": None, "declared": None}
        best = sorted(candidates, key=lambda c: (c[0], -SOURCE_ORDER[c[1]]), reverse=True)[0]
        return {
            "date": best[0],
            "source": best[1],
            "path": best[2],
            "line": best[3],
            "declared": declared,
        }

    def weight(self, info: EntityInfo, today: dt.date) -> float:
        return decay_weight(
            self.settings,
            self.last_activity(info)["date"],
            today,
            pinned=info.pinned,
            priority=info.priority,
        )

    def relations(self, info: EntityInfo, limit_in: int = 20) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        own = {d["path"] for d in info.defs}
        names = {fold_key(d["name"]) for d in info.defs}
        seen: set[tuple[str, str, str]] = set()
        for edge in self.edges:
            mine = edge["path"] in own and fold_key(edge["source"]) in names
            if mine and edge["kind"] == "relation":
                key = ("out", edge["relation"], link_key(edge["target"]))
                if key not in seen:
                    seen.add(key)
                    out.append(
                        {
                            "direction": "out",
                            "relation": edge["relation"],
                            "target": edge["target"],
                            "resolved": self.resolve_target(edge["target"]),
                            "path": edge["path"],
                            "line": edge["line"],
                        }
                    )
        incoming = 0
        for edge in self.edges:
            if edge["path"] in own and fold_key(edge["source"]) in names:
                continue
            resolved = self.resolve_target(edge["target"])
            if resolved.get("kind") != "entity" or fold_key(resolved["name"]) != info.key:
                continue
            source = edge["source"] or edge["path"]
            key = ("in", edge["relation"], source)
            if key in seen or incoming >= limit_in:
                continue
            seen.add(key)
            incoming += 1
            out.append(
                {
                    "direction": "in",
                    "relation": edge["relation"],
                    "source": source,
                    "kind": edge["kind"],
                    "path": edge["path"],
                    "line": edge["line"],
                }
            )
        return out

    def events(self, info: EntityInfo, limit: int) -> list[dict[str, Any]]:
        items = [
            {"date": date, "text": text, "path": d["path"], "line": int(line)}
            for d in info.defs
            for date, text, line in d["events"]
        ]
        items.sort(key=lambda e: (e["date"] or "", e["path"], e["line"]), reverse=True)
        return items[:limit]

    def card(
        self, key: str, today: dt.date, *, events: int = 5, mentions: int = 5
    ) -> dict[str, Any]:
        info = self.registry.entities[key]
        card = info.card
        notes, total = self.totals.get(key, (0, 0))
        latest = [
            {"path": p, "date": d, "count": c, "line": ln, "title": t}
            for p, d, c, ln, t in self.store.mentions_of(key, self.access.globs)[:mentions]
        ]
        claimed = {k for k, owners in self.registry.conflicts().items() if key in owners}
        return {
            "name": info.name,
            "key": key,
            "type": card["type"],
            "definition": card["definition"],
            "aliases": info.aliases,
            "tags": list(dict.fromkeys(t for d in info.defs for t in d["tags"])),
            "status": card["status"],
            "pinned": info.pinned,
            "path": card["path"],
            "line": card["line"],
            "kind": card["kind"],
            "last_activity": self.last_activity(info),
            "weight": self.weight(info, today),
            "relations": self.relations(info),
            "events": self.events(info, events),
            "mentions": {"notes": notes, "total": total, "latest": latest},
            "duplicates": [f"{d['path']}:{d['line']}" for d in info.defs[1:]],
            "shared_aliases": sorted(claimed),
            "problems": [f"{d['path']}: {p}" for d in info.defs for p in d["problems"]],
        }


def _without_suffix(path: str) -> str:
    for suffix in (".md", ".markdown"):
        if path.lower().endswith(suffix):
            return path[: -len(suffix)]
    return path
