"""`snapshot`: a 1–2 KB cold-start summary for a new session, built from the daily notes and
the core file only, so the same vault gives the same text whatever the clock says.

    # Snapshot (as of 2026-11-26)
    ## Open items       unchecked `- [ ]` items and the core file's open section, newest first
    ## Recent discussion   the last daily notes, one line each
    ## Next steps       the core file's next-steps section, then "明天/下一步/TODO/next step"
                        lines of the recent daily notes

"As of" is the date of the newest visible daily note (or today when there is none); an
item checked off (`- [x]`) later is not open any more.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from ..ingest.inline import strip_markup
from ..ingest.markdown import bullet
from .access import access_for
from .context import check_budget
from .derive import is_daily
from .extract import classify, worth_keeping
from .model import Snapshot
from .views import size, trim

if TYPE_CHECKING:
    from .services import MemoryServices

DEFAULT_BUDGET = 2048
MIN_BUDGET = 256
RECENT_NOTES = 5
WINDOW_DAYS = 14
ITEM_CHARS = 110


def _key(text: str) -> str:
    return re.sub(r"\W+", "", text).casefold()


def _lines(entry: dict[str, Any]) -> list[tuple[int, str, bool | None]]:
    """(line, text, checked) of an entry's list items and sentences."""
    out = []
    for offset, raw in enumerate(entry["text"].split("\n")):
        item = bullet(raw)
        line = entry["text_line"] + offset
        if item is not None:
            out.append((line, strip_markup(item[1]), item[2]))
        elif raw.strip() and not raw.lstrip().startswith("#"):
            out.append((line, strip_markup(raw.strip()), None))
    if entry["kind"] == "item" and entry["status"] in ("open", "done") and out:
        out[0] = (out[0][0], out[0][1], entry["status"] == "done")
    return out


def _short(text: str, chars: int = ITEM_CHARS) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= chars else text[: chars - 1] + "…"


def snapshot(
    services: MemoryServices, *, principal: str | None = None, budget: int = DEFAULT_BUDGET
) -> Snapshot:
    budget = check_budget(budget, MIN_BUDGET)
    settings = services.settings
    access = access_for(settings, principal)
    if access.blind:
        text = trim(f"# Snapshot\n\n({access.reason})\n", budget)
        return Snapshot(text, size(text), budget, [], [], [], principal)
    entries = services.store.entries(access.globs)
    daily = [e for e in entries if is_daily(e["path"], settings) and e["date"]]
    core = [e for e in entries if e["path"] == settings.core]
    dates = sorted({e["date"] for e in daily})
    as_of = dates[-1] if dates else settings.today_date().isoformat()
    since = (dt.date.fromisoformat(as_of) - dt.timedelta(days=WINDOW_DAYS)).isoformat()

    done: set[str] = set()
    open_items: list[dict[str, Any]] = []
    next_steps: list[dict[str, Any]] = []
    for entry in core:
        if entry["kind"] in ("open", "next"):
            target = open_items if entry["kind"] == "open" else next_steps
            if entry["status"] == "done":
                done.add(_key(entry["text"]))
            else:
                target.append(
                    {
                        "text": _short(entry["text"]),
                        "path": entry["path"],
                        "line": entry["line"],
                        "date": entry["date"],
                    }
                )
    ordered = sorted(daily, key=lambda e: (e["date"], e["path"], e["line"]))
    for entry in ordered:
        for _line, text, checked in _lines(entry):
            if checked:
                done.add(_key(text))
    newest_first = sorted(ordered, key=lambda e: e["date"], reverse=True)  # stable: file order
    for entry in newest_first:
        for line, text, checked in _lines(entry):
            item = {
                "text": _short(text),
                "path": entry["path"],
                "line": line,
                "date": entry["date"],
            }
            if checked is False and _key(text) not in done:
                open_items.append(item)
            elif (
                checked is None
                and entry["date"] >= since
                and worth_keeping(text)
                and classify(text) == "open_items"
                and _key(text) not in done
            ):
                next_steps.append(item)

    recent: list[dict[str, Any]] = []
    for date in reversed(dates[-RECENT_NOTES:]):
        day = [e for e in ordered if e["date"] == date]
        topics = [
            e["heading"].split(" ", 1)[-1] if e["kind"] == "remember" else e["heading"] or e["text"]
            for e in day
        ]
        summary = "; ".join(_short(strip_markup(t.split("\n", 1)[0]), 40) for t in topics if t)
        recent.append({"date": date, "path": day[0]["path"], "text": _short(summary)})

    def render(items: list[dict[str, Any]], fmt: str) -> list[str]:
        return [fmt.format(**i) for i in items]

    sections = [
        ("## Open items", render(open_items, "- {text} ({path}:{line})")),
        ("## Recent discussion", render(recent, "- {date}: {text}")),
        ("## Next steps", render(next_steps, "- {text} ({path}:{line})")),
    ]
    text = f"# Snapshot (as of {as_of})\n"
    remaining = [list(lines) for _, lines in sections]
    blocks = [[f"\n{title}\n"] for title, _ in sections]
    for k, (_title, lines) in enumerate(sections):
        if not lines:
            blocks[k].append("- (none)\n")
    # Fill the three sections in turns, so a long list cannot crowd out the others.
    used = size(text) + sum(size("".join(b)) for b in blocks)
    while any(remaining) and used < budget:
        progressed = False
        for k in range(len(sections)):
            if remaining[k]:
                row = remaining[k][0] + "\n"
                if used + size(row) <= budget:
                    blocks[k].append(row)
                    used += size(row)
                    progressed = True
                remaining[k].pop(0)
        if not progressed and not any(remaining):
            break
    text += "".join("".join(b) for b in blocks)
    text = trim(text, budget)
    return Snapshot(
        text,
        size(text),
        budget,
        [i for i in open_items if f"{i['text']} ({i['path']}:{i['line']})" in text],
        [r for r in recent if f"- {r['date']}:" in text],
        [i for i in next_steps if f"{i['text']} ({i['path']}:{i['line']})" in text],
        principal,
    )
