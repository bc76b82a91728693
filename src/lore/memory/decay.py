"""Activity decay and trust: weights that lower a result's rank, never remove it.

    weight(age) = floor + (1 − floor) · 0.5 ^ (age_days / half_life_days)

Pinned items (`pinned: true`) and high-priority ones (priority ≥ `pinned_priority`) keep
weight 1: a key decision from three months ago does not sink; last week's chatter does.
Trust orders conflicting statements: confirmed by a person > inferred by the system >
imported, whichever was written last.
"""

from __future__ import annotations

import datetime as dt

from .settings import MemorySettings

TRUST_WEIGHT = {"confirmed": 1.0, "inferred": 0.8, "imported": 0.6}
HAND_WRITTEN_TRUST = 1.0  # an entry without a trust field was written by a person


def exempt(settings: MemorySettings, *, pinned: bool, priority: int | None) -> bool:
    return pinned or (priority is not None and priority >= settings.pinned_priority)


def age_days(date: str | None, today: dt.date) -> int | None:
    if not date:
        return None
    try:
        return (today - dt.date.fromisoformat(date[:10])).days
    except ValueError:
        return None


def decay_weight(
    settings: MemorySettings,
    date: str | None,
    today: dt.date,
    *,
    pinned: bool = False,
    priority: int | None = None,
) -> float:
    if exempt(settings, pinned=pinned, priority=priority):
        return 1.0
    age = age_days(date, today)
    if age is None:
        return settings.decay_floor
    if age <= 0:
        return 1.0
    floor = settings.decay_floor
    halving = float(0.5 ** (age / settings.half_life_days))
    return round(floor + (1.0 - floor) * halving, 6)


def trust_weight(trust: str | None) -> float:
    return TRUST_WEIGHT.get(trust or "", HAND_WRITTEN_TRUST)
