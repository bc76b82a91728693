"""The report as Markdown (`lore report`, the default format; also what a terminal shows).

Note text (titles, tags, labels, entity names) is escaped so that it renders as the text it
is: a title like `<script>` or `*bold*` stays literal in a Markdown viewer. Paths are code
spans. Charts are linked only when they were drawn (`--out DIR`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from ..interest.model import InterestCluster, InterestMap
from ..interest.report import REPRESENTATIVES, Report

SPARK = "▁▂▃▄▅▆▇█"
SPARK_WEEKS = 16  # weeks a sparkline covers (the latest ones)
TREND_MARK = {"heating": "▲ heating", "cooling": "▼ cooling", "new": "✦ new", "steady": ""}
CHART_TITLES = {"map": "Interest map", "trends": "Weekly notes per cluster"}

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~&])")


def one_line(text: str) -> str:
    """Text on one line: control characters and line breaks become a space."""
    return _CONTROL.sub(" ", text).strip()


def md_text(text: str) -> str:
    """Note text made literal in Markdown: the ASCII punctuation that can open inline markup,
    HTML or an entity is backslash-escaped (CommonMark allows it for any ASCII punctuation).
    Line-start markup (lists, quotes) cannot occur: note text never starts a line here."""
    return _MD_SPECIAL.sub(r"\\\1", one_line(text))


def md_code(text: str) -> str:
    """A code span holding `text` whatever backticks it contains."""
    text = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_message(text: str) -> str:
    """A one-line message: `quoted` parts stay code spans, the rest is escaped."""
    parts = one_line(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code spans at all
        return md_text(text)
    return "".join(
        md_code(p) if i % 2 else _MD_SPECIAL.sub(r"\\\1", p) for i, p in enumerate(parts)
    )


def display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def clip(text: str, width: int) -> str:
    """At most `width` columns (wide CJK characters count two), with … when cut."""
    text = one_line(text)
    if display_width(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out).rstrip() + "…"


def sparkline(values: Sequence[int]) -> str:
    """▁ for an empty week, ▂…█ scaled to the busiest week (so any note shows)."""
    top = max(values, default=0)
    if top <= 0:
        return SPARK[0] * len(values)
    if top == 1:
        return "".join(SPARK[-1] if v > 0 else SPARK[0] for v in values)
    steps = len(SPARK) - 2
    return "".join(
        SPARK[0] if v <= 0 else SPARK[1 + round(steps * (v - 1) / (top - 1))] for v in values
    )


def recent_weeks(cluster: InterestCluster, weeks: int = SPARK_WEEKS) -> list[tuple[str, int]]:
    return list(cluster.weekly[-weeks:])


def cluster_name(cluster: InterestCluster) -> str:
    return f"#{cluster.id} {one_line(cluster.label) or 'unlabelled'}"


def _pct(share: float) -> str:
    return f"{100 * share:.0f}%"


def _cluster_lines(cluster: InterestCluster) -> list[str]:
    mark = TREND_MARK.get(cluster.trend, cluster.trend)
    head = f"### #{cluster.id} {md_text(cluster.label) or 'unlabelled'}"
    lines = [head + (f" — **{mark}**" if mark else "")]
    weeks = recent_weeks(cluster)
    facts = [f"{cluster.size} notes"]
    if weeks:
        facts.append(f"{sparkline([n for _, n in weeks])} ({weeks[0][0]} … {weeks[-1][0]})")
    facts.append(f"recent {_pct(cluster.recent_share)} / long-run {_pct(cluster.longrun_share)}")
    if cluster.top_tags:
        facts.append("tags: " + ", ".join(md_text(t) for t in cluster.top_tags[:6]))
    lines += ["", " · ".join(facts), ""]
    for m in cluster.members[:REPRESENTATIVES]:
        lines.append(f"- {m.date or 'undated'} {md_code(m.path)} {md_text(m.title)}")
    return lines


def _interest_lines(imap: InterestMap, charts: Mapping[str, str] | None) -> list[str]:
    kind = "lexical" if imap.lexical else "semantic"
    lines = [
        f"## Interest clusters ({len(imap.clusters)})",
        "",
        f"{imap.notes} notes clustered ({kind}), built {imap.built_at}.",
    ]
    for label, trend in (("Heating", "heating"), ("Cooling", "cooling")):
        found = [c for c in imap.clusters if c.trend == trend]
        if found:
            names = ", ".join(f"#{c.id} {md_text(clip(c.label, 30))}" for c in found)
            lines.append(f"- **{label}:** {names}")
    lines.append("")
    if charts:
        for key, filename in charts.items():
            lines += [f"![{CHART_TITLES.get(key, key)}]({filename})", ""]
    else:
        lines += ["Charts: run `lore report --out DIR` to draw the map and the trends.", ""]
    for cluster in imap.clusters:
        lines += _cluster_lines(cluster) + [""]
    return lines


def format_report_md(report: Report, charts: Mapping[str, str] | None = None) -> str:
    """The report as Markdown; `charts` maps a chart key (map, trends) to its file name."""
    w = report.window
    lines = [
        f"# lore report — {md_text(report.vault)}",
        "",
        f"Window: {w.describe()} · today {w.today} · "
        f"{report.new_notes_total} new of {report.notes_total} notes",
        "",
    ]
    lines += [f"> {md_message(m)}" for m in report.messages]
    if report.messages:
        lines.append("")
    lines += [f"## New notes ({report.new_notes_total})", ""]
    if not report.new_notes:
        lines.append(f"Nothing dated from {w.since} to {w.until}.")
    for n in report.new_notes:
        tags = f" · {', '.join(md_text(t) for t in n.tags[:5])}" if n.tags else ""
        lines.append(f"- {n.date or 'undated'} {md_code(n.path)} {md_text(n.title)}{tags}")
    if report.new_notes_total > len(report.new_notes):
        lines.append(f"- … and {report.new_notes_total - len(report.new_notes)} more")
    lines += ["", "## Top tags", ""]
    for label, counted in (("Whole vault", report.top_tags), ("New notes", report.window_tags)):
        listed = " · ".join(f"{md_text(t)} ({n})" for t, n in counted) or "none"
        lines.append(f"- {label}: {listed}")
    lines += ["", "## Active entities", ""]
    if not report.entities:
        lines.append("None active in the window.")
    for e in report.entities:
        kind = f" ({md_text(e.type)})" if e.type else ""
        lines.append(
            f"- {md_text(e.name)}{kind} — last active {e.last_activity}"
            f"{f' ({e.source})' if e.source else ''} · {md_code(e.path)}"
        )
    lines.append("")
    if report.interest is not None:
        lines += _interest_lines(report.interest, charts)
    return "\n".join(lines).rstrip() + "\n"
