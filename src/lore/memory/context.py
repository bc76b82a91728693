"""`context`: what an agent needs for one task, within a byte budget.

    # Context: <task>
    ## Core (resident)            conclusions of the core file, each with its anchor (1–3 KB)
    ## Entities                   the cards of entities the task names
    ## Evidence                   the best memory-path hits, 0.5–2 KB each, with path, date,
                                  anchor, status (claimed is shown as unverified)

Items are added in that order while they fit; an item that does not fit whole is cut to
fit when at least MIN_ITEM bytes remain, else left out (and counted). The text is never
longer than the budget. Same vault, same settings, same day: same output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..retrieve.query import check_query
from .access import access_for
from .entities import Entities
from .model import ContextView, MemoryHit
from .recall import memory_hits
from .scope import named_entities
from .views import section_around, size, trim, window

if TYPE_CHECKING:
    from .services import MemoryServices

MIN_BUDGET = 512
MAX_BUDGET = 1024 * 1024
CORE_MAX = 3072
MIN_ITEM = 512
MAX_ITEM = 2048
EVIDENCE_HITS = 12


def check_budget(budget: object, least: int = MIN_BUDGET) -> int:
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise ConfigError(f"--budget must be a number of bytes, not {budget!r}")
    if not least <= budget <= MAX_BUDGET:
        raise ConfigError(f"--budget {budget} is out of range ({least}..{MAX_BUDGET} bytes)")
    return budget


def status_mark(status: str | None) -> str:
    if status == "claimed":
        return " [claimed, unverified]"
    if status == "verified":
        return " [verified]"
    return ""


def core_lines(entries: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for entry in entries:
        if entry["kind"] != "conclusion":
            continue
        text = entry["text"].split("\n", 1)[0]
        if entry["target"] and entry["target"] not in text:
            text += f" → {entry['target']}"
        elif not entry["target"]:
            text += f" (no anchor; {entry['path']}:{entry['line']})"
        out.append((f"- {text}{status_mark(entry['status'])}\n", entry))
    return out


def card_block(card: dict[str, Any]) -> str:
    activity = card["last_activity"]
    when = (
        f"last activity {activity['date']} ({activity['source']}: {activity['path']})"
        if activity["date"]
        else "last activity unknown"
    )
    head = f"### {card['name']}" + (f" ({card['type']})" if card["type"] else "")
    lines = [f"{head} · {when} → {card['path']}"]
    if card["definition"]:
        lines.append(card["definition"])
    if card["aliases"]:
        lines.append("aliases: " + ", ".join(card["aliases"]))
    for rel in card["relations"]:
        if rel["direction"] == "out":
            lines.append(f"- {rel['relation']} → {rel['target']}")
    for event in card["events"][:3]:
        lines.append(f"- {event['date'] or '?'}: {event['text']}")
    return "\n".join(lines) + "\n"


CONTEXT_CLAIMS = 3


def hit_block(hit: MemoryHit, text: str) -> str:
    where = hit.anchor or f"{hit.path}:{hit.line}"
    head = f"### {where} ({hit.date or 'undated'}){status_mark(hit.status)}"
    if hit.trust:
        head += f" trust: {hit.trust}"
    block = f"{head}\n{text.strip()}\n"
    if hit.claims:  # the note's key claims by the LLM, each grounded in it (issue 19)
        block += "key claims (LLM, inferred):\n"
        block += "".join(f"- {claim}\n" for claim in hit.claims[:CONTEXT_CLAIMS])
    return block


def _hit_text(hit: MemoryHit, entry_text: str | None, note: tuple[str, int, str] | None) -> str:
    if entry_text:
        return entry_text
    if note is None:
        return hit.snippet
    body, body_line, headings = note
    _heading, section, start = section_around(body, body_line, headings, hit.line)
    if size(section.strip()) < MIN_ITEM // 2:
        section, start = body, body_line
    return window(section, start, hit.line, MAX_ITEM - 200).strip()


def context(
    services: MemoryServices, task: str, *, budget: int = 4096, principal: str | None = None
) -> ContextView:
    if not check_query(task, "context").strip():
        raise ConfigError("context: the task is empty (say what the context is for)")
    budget = check_budget(budget)
    task = " ".join(task.split())
    settings = services.settings
    access = access_for(settings, principal)
    header = trim(f"# Context: {task}\n", 200)
    if access.blind:
        text = trim(f"{header}\n({access.reason})\n", budget)
        return ContextView(task, text, size(text), budget, [], principal)
    today = settings.today_date()
    ents = Entities(services.store, settings, access)
    parts: list[str] = [header]
    items: list[dict[str, Any]] = []
    left_out = 0
    used = size(header)

    def add(block: str, item: dict[str, Any], cap: int) -> bool:
        nonlocal used, left_out
        room = min(cap, budget - used)
        if size(block) > room:
            if room < min(MIN_ITEM, size(block)):
                left_out += 1
                return False
            block = trim(block, room - 1) + "\n"
        parts.append(block)
        used += size(block)
        items.append({**item, "bytes": size(block)})
        return True

    core = core_lines(services.store.entries(access.globs, kinds=("conclusion",)))
    core_budget = min(CORE_MAX, budget // 2)
    title = "\n## Core (resident)\n"
    if core and used + size(title) < budget:
        parts.append(title)
        used += size(title)
        spent = 0
        for line, entry in core:
            if spent + size(line) > core_budget or used + size(line) > budget:
                left_out += 1
                continue
            parts.append(line)
            used += size(line)
            spent += size(line)
            items.append(
                {
                    "kind": "core",
                    "path": entry["path"],
                    "line": entry["line"],
                    "date": entry["date"],
                    "anchor": entry["target"],
                    "status": entry["status"],
                    "bytes": size(line),
                }
            )

    named = named_entities(task, ents.registry)
    keys = list(dict.fromkeys(k for _, ks in named for k in ks))
    if keys and used + 20 < budget:
        title = "\n## Entities\n"
        parts.append(title)
        used += size(title)
        for key in keys:
            card = ents.card(key, today, events=3, mentions=0)
            add(
                card_block(card),
                {
                    "kind": "entity",
                    "name": card["name"],
                    "path": card["path"],
                    "line": card["line"],
                    "date": card["last_activity"]["date"],
                    "anchor": None,
                    "status": card["status"],
                },
                MAX_ITEM,
            )

    hits, _result = memory_hits(
        services,
        task,
        limit=EVIDENCE_HITS,
        access=access,
        registry=ents.registry,
        settings=settings,
        today=today,
    )
    if hits and used + 20 < budget:
        title = "\n## Evidence\n"
        parts.append(title)
        used += size(title)
        bodies = services.store.note_bodies([h.path for h in hits])
        by_path: dict[str, list[dict[str, Any]]] = {}
        for e in services.store.entries(access.globs, paths=sorted({h.path for h in hits})):
            by_path.setdefault(e["path"], []).append(e)
        shown: set[tuple[str, int]] = set()
        for hit in hits:
            if hit.path == settings.core and core:
                continue  # the core file is resident already
            if (hit.path, hit.line) in shown or any(
                i["kind"] == "entity" and i["path"] == hit.path for i in items
            ):
                continue
            shown.add((hit.path, hit.line))
            entry_text = next(
                (
                    str(e["text"] or e["heading"])
                    for e in by_path.get(hit.path, [])
                    if e["line"] <= hit.line <= e["end_line"]
                ),
                None,
            )
            text = _hit_text(hit, entry_text, bodies.get(hit.path))
            add(
                hit_block(hit, trim(text, MAX_ITEM - 120)),
                {
                    "kind": hit.kind or "note",
                    "path": hit.path,
                    "line": hit.line,
                    "date": hit.date,
                    "anchor": hit.anchor,
                    "status": hit.status,
                    "trust": hit.trust,
                    "score": hit.score,
                },
                MAX_ITEM,
            )
    text = "".join(parts)
    assert size(text) <= budget, "context overran its budget"
    return ContextView(task, text, size(text), budget, items, principal, left_out)
