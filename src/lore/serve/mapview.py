"""The interest map as SVG geometry (pure): each note a point at its stored 2-D position,
scaled into the picture, coloured by cluster; each cluster's weekly counts a sparkline.
The page draws it as inline SVG: every point is a link to its note with a <title> the
browser shows on hover, so it works without JavaScript."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..interest.model import InterestMap

WIDTH, HEIGHT, PAD = 720, 480, 24
SPREAD = 9.0  # points closer than this (pixels) are moved apart
SPARK_W, SPARK_H = 120, 24
SPARK_WEEKS = 26
# Colour-blind-friendly palette (Okabe-Ito, then Tol's muted), repeated past twelve clusters.
PALETTE = (
    "#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00",
    "#332288", "#117733", "#882255", "#44aa99", "#999933", "#aa4499",
)  # fmt: skip


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    path: str
    title: str
    date: str | None
    cluster: int
    colour: str


@dataclass(frozen=True)
class ClusterRow:
    id: int
    label: str
    size: int
    trend: str
    colour: str
    spark: str  # SVG polyline points
    top_tags: tuple[str, ...]


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def points(interest: InterestMap) -> list[Point]:
    members = [(i, c.id, m) for i, c in enumerate(interest.clusters) for m in c.members]
    if not members:
        return []
    xs = [m.x for _i, _c, m in members]
    ys = [m.y for _i, _c, m in members]
    lo_x, hi_x, lo_y, hi_y = min(xs), max(xs), min(ys), max(ys)
    span_x = (hi_x - lo_x) or 1.0
    span_y = (hi_y - lo_y) or 1.0
    out = []
    taken: dict[tuple[int, int], int] = {}
    for index, cluster_id, m in members:
        x = PAD + (m.x - lo_x) / span_x * (WIDTH - 2 * PAD)
        y = HEIGHT - PAD - (m.y - lo_y) / span_y * (HEIGHT - 2 * PAD)
        # Notes at the same place (near-identical texts) are set around it on a small
        # spiral, so that each can still be pointed at and clicked.
        spot = (round(x / SPREAD), round(y / SPREAD))
        n = taken.get(spot, 0)
        taken[spot] = n + 1
        if n:
            angle = n * 2.4  # the golden angle: no two land on one another
            radius = SPREAD * math.sqrt(n)
            x = min(WIDTH - PAD / 2, max(PAD / 2, x + radius * math.cos(angle)))
            y = min(HEIGHT - PAD / 2, max(PAD / 2, y + radius * math.sin(angle)))
        out.append(
            Point(round(x, 1), round(y, 1), m.path, m.title, m.date, cluster_id, colour(index))
        )
    return out


def sparkline(weekly: tuple[tuple[str, int], ...]) -> str:
    counts = [n for _w, n in weekly[-SPARK_WEEKS:]]
    if not counts:
        return ""
    top = max(counts) or 1
    step = SPARK_W / max(1, len(counts) - 1)
    return " ".join(
        f"{round(i * step, 1)},{round(SPARK_H - 2 - n / top * (SPARK_H - 4), 1)}"
        for i, n in enumerate(counts)
    )


def cluster_rows(interest: InterestMap) -> list[ClusterRow]:
    return [
        ClusterRow(c.id, c.label, c.size, c.trend, colour(i), sparkline(c.weekly), c.top_tags)
        for i, c in enumerate(interest.clusters)
    ]
