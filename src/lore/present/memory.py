"""Human-readable output of the memory commands (the JSON shapes are each object's
`to_dict()`, see docs/memory.md)."""

from __future__ import annotations

from typing import Any

from ..memory.model import CheckReport, DigestReport, LookupResult, Memory, RecentResult
from ..model import Hit

LEVEL_NAMES = {
    "L1": "entity card",
    "L2": "index",
    "L3": "raw scan of the files",
    "L4": "not found",
}


def format_memory(memory: Memory) -> str:
    verb = "remembered" if memory.created else "already remembered"
    lines = [f"{verb}: {memory.pointer} (line {memory.line}, {memory.date} {memory.time})"]
    state = "claimed, unverified" if memory.status == "claimed" else memory.status
    lines.append(
        f"  status: {state} · trust: {memory.trust}"
        + (f" · source: {memory.source}" if memory.source else "")
    )
    if memory.entities:
        lines.append(f"  entities: {', '.join(memory.entities)}")
    lines += [f"  note: {n}" for n in memory.notes]
    if not memory.indexed:
        lines.append("  not indexed yet: run `lore index`")
    return "\n".join(lines)


def format_digest(report: DigestReport) -> str:
    if not report.created:
        return f"nothing written: {report.reason} ({report.pointer})"
    lines = [f"digested {report.source} into {report.pointer} ({report.method})"]
    for kind, items in report.items.items():
        if items:
            lines.append(f"  {kind.replace('_', ' ')}: {len(items)}")
            lines += [f"    - {item}" for item in items[:10]]
    if report.dropped:
        lines.append(f"  dropped, not grounded in the input: {len(report.dropped)}")
        lines += [f"    - {d['text']} ({d['why']})" for d in report.dropped[:10]]
    return "\n".join(lines)


def _hit_line(rank: int, hit: Hit) -> list[str]:
    where = getattr(hit, "anchor", None) or f"{hit.path}:{hit.line}"
    parts = [hit.date or "undated"]
    if hit.heading:
        parts.append(f"§ {hit.heading}")
    status = getattr(hit, "status", None)
    if status == "claimed":
        parts.append("claimed, UNVERIFIED")
    elif status:
        parts.append(status)
    trust = getattr(hit, "trust", None)
    if trust:
        parts.append(f"trust {trust}")
    return [f"{rank}. {where}  {hit.title}", "   " + " · ".join(parts), f"   {hit.snippet}"]


def format_card(card: dict[str, Any]) -> list[str]:
    activity = card["last_activity"]
    head = card["name"] + (f" ({card['type']})" if card["type"] else "")
    lines = [f"{head} → {card['path']}:{card['line']}"]
    if card["definition"]:
        lines.append(f"  {card['definition']}")
    if card["aliases"]:
        lines.append(f"  aliases: {', '.join(card['aliases'])}")
    if card["tags"]:
        lines.append(f"  tags: {', '.join(card['tags'])}")
    if activity["date"]:
        lines.append(
            f"  last activity: {activity['date']} ({activity['source']}: "
            f"{activity['path']}:{activity['line']})"
        )
    else:
        lines.append("  last activity: unknown (no date on the card, its events or mentions)")
    for rel in card["relations"]:
        if rel["direction"] == "out":
            resolved = rel["resolved"]
            mark = "" if resolved.get("kind") else "  (dangling: no such entity or note)"
            lines.append(f"  - {rel['relation']} → {rel['target']}{mark}")
        else:
            lines.append(f"  - {rel['source']} —{rel['relation']}→ (this)")
    for event in card["events"]:
        lines.append(f"  * {event['date'] or '?'}: {event['text']}")
    mentions = card["mentions"]
    lines.append(f"  mentioned in {mentions['notes']} note(s), {mentions['total']} time(s)")
    for problem in card["problems"]:
        lines.append(f"  problem: {problem}")
    return lines


def format_lookup(result: LookupResult) -> str:
    lines = [f"{result.level} ({LEVEL_NAMES[result.level]}): {result.query}"]
    if result.entity is not None:
        lines += format_card(result.entity)
    for rank, hit in enumerate(result.hits, 1):
        if rank == 1 and result.level == "L1":
            continue
        lines += _hit_line(rank, hit)
    lines += [f"note: {n}" for n in result.notes]
    lines.append("tried:")
    lines += [f"  {t}" for t in result.tried]
    return "\n".join(lines)


def format_recent(result: RecentResult) -> str:
    lines = [f"active from {result.since} to {result.today} ({result.days} day(s))"]
    if result.reason:
        lines.append(result.reason)
    if result.entities:
        lines.append("entities:")
        for e in result.entities:
            a = e["last_activity"]
            lines.append(
                f"  {a['date']}  {e['name']}  ({a['source']}: {a['path']}) weight {e['weight']:.2f}"
            )
    if result.notes:
        lines.append("notes:")
        for n in result.notes:
            pin = " pinned" if n["pinned"] else ""
            lines.append(f"  {n['date']}  {n['path']}  weight {n['weight']:.2f}{pin}")
    return "\n".join(lines)


def format_check(report: CheckReport) -> str:
    lines = [f"{f.path}:{f.line}: {f.kind}: {f.message}" for f in report.findings]
    lines += [f"fixed {f.path}:{f.line}: {f.kind}" for f in report.fixed]
    counted = ", ".join(f"{n} {k}" for k, n in report.checked.items())
    if report.ok:
        lines.append(f"memory is clean ({counted})")
    else:
        fixable = sum(1 for f in report.findings if f.fixable)
        tail = f"; {fixable} fixable with --fix" if fixable else ""
        lines.append(f"{len(report.findings)} finding(s) ({counted}){tail}")
    return "\n".join(lines)
