"""The fixed lookup path: L1 entity card → L2 the index → L3 a raw scan → L4 not found.

Every level runs in that order until one answers, and the answer names it. `tried` says
what each level did, so an L4 "not found" is explicit about what was searched.

- L1 answers when the query names an entity (by name or any alias) and the card covers
  the rest of the question (or there is no rest): definition, aliases, relations, latest
  events, last activity. Index hits for the question follow as supporting evidence.
- L2 is the memory path over the index: alias-expanded, entry-level, weighed by decay and
  trust (`recall.memory_hits`).
- L3 reads the files themselves, for what the index missed (notes written since the last
  sync, the tail of a note too large to index whole, text inside words).
- L4 says what was tried. Nothing is made up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import QueryError
from ..model import Hit
from ..retrieve.query import check_query, plan
from ..retrieve.snippet import find_matches
from .access import access_for
from .entities import Entities
from .model import LookupResult, MemoryHit
from .rawscan import raw_scan
from .recall import Coverage, memory_hits
from .scope import named_entities

if TYPE_CHECKING:
    from .services import MemoryServices

MAX_QUERY_CHARS = 2000


def _card_text(card: dict[str, Any]) -> str:
    parts = [card["name"], card["type"] or "", card["definition"], " ".join(card["aliases"])]
    parts += [" ".join(card["tags"])]
    for rel in card["relations"]:
        parts.append(f"{rel['relation']} {rel.get('target') or rel.get('source') or ''}")
    parts += [e["text"] for e in card["events"]]
    return "\n".join(parts)


def _answers(card: dict[str, Any], rest: str) -> tuple[bool, list[str]]:
    """Does the card cover what the query asks beyond the entity's name?"""
    rest_plan = plan(rest)
    if rest_plan.empty:
        return True, []
    significant = [t for t in rest_plan.terms if t.kind != "cjk_char"] or rest_plan.terms
    matched = {m.term for m in find_matches(_card_text(card), rest_plan)}
    hits = [t.text for t in significant if t in matched]
    return 2 * len(hits) >= len(significant), hits


def _card_hit(card: dict[str, Any], mode: str, answered: list[str]) -> MemoryHit:
    relations = [
        f"{r['relation']} {r['target']}" for r in card["relations"] if r["direction"] == "out"
    ]
    events = [f"{e['date'] or ''} {e['text']}".strip() for e in card["events"][:2]]
    snippet = " · ".join(x for x in [card["definition"], *relations[:4], *events] if x)
    activity = card["last_activity"]
    return MemoryHit(
        path=card["path"],
        title=card["name"],
        date=activity["date"],
        score=1.0,
        snippet=snippet[:400],
        heading=None,
        line=card["line"],
        frontmatter={},
        tags=card["tags"],
        mode=mode,
        anchor=None,
        kind="entity",
        weight=card["weight"],
        level="L1",
        source=", ".join(answered) or None,
    )


def lookup(
    services: MemoryServices, query: str, *, limit: int = 5, principal: str | None = None
) -> LookupResult:
    if not check_query(query, "lookup").strip():
        raise QueryError("lookup: the query is empty (give a name or a question)")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise QueryError(f"lookup: --limit must be a positive number, not {limit!r}")
    query = query.strip()[:MAX_QUERY_CHARS]
    settings = services.settings
    access = access_for(settings, principal)
    if access.blind:
        assert access.reason is not None
        return LookupResult("L4", query, None, [], [access.reason], principal)
    today = settings.today_date()
    ents = Entities(services.store, settings, access)
    tried: list[str] = []
    notes: list[str] = []

    # L1: the entity card.
    card: dict[str, Any] | None = None
    named = named_entities(query, ents.registry)
    if named:
        spelling, keys = max(named, key=lambda n: len(n[0]))
        if len(keys) > 1:
            names = ", ".join(ents.registry.entities[k].name for k in keys)
            notes.append(
                f"{spelling!r} is an alias of {len(keys)} entities ({names}); showing the first"
            )
        card = ents.card(keys[0], today)
        if card["duplicates"]:
            notes.append(
                f"{card['name']} is defined more than once: also {', '.join(card['duplicates'])}"
            )
        rest = query.replace(spelling, " ", 1)
        answered, matched = _answers(card, rest)
        where = f"{card['name']} ({card['path']}:{card['line']})"
        if answered:
            tried.append(
                f"L1 entity cards: {where} matched {spelling!r}"
                + (f"; the card covers {', '.join(matched)}" if matched else "")
            )
            support, _ = memory_hits(
                services,
                query,
                limit=limit,
                access=access,
                registry=ents.registry,
                settings=settings,
                today=today,
            )
            hits: list[Hit] = [_card_hit(card, services.mode(), matched)]
            hits += [h for h in support if h.path != card["path"]][: max(limit - 1, 0)]
            tried.append(f"L2 index: {len(hits) - 1} supporting hit(s)")
            return LookupResult("L1", query, card, hits, tried, principal, notes)
        tried.append(
            f"L1 entity cards: {where} matched {spelling!r}, but its card does not answer"
            f" {rest.strip()!r}"
        )
    else:
        visible = len(ents.registry.entities)
        tried.append(
            f"L1 entity cards: no entity named or aliased in {query!r} ({visible} visible)"
        )

    # L2: the index, through the memory path.
    found, result = memory_hits(
        services,
        query,
        limit=limit,
        access=access,
        registry=ents.registry,
        settings=settings,
        today=today,
    )
    if found:
        tried.append(f"L2 index ({result.mode}): {len(found)} hit(s)")
        return LookupResult("L2", query, card, list(found), tried, principal, notes)
    if result:
        why = f"{len(result)} note(s) matched only a small part of the question"
    else:
        why = result.reason or "nothing matched"
    tried.append(f"L2 index ({result.mode}): {why}")

    # L3: the files themselves.
    spellings = [s for _, keys in named for k in keys for s in ents.registry.entities[k].spellings]
    coverage = Coverage(query, ents.registry)
    raw, scanned = raw_scan(
        services,
        query,
        spellings,
        access,
        limit,
        services.highlight,
        keep=lambda text: coverage.share(text) >= Coverage.MIN_COVERAGE,
    )
    if raw:
        tried.append(f"L3 raw scan: {len(raw)} file(s) of {scanned} matched")
        return LookupResult("L3", query, card, list(raw), tried, principal, notes)
    tried.append(f"L3 raw scan: {scanned} file(s) read, no match")

    # L4: say so.
    return LookupResult("L4", query, card, [], tried, principal, notes)


def card_at(
    services: MemoryServices, path: str, *, name: str | None = None, principal: str | None = None
) -> dict[str, Any] | None:
    """The entity card the note at `path` defines (the one called `name`, else the first),
    as `lookup` shows it at L1; None when there is none the caller may see."""
    settings = services.settings
    access = access_for(settings, principal)
    if not access.allows(path):
        return None
    ents = Entities(services.store, settings, access)
    for key, info in ents.registry.entities.items():
        if (name is None or info.name == name) and any(d["path"] == path for d in info.defs):
            return ents.card(key, settings.today_date())
    return None
