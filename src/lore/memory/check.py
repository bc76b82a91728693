"""`check`: memory hygiene. Reports; changes nothing unless asked (`fix`), and then only
what is mechanical: a card without a last-activity date gets the date its latest dated
event or mention gives, written into the card.

Kinds of finding (KINDS): conclusions without anchors, broken anchors, entity cards without
last activity, dates that are not dates, claimed statuses older than N days, claimed items
with no evidence, aliases claimed by two entities, entities defined twice, relations to a
missing entity (dangling edges).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..ingest.markdown import date_from_name, iter_lines
from ..ingest.parse import split_frontmatter
from ..safe_write import open_folder
from .access import Access, access_for
from .derive import is_daily
from .entities import Entities
from .keys import fold_key, link_key
from .markdown import block_id, slug, split_heading
from .model import CheckReport, Finding
from .settings import MAX_DAYS

if TYPE_CHECKING:
    from .services import MemoryServices

_FM_OPEN = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
KINDS = (
    "conclusion-without-anchor",
    "broken-anchor",
    "entity-without-last-activity",
    "malformed-date",
    "stale-status",
    "claimed-without-evidence",
    "alias-conflict",
    "duplicate-entity",
    "dangling-relation",
)


def anchors_of(body: str, body_line: int, headings_json: list[list[Any]]) -> set[str]:
    """Every way `path#anchor` may name a place in a note: explicit heading ids, heading
    text, GitHub-style slugs, and `^block` ids."""
    found: set[str] = set()
    for heading in headings_json:
        text, explicit = split_heading(str(heading[1]))
        found |= {text, text.casefold(), slug(text)}
        if explicit:
            found.add(explicit)
    for line in iter_lines(body, body_line):
        bid = block_id(line.text) if not line.code else None
        if bid:
            found |= {bid, f"^{bid}"}
    return found


def _resolve_pointer(
    services: MemoryServices, target: str, note_index: dict[str, str], access: Access
) -> str | None:
    path, _, _anchor = target.partition("#")
    rel = path.strip().lstrip("./")
    if (services.root / rel).is_file() and access.allows(rel):
        return rel
    return note_index.get(link_key(rel))


def _anchor_findings(
    services: MemoryServices, core: list[dict[str, Any]], ents: Entities
) -> list[Finding]:
    out: list[Finding] = []
    for entry in core:
        if entry["kind"] != "conclusion":
            continue
        if not entry["target"]:
            out.append(
                Finding(
                    "conclusion-without-anchor",
                    entry["path"],
                    entry["line"],
                    f"conclusion has no anchor (add → path#section): {entry['text'][:60]!r}",
                )
            )
            continue
        target = entry["target"]
        path = _resolve_pointer(services, target, ents.note_index, ents.access)
        if path is None:
            out.append(
                Finding("broken-anchor", entry["path"], entry["line"], f"{target}: no such note")
            )
            continue
        anchor = target.partition("#")[2]
        if not anchor:
            continue
        stored = services.store.note_bodies([path]).get(path)
        if stored is None:
            out.append(
                Finding("broken-anchor", entry["path"], entry["line"], f"{target}: not indexed yet")
            )
            continue
        body, body_line, headings = stored
        if anchor not in anchors_of(body, body_line, json.loads(headings)) and (
            anchor.casefold() not in anchors_of(body, body_line, json.loads(headings))
        ):
            out.append(
                Finding(
                    "broken-anchor",
                    entry["path"],
                    entry["line"],
                    f"{target}: {path} has no section or id {anchor!r}",
                )
            )
    return out


def _entity_findings(ents: Entities) -> list[Finding]:
    out: list[Finding] = []
    registry = ents.registry
    for alias_key, owners in registry.conflicts().items():
        first = registry.entities[owners[0]]
        where = ", ".join(
            f"{registry.entities[o].name} ({registry.entities[o].card['path']})" for o in owners
        )
        spelling = next(
            (s for o in owners for s in registry.entities[o].spellings if fold_key(s) == alias_key),
            alias_key,
        )
        out.append(
            Finding(
                "alias-conflict",
                first.card["path"],
                first.card["line"],
                f"alias {spelling!r} is claimed by {len(owners)} entities: {where}",
            )
        )
    for info in registry.entities.values():
        if len(info.defs) > 1:
            places = ", ".join(f"{d['path']}:{d['line']}" for d in info.defs)
            out.append(
                Finding(
                    "duplicate-entity",
                    info.defs[1]["path"],
                    info.defs[1]["line"],
                    f"entity {info.name!r} is defined {len(info.defs)} times: {places}",
                )
            )
        for d in info.defs:
            for problem in d["problems"]:
                out.append(Finding("malformed-date", d["path"], d["line"], problem))
        if not any(d["last_activity"] for d in info.defs):
            card = info.card
            activity = ents.last_activity(info)
            fixable = activity["date"] is not None and card["last_activity_raw"] is None
            hint = (
                f"; latest {activity['source']} says {activity['date']} ({activity['path']})"
                if activity["date"]
                else ""
            )
            out.append(
                Finding(
                    "entity-without-last-activity",
                    card["path"],
                    card["line"],
                    f"entity {info.name!r} has no last activity date{hint}",
                    fixable,
                )
            )
    for edge in ents.edges:
        if edge["kind"] != "relation":
            continue
        if ents.resolve_target(edge["target"]).get("kind") is None:
            out.append(
                Finding(
                    "dangling-relation",
                    edge["path"],
                    edge["line"],
                    f"{edge['source']} —{edge['relation']}→ {edge['target']!r}: no such entity"
                    " or note (kept as a dangling edge)",
                )
            )
    return out


def _entry_findings(
    entries: list[dict[str, Any]], today: dt.date, stale_days: int
) -> list[Finding]:
    out: list[Finding] = []
    for entry in entries:
        if entry["status"] != "claimed" or entry["kind"] not in ("remember", "digest", "section"):
            continue
        label = entry["heading"] or entry["text"][:40]
        if not entry["source"]:
            out.append(
                Finding(
                    "claimed-without-evidence",
                    entry["path"],
                    entry["line"],
                    f"claimed with no source: {label!r}",
                )
            )
        if entry["date"]:
            age = (today - dt.date.fromisoformat(entry["date"])).days
            if age > stale_days:
                out.append(
                    Finding(
                        "stale-status",
                        entry["path"],
                        entry["line"],
                        f"claimed {age} days ago and never verified: {label!r}",
                    )
                )
    return out


def _with_last_activity(text: str, date: str, kind: str, line: int) -> str | None:
    """The card's text with its last activity written in (None: the card moved)."""
    if kind == "file":
        source, _body, _line = split_frontmatter(text)
        opening = _FM_OPEN.match(text)
        if source is None or opening is None:
            return f"---\nlast_activity: {date}\n---\n{text}"
        at = opening.end() + len(source)
        sep = "" if not source or source.endswith("\n") else "\n"
        return f"{text[:at]}{sep}last_activity: {date}\n{text[at:]}"
    lines = text.split("\n")
    if not 0 < line <= len(lines):  # the heading line (1-based): insert right after it
        return None
    lines.insert(line, f"- **最后活动**：{date}")
    return "\n".join(lines)


