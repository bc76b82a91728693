"""Each cluster over time: notes per ISO week, and whether it is heating or cooling.

Only notes with a date of their own count (front matter, file name or text); undated notes
are left out of the trends (they stay in their clusters). The weekly series runs from the
first dated week to the newest one (at most MAX_WEEKS), the vault's own range.

recent share   = the cluster's dated notes in the last `recent_weeks` ISO weeks (this
                 week included; future dates count as recent) / all clustered dated
                 notes in those weeks
long-run share = the cluster's dated notes / all clustered dated notes

trend: `new` when every dated note of the cluster is recent while the vault has older
ones; `heating` when recent share >= ratio × long-run share (and at least 2 recent notes);
`cooling` when recent share <= long-run share / ratio; `steady` otherwise, and for every
cluster when nothing was written recently or the cluster has no dated note.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .model import Trend

MAX_WEEKS = 520  # the weekly series covers at most the last ten years


@dataclass(frozen=True)
class ClusterTrend:
    weekly: tuple[tuple[str, int], ...]
    trend: Trend
    recent_share: float
    longrun_share: float


def week_start(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def week_label(monday: dt.date) -> str:
    year, week, _ = monday.isocalendar()
    return f"{year}-W{week:02d}"


def parse_date(text: str | None) -> dt.date | None:
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def trends(
    clusters: Sequence[Sequence[str | None]],
    *,
    today: dt.date,
    recent_weeks: int,
    ratio: float,
) -> tuple[list[ClusterTrend], list[str]]:
    """One ClusterTrend per cluster (given as its members' dates), and messages."""
    dated = [[d for d in (parse_date(x) for x in dates) if d is not None] for dates in clusters]
    messages: list[str] = []
    undated = sum(len(c) for c in clusters) - sum(len(d) for d in dated)
    if undated:
        messages.append(
            f"{undated} note(s) without a date of their own (front matter, file name or text)"
            " are left out of the trends"
        )
    this_week = week_start(today)
    recent_from = this_week - dt.timedelta(weeks=recent_weeks - 1)
    all_days = [d for days in dated for d in days]
    if not all_days:
        flat = ClusterTrend((), "steady", 0.0, 0.0)
        return [flat for _ in clusters], messages
    # The series follows the vault's own dates: a vault written 2015-2024 ends in 2024,
    # not in a run of empty weeks up to today.
    last = week_start(max(all_days))
    first = max(week_start(min(all_days)), last - dt.timedelta(weeks=MAX_WEEKS - 1))
    weeks = []
    monday = first
    while monday <= last:
        weeks.append(monday)
        monday += dt.timedelta(weeks=1)
    total = len(all_days)
    total_recent = sum(1 for d in all_days if d >= recent_from)
    if not total_recent:
        messages.append(f"no dated note in the last {recent_weeks} week(s): every trend is steady")
    out: list[ClusterTrend] = []
    for days in dated:
        per_week = Counter(week_start(d) for d in days)
        weekly = tuple((week_label(w), per_week.get(w, 0)) for w in weeks)
        recent = sum(1 for d in days if d >= recent_from)
        longrun_share = len(days) / total
        recent_share = recent / total_recent if total_recent else 0.0
        trend: Trend = "steady"
        if total_recent and days:
            if recent == len(days) and total > total_recent:
                trend = "new"
            elif recent >= 2 and recent_share >= ratio * longrun_share:
                trend = "heating"
            elif recent_share <= longrun_share / ratio:
                trend = "cooling"
        out.append(ClusterTrend(weekly, trend, recent_share, longrun_share))
    return out, messages
