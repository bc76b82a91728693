"""The report as one self-contained HTML page: inline CSS, charts as data: URIs, inline SVG
sparklines, no script, no web font, nothing fetched (a Content-Security-Policy says so, too).
Every piece of note text goes through `html.escape`: a note titled `<script>` shows as text.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from html import escape

from ..interest.model import InterestCluster, InterestMap
from ..interest.report import REPRESENTATIVES, Report
from .charts import Chart
from .report_md import TREND_MARK, one_line, recent_weeks

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CSS = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans SC", "PingFang SC",
       "Microsoft YaHei", sans-serif; color: #222; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; }
h3 { margin: 0 0 .3rem; font-size: 1.05rem; }
.meta, .muted { color: #666; } .msg { background: #fff8e1; border-left: 4px solid #f0b429;
  padding: .4rem .8rem; margin: .4rem 0; }
code { font: .85em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f4f4f4;
  padding: 0 .25em; border-radius: 3px; word-break: break-all; }
ul { padding-left: 1.2rem; } li { margin: .15rem 0; }
.tag { display: inline-block; background: #eef2f7; border-radius: 3px; padding: 0 .4em;
  margin: 0 .2em .2em 0; font-size: .9em; }
.cluster { border: 1px solid #ddd; border-left: 6px solid #999; border-radius: 4px;
  padding: .7rem 1rem; margin: .8rem 0; }
.cluster.heating { border-left-color: #c0392b; background: #fdf3f2; }
.cluster.cooling { border-left-color: #1f5fa8; background: #f2f6fc; }
.badge { font-size: .8rem; padding: .05rem .45rem; border-radius: 3px; color: #fff;
  background: #777; vertical-align: middle; }
.heating .badge { background: #c0392b; } .cooling .badge { background: #1f5fa8; }
.spark { vertical-align: middle; } .trend-list { margin: .3rem 0; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #666; font-size: .9rem; }
"""


def _e(text: str | None) -> str:
    return escape(one_line(text or ""), quote=True)


def _message(text: str) -> str:
    """A one-line message: `quoted` parts become <code>, everything escaped."""
    parts = one_line(text).split("`")
    if len(parts) % 2 == 0:
        return _e(text)
    return "".join(
        f"<code>{escape(p, quote=True)}</code>" if i % 2 else escape(p, quote=True)
        for i, p in enumerate(parts)
    )


def spark_svg(values: Sequence[int], *, width: int = 160, height: int = 24) -> str:
    """An inline SVG bar sparkline (each bar scaled to the busiest week)."""
    top = max(values, default=0)
    n = max(len(values), 1)
    bar = width / n
    rects = []
    for i, v in enumerate(values):
        h = 1 if v <= 0 or top <= 0 else max(2.0, (height - 2) * v / top)
        fill = "#ccc" if v <= 0 else "#4a6fa5"
        rects.append(
            f'<rect x="{i * bar:.1f}" y="{height - h:.1f}" width="{max(bar - 1, 1):.1f}"'
            f' height="{h:.1f}" fill="{fill}"/>'
        )
    label = escape(" ".join(str(v) for v in values))
    return (
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        f' role="img" aria-label="weekly notes: {label}"><title>weekly notes: {label}</title>'
        + "".join(rects)
        + "</svg>"
    )


def _path(path: str) -> str:
    return f"<code>{_e(path)}</code>"


