"""`recent`: the entities and notes active in the last N days, with their activity.

An entity is active when its last activity (card date, latest event or latest dated
mention, whichever is newest) falls in the window; a note when its date does. Both are
listed newest first with their decay weight (1.0 for pinned and high-priority items).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .access import access_for
from .decay import decay_weight
from .entities import Entities
from .model import RecentResult

if TYPE_CHECKING:
    from .services import MemoryServices

MAX_DAYS = 36_500


def recent(
    services: MemoryServices, *, days: int = 7, limit: int = 20, principal: str | None = None
) -> RecentResult:
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        raise ConfigError(
            f"--days must be a whole number of days from 1 to {MAX_DAYS}, not {days!r}"
        )
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConfigError(f"--limit must be a positive number, not {limit!r}")
    settings = services.settings
    access = access_for(settings, principal)
    today = settings.today_date()
    since = (today - dt.timedelta(days=days - 1)).isoformat()
    if access.blind:
        return RecentResult(days, since, today.isoformat(), [], [], principal, access.reason)
    ents = Entities(services.store, settings, access)
    entities = []
    for info in ents.registry.entities.values():
        activity = ents.last_activity(info)
        if activity["date"] and since <= activity["date"] <= today.isoformat():
            entities.append(
                {
                    "name": info.name,
                    "type": info.card["type"],
                    "path": info.card["path"],
                    "last_activity": activity,
                    "weight": ents.weight(info, today),
                    "pinned": info.pinned,
                }
            )
    entities.sort(key=lambda e: (e["last_activity"]["date"], e["weight"], e["name"]), reverse=True)
    notes = [
        {
            "path": path,
            "title": title,
            "date": date,
            "weight": decay_weight(settings, date, today, pinned=pinned, priority=priority),
            "pinned": pinned or (priority is not None and priority >= settings.pinned_priority),
        }
        for path, title, date, priority, pinned in services.store.dated_notes(
            access.globs, since, today.isoformat()
        )
    ]
    reason = None
    if not entities and not notes:
        reason = f"nothing dated from {since} to {today.isoformat()}"
    return RecentResult(
        days, since, today.isoformat(), entities[:limit], notes[:limit], principal, reason
    )
