"""The interest map for people (a table, a cluster's page) and for scripts (--json)."""

from __future__ import annotations

from ..interest.model import InterestCluster, InterestMap
from .human import BOLD, DIM, RESET, clean

SPARK = "▁▂▃▄▅▆▇█"
SPARK_WEEKS = 26
TREND_MARK = {"heating": "↑ heating", "cooling": "↓ cooling", "steady": "· steady", "new": "* new"}


def sparkline(weekly: tuple[tuple[str, int], ...], weeks: int = SPARK_WEEKS) -> str:
    counts = [n for _w, n in weekly[-weeks:]]
    if not counts:
        return ""
    top = max(counts) or 1
    steps = len(SPARK) - 2  # zero weeks get the lowest bar, any note at least the next
    return "".join(SPARK[0] if n == 0 else SPARK[1 + (n * steps + top - 1) // top] for n in counts)


def _style(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color else text


def format_map(interest: InterestMap, *, color: bool, examples: int = 2) -> str:
    kind = "lexical (TF-IDF of the notes' words)" if interest.lexical else "vectors"
    source = str(interest.params.get("source", kind))
    head = (
        f"interest map: {interest.notes} note(s) in {len(interest.clusters)} cluster(s),"
        f" {kind if interest.lexical else source}, built {interest.built_at}"
    )
    lines = [_style(head, BOLD, color)]
    if not interest.clusters:
        return "\n".join(lines)
    width = max(len(str(c.id)) for c in interest.clusters)
    for c in interest.clusters:
        trend = TREND_MARK.get(c.trend, c.trend)
        spark = sparkline(c.weekly)
        lines.append(
            f"{c.id:>{width}}  {c.size:>5} notes  {trend:<10} {clean(c.label)}"
            + (f"  {_style(spark, DIM, color)}" if spark else "")
        )
        for m in c.members[:examples]:
            lines.append(
                " " * (width + 2) + _style(f"e.g. {clean(m.title)} ({clean(m.path)})", DIM, color)
            )
    if interest.unclustered:
        lines.append(f"unclustered: {len(interest.unclustered)} note(s)")
    return "\n".join(lines)


def format_cluster(cluster: InterestCluster, *, color: bool) -> str:
    lines = [
        _style(f"cluster {cluster.id}: {clean(cluster.label)}", BOLD, color),
        f"notes: {cluster.size}   label from: {cluster.label_source}",
        f"trend: {TREND_MARK.get(cluster.trend, cluster.trend)}   recent share"
        f" {cluster.recent_share:.1%} vs long-run {cluster.longrun_share:.1%}",
        f"top tags: {', '.join(clean(t) for t in cluster.top_tags) or '-'}",
    ]
    if cluster.weekly:
        first, last = cluster.weekly[-SPARK_WEEKS:][0][0], cluster.weekly[-1][0]
        lines.append(f"weekly {first}..{last}: {sparkline(cluster.weekly)}")
    lines.append("notes, most representative first:")
    for i, m in enumerate(cluster.members, 1):
        lines.append(
            f"{i:>4}. {clean(m.title)}  "
            + _style(
                f"{clean(m.path)} · {m.date or 'no date'} · sim {m.similarity:.3f}", DIM, color
            )
        )
    return "\n".join(lines)