def _cluster(cluster: InterestCluster) -> str:
    mark = TREND_MARK.get(cluster.trend, cluster.trend)
    badge = f' <span class="badge">{_e(mark)}</span>' if mark else ""
    weeks = recent_weeks(cluster)
    spark = ""
    if weeks:
        spark = (
            spark_svg([n for _, n in weeks])
            + f' <span class="muted">{_e(weeks[0][0])} … {_e(weeks[-1][0])}</span>'
        )
    tags = "".join(f'<span class="tag">{_e(t)}</span>' for t in cluster.top_tags[:6])
    members = "".join(
        f"<li>{_e(m.date or 'undated')} {_path(m.path)} {_e(m.title)}</li>"
        for m in cluster.members[:REPRESENTATIVES]
    )
    share = (
        f"recent {100 * cluster.recent_share:.0f}% / long-run {100 * cluster.longrun_share:.0f}%"
    )
    return (
        f'<section class="cluster {_e(cluster.trend)}" id="cluster-{cluster.id}">'
        f"<h3>#{cluster.id} {_e(cluster.label) or 'unlabelled'}{badge}</h3>"
        f'<div class="meta">{cluster.size} notes · {share}</div>'
        f"<div>{spark}</div><div>{tags}</div><ul>{members}</ul></section>"
    )


def _interest(imap: InterestMap, charts: Sequence[Chart]) -> list[str]:
    kind = "lexical" if imap.lexical else "semantic"
    out = [
        f"<h2>Interest clusters ({len(imap.clusters)})</h2>",
        f'<p class="meta">{imap.notes} notes clustered ({kind}), built {_e(imap.built_at)}.</p>',
    ]
    for label, trend in (("Heating", "heating"), ("Cooling", "cooling")):
        found = [c for c in imap.clusters if c.trend == trend]
        if found:
            links = ", ".join(f'<a href="#cluster-{c.id}">#{c.id} {_e(c.label)}</a>' for c in found)
            out.append(f'<p class="trend-list {trend}"><strong>{label}:</strong> {links}</p>')
    for chart in charts:
        data = base64.b64encode(chart.png).decode("ascii")
        out.append(
            f'<figure><img src="data:image/png;base64,{data}" width="{chart.width}"'
            f' height="{chart.height}" alt="{_e(chart.title)}">'
            f"<figcaption>{_e(chart.title)}</figcaption></figure>"
        )
    out += [_cluster(c) for c in imap.clusters]
    return out


def format_report_html(report: Report, charts: Sequence[Chart] = ()) -> str:
    w = report.window
    body = [
        f"<h1>lore report — {_e(report.vault)}</h1>",
        f'<p class="meta">Window: {_e(w.describe())} · today {_e(w.today)} · '
        f"{report.new_notes_total} new of {report.notes_total} notes</p>",
    ]
    body += [f'<p class="msg">{_message(m)}</p>' for m in report.messages]
    body.append(f"<h2>New notes ({report.new_notes_total})</h2>")
    if report.new_notes:
        items = []
        for n in report.new_notes:
            tags = "".join(f' <span class="tag">{_e(t)}</span>' for t in n.tags[:5])
            items.append(f"<li>{_e(n.date or 'undated')} {_path(n.path)} {_e(n.title)}{tags}</li>")
        more = report.new_notes_total - len(report.new_notes)
        if more > 0:
            items.append(f'<li class="muted">… and {more} more</li>')
        body.append("<ul>" + "".join(items) + "</ul>")
    else:
        body.append(f'<p class="muted">Nothing dated from {_e(w.since)} to {_e(w.until)}.</p>')
    body.append("<h2>Top tags</h2><ul>")
    for label, counted in (("Whole vault", report.top_tags), ("New notes", report.window_tags)):
        listed = "".join(f'<span class="tag">{_e(t)} ({n})</span>' for t, n in counted) or "none"
        body.append(f"<li>{label}: {listed}</li>")
    body.append("</ul><h2>Active entities</h2>")
    if report.entities:
        items = []
        for e in report.entities:
            kind = f" ({_e(e.type)})" if e.type else ""
            source = f" ({_e(e.source)})" if e.source else ""
            items.append(
                f"<li>{_e(e.name)}{kind} — last active {_e(e.last_activity)}{source}"
                f" · {_path(e.path)}</li>"
            )
        body.append("<ul>" + "".join(items) + "</ul>")
    else:
        body.append('<p class="muted">None active in the window.</p>')
    if report.interest is not None:
        body += _interest(report.interest, charts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>lore report — {_e(report.vault)}</title><style>{CSS}</style></head>\n"
        "<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