def _fix_last_activity(services: MemoryServices, finding: Finding, date: str, kind: str) -> bool:
    folder_rel, _, name = finding.path.rpartition("/")
    with open_folder(services.root, folder_rel, create=False) as folder:  # never through a link
        raw = folder.read(name)
        try:
            text = None if raw is None else raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
        new = None if text is None else _with_last_activity(text, date, kind, finding.line)
        if new is None:
            return False
        folder.write(name, new.encode("utf-8"))
    return True


def check(
    services: MemoryServices,
    *,
    fix: bool = False,
    stale_days: int | None = None,
    principal: str | None = None,
) -> CheckReport:
    """Memory hygiene findings; `principal` limits the check to what its rules allow (it
    cannot `fix`)."""
    settings = services.settings
    access = access_for(settings, principal)
    if fix and not access.unrestricted:
        raise ConfigError("check --fix repairs every card: it cannot run as a principal")
    if stale_days is None:
        stale_days = settings.stale_days
    if (
        not isinstance(stale_days, int)
        or isinstance(stale_days, bool)
        or not 0 <= stale_days <= MAX_DAYS
    ):
        raise ConfigError(
            f"--stale-days must be a number of days from 0 to {MAX_DAYS}, not {stale_days!r}"
        )
    today = settings.today_date()
    ents = Entities(services.store, settings, access)
    entries = services.store.entries(access.globs)
    core = [e for e in entries if e["path"] == settings.core]
    findings = _anchor_findings(services, core, ents)
    findings += _entity_findings(ents)
    findings += _entry_findings(entries, today, stale_days)
    for path, _title, _date in services.store.note_keys(access.globs):
        name = path.rsplit("/", 1)[-1]
        if is_daily(path, settings) and date_from_name(name) is None:
            findings.append(
                Finding("malformed-date", path, 1, f"daily note name {name!r} is not a valid date")
            )
    findings.sort(key=lambda f: (KINDS.index(f.kind), f.path, f.line, f.message))
    fixed: list[Finding] = []
    if fix:
        for finding in findings:
            if not finding.fixable or finding.kind != "entity-without-last-activity":
                continue
            info = next(
                (
                    i
                    for i in ents.registry.entities.values()
                    if i.card["path"] == finding.path and i.card["line"] == finding.line
                ),
                None,
            )
            if info is None:
                continue
            date = ents.last_activity(info)["date"]
            if date and _fix_last_activity(services, finding, date, info.card["kind"]):
                fixed.append(finding)
        if fixed:
            services.sync()
            findings = [f for f in findings if f not in fixed]
    checked = {
        "entities": len(ents.registry.entities),
        "conclusions": sum(1 for e in core if e["kind"] == "conclusion"),
        "entries": len(entries),
        "relations": sum(1 for e in ents.edges if e["kind"] == "relation"),
    }
    return CheckReport(findings, fixed, checked)
