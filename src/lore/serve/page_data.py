"""What each page shows, gathered in one worker-thread call on a pooled vault, always as
the caller's principal (lore.serve.pages renders it). Plain dicts and library objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..edit.notes import note_target
from ..errors import ConflictError, LoreError
from ..vault import Vault
from .auth import Identity
from .pool import SyncState

MODES = ("mode1", "mode2", "mode3", "mode4")
PAGE_HITS = 20
ENTITY_CARDS = 12


def _filters(params: Mapping[str, str], multi: list[str]) -> dict[str, Any]:
    def text(name: str, limit: int) -> str | None:
        value = (params.get(name) or "").strip()
        return value[:limit] if value else None

    mode = params.get("mode")
    return {
        "q": (params.get("q") or "")[:2000],
        "tags": [t.strip()[:200] for t in multi if t.strip()][:16],
        "path": text("path", 1024),
        "since": text("since", 40),
        "until": text("until", 40),
        "mode": mode if mode in MODES else None,
    }


def search_data(vault: Vault, who: Identity, params: Any) -> dict[str, Any]:
    filters = _filters(params, params.getlist("tag"))
    data: dict[str, Any] = {
        "filters": filters,
        "modes": MODES,
        "result": None,
        "error": None,
        "markers": vault.settings.highlight,
        "all_tags": [t for t, _n in vault.tag_counts(principal=who.principal)[:300]],
    }
    if not filters["q"].strip():
        return data
    try:
        data["result"] = vault.search(
            filters["q"],
            limit=PAGE_HITS,
            tags=filters["tags"],
            path=filters["path"],
            since=filters["since"],
            until=filters["until"],
            mode=filters["mode"],
            explain=True,
            principal=who.principal,
        )
    except LoreError as exc:  # a bad date or query: said on the page, the form kept
        data["error"] = str(exc)
    return data


def note_data(vault: Vault, who: Identity, path: str, query: str | None) -> dict[str, Any]:
    from .render import render_note

    rel = note_target(path, "path", write=False)
    note = vault.note(rel, principal=who.principal)
    links = vault.links(rel, principal=who.principal)
    resolved = {link.target: link.path for link in links.outgoing}
    html, toc = render_note(str(note["body"]), here=rel, links=resolved, query=query)
    entity = vault.entity_card(rel, principal=who.principal)
    return {
        "note": note,
        "html": html,
        "toc": toc,
        "links": links,
        "entity": entity,
        "query": query or "",
    }


def edit_data(
    vault: Vault, who: Identity, path: str, fields: Mapping[str, str] | None
) -> dict[str, Any]:
    rel = note_target(path, "path")
    vault.note(rel, principal=who.principal)  # a note this caller may see, or not found
    source = vault.note_source(rel, principal=who.principal)
    if fields is None:
        return {"path": rel, "text": source["text"], "hash": source["hash"], "conflict": False}
    text = fields.get("text", "").replace("\r\n", "\n")
    try:
        change = vault.edit_note(
            rel, base_hash=fields.get("base_hash", ""), text=text, principal=who.principal
        )
    except ConflictError:  # keep what the person typed; show the note as it is now
        return {
            "path": rel,
            "text": text,
            "hash": source["hash"],
            "conflict": True,
            "current": source["text"],
        }
    return {"path": change.path, "saved": True}


def map_data(vault: Vault, who: Identity) -> dict[str, Any]:
    return {"map": vault.visible_clusters(principal=who.principal)}


def memory_data(vault: Vault, who: Identity) -> dict[str, Any]:
    recent = vault.recent(days=30, limit=20, principal=who.principal)
    cards = [
        card
        for entity in recent.entities[:ENTITY_CARDS]
        if (
            card := vault.entity_card(
                str(entity["path"]), name=str(entity["name"]), principal=who.principal
            )
        )
    ]
    return {
        "recent": recent,
        "snapshot": vault.snapshot(principal=who.principal),
        "cards": cards,
        "check": vault.check(principal=who.principal),
    }


def status_data(vault: Vault, who: Identity, sync: SyncState) -> dict[str, Any]:
    owner = who.principal is None
    return {
        "status": vault.status(principal=who.principal),
        "doctor": vault.doctor().to_dict() if owner else None,
        "sync": sync if owner else None,
        "trash": vault.trash(principal=who.principal),
    }
