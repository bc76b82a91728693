"""Report charts as PNG bytes, drawn with matplotlib (the `report` extra, imported here only,
inside the functions, with the Agg renderer and no pyplot state).

- the map: every clustered note at its 2-D position (ClusterMember.x/y), coloured by
  cluster, with the cluster numbers on the plot and a legend outside it;
- the trends: one small panel per cluster with dated notes (weekly notes as bars, a 4-week
  mean as a line, the latest TREND_WEEKS weeks from the first busy one), heating clusters
  in red and cooling ones in blue.

Chinese labels need a font with CJK glyphs, which matplotlib's default lacks. The report
extra installs one (Noto Sans SC, OFL); failing that, an installed system CJK font is used;
failing both, characters no available font has are left out of the labels (a label left
empty becomes "cluster N") and a notice says how to get the font. The same map and the same
matplotlib give byte-identical PNGs (no timestamp or software tag in the file).
"""

from __future__ import annotations

import functools
import importlib.util
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import install_hint
from ..interest.model import InterestCluster, InterestMap
from .report_md import clip, one_line

TREND_WEEKS = 52  # weeks the trend chart covers (the latest ones)
MIN_WEEKS = 8  # the trend chart covers at least this many weeks (when there are)
TREND_PANELS = 12  # clusters with a trend panel (heating and cooling ones first)
LABEL_WIDTH = 28  # columns (a CJK character counts two)
DPI = 100
MARKERS = "o^sDvP*X"
HEATING, COOLING, STEADY = "#c0392b", "#1f5fa8", "#555555"
# Installed CJK families, best first, tried when the bundled font is missing.
SYSTEM_CJK = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "SimHei",
    "Noto Sans CJK JP",
)
FONT_HINT = f"for a CJK chart font, {install_hint('report')}"


@dataclass(frozen=True)
class Chart:
    key: str  # map | trends
    filename: str
    title: str
    png: bytes
    width: int
    height: int


def charts_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def bundled_cjk_font() -> Path | None:
    """The CJK font file the report extra installs (Noto Sans SC), if it is installed."""
    if importlib.util.find_spec("pylopdf_fonts_zh_cn") is None:
        return None
    import pylopdf_fonts_zh_cn

    path = Path(pylopdf_fonts_zh_cn.sans_path())
    return path if path.is_file() else None


@dataclass(frozen=True)
class _Fonts:
    families: tuple[str, ...]
    cjk: str | None  # the CJK family in use
    covered: frozenset[int]  # code points some family in use has a glyph for


def _cmap(path: str) -> set[int]:
    from fontTools.ttLib import TTFont

    with TTFont(path, lazy=True, fontNumber=0) as font:
        return set(font.getBestCmap() or {})


@functools.lru_cache(maxsize=1)
def chart_fonts() -> _Fonts:
    """Register the bundled CJK font once and pick the families for the charts."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    bundled = bundled_cjk_font()
    if bundled is not None:
        manager.addfont(str(bundled))
    by_name = {f.name: f.fname for f in manager.ttflist}
    cjk = None
    if bundled is not None:
        cjk = font_manager.FontProperties(fname=str(bundled)).get_name()
    else:
        cjk = next((name for name in SYSTEM_CJK if name in by_name), None)
    families = tuple(f for f in (cjk, "DejaVu Sans") if f)
    covered: set[int] = set()
    for family in families:
        if family in by_name:
            covered |= _cmap(by_name[family])
    return _Fonts(families, cjk, frozenset(covered))


def drawable(text: str, fallback: str, fonts: _Fonts | None = None) -> str:
    """`text` without the characters no chart font can draw (no tofu boxes); `fallback`
    when nothing readable is left."""
    fonts = fonts or chart_fonts()
    kept = "".join(ch for ch in one_line(text) if ord(ch) in fonts.covered or ch == " ")
    kept = re.sub(r"\s+", " ", kept).strip(" /·-–—|,;:")  # no separator left dangling
    return kept if any(ch.isalnum() for ch in kept) else fallback


def _label(cluster: InterestCluster, fonts: _Fonts) -> str:
    name = drawable(cluster.label, f"cluster {cluster.id}", fonts)
    return f"#{cluster.id} {clip(name, LABEL_WIDTH)}"


def _style(index: int) -> tuple[Any, str]:
    """(colour, marker) of the cluster at `index` in the map: the ten strong tab10
    colours, then the same colours with another marker shape (pale tab20 shades are
    hard to tell apart)."""
    from matplotlib import colormaps

    return colormaps["tab10"](index % 10), MARKERS[(index // 10) % len(MARKERS)]


def _png(fig: Any) -> tuple[bytes, int, int]:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    width, height = (int(round(v)) for v in fig.get_size_inches() * DPI)
    return buf.getvalue(), width, height


def _rc(fonts: _Fonts) -> Any:  # matplotlib types the keys as a Literal
    return {
        "font.family": list(fonts.families),
        "font.size": 10,
        "axes.unicode_minus": False,
        "svg.hashsalt": "lore",
        "path.simplify": True,
        # Labels are note text: "$20 (50% off) vs $30" is a price, not math text (whose
        # parser raises on it), and `_`, `^`, `\` are characters, not markup.
        "text.parse_math": False,
    }


def _place_numbers(
    points: list[tuple[float, float]], bounds: tuple[float, float, float, float]
) -> list[tuple[float, float]]:
    """Positions for the cluster numbers near `points` (the clusters' medians) that keep
    them apart: a number closer to an earlier one than a box of about its size moves to the
    nearest free spot around its point."""
    x0, x1, y0, y1 = bounds
    sx, sy = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    box_x, box_y = 0.045, 0.055  # a two-digit number at 12 pt, as a share of the axes
    steps = [(0.0, 0.0)] + [
        (dx * r, dy * r)
        for r in (1, 2, 3, 4)
        for dx, dy in ((0, -1), (0, 1), (1, 0), (-1, 0), (1, -1), (-1, -1), (1, 1), (-1, 1))
    ]
    placed: list[tuple[float, float]] = []
    for px, py in points:
        nx, ny = (px - x0) / sx, (py - y0) / sy
        spot = next(
            (
                (nx + dx * box_x, ny + dy * box_y)
                for dx, dy in steps
                if all(
                    abs(nx + dx * box_x - qx) >= box_x or abs(ny + dy * box_y - qy) >= box_y
                    for qx, qy in placed
                )
            ),
            (nx, ny),
        )
        placed.append(spot)
    return [(x0 + qx * sx, y0 + qy * sy) for qx, qy in placed]


def map_png(imap: InterestMap) -> tuple[bytes, int, int]:
    """The 2-D map of the clustered notes, coloured by cluster: (PNG, width, height)."""
    import matplotlib
    from matplotlib import patheffects
    from matplotlib.figure import Figure

    fonts = chart_fonts()
    shown = [(i, c) for i, c in enumerate(imap.clusters) if c.members]
    with matplotlib.rc_context(_rc(fonts)):
        fig = Figure(figsize=(11, 6.5), layout="constrained")
        ax = fig.add_subplot()
        outline = [patheffects.withStroke(linewidth=3.5, foreground="white")]
        size = max(6.0, min(28.0, 3000 / max(imap.notes, 1)))
        medians = []
        for index, cluster in shown:
            xs = [m.x for m in cluster.members]
            ys = [m.y for m in cluster.members]
            colour, marker = _style(index)
            ax.scatter(
                xs,
                ys,
                s=size,
                color=colour,
                alpha=0.75,
                marker=marker,
                linewidths=0,
                label=f"{_label(cluster, fonts)} ({cluster.size})",
            )
            medians.append((sorted(xs)[len(xs) // 2], sorted(ys)[len(ys) // 2]))
        ax.margins(0.06)  # points and numbers clear of the frame
        bounds = (*ax.get_xlim(), *ax.get_ylim())
        for (_, cluster), spot in zip(shown, _place_numbers(medians, bounds), strict=True):
            ax.annotate(
                str(cluster.id),
                spot,
                ha="center",
                va="center",
                fontsize=12,
                color="#111111",
                path_effects=outline,
            )
        kind = "lexical" if imap.lexical else "semantic"
        ax.set_title(f"Interest map: {imap.notes} notes, {len(shown)} clusters ({kind})")
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_color("#cccccc")
        if shown:
            fig.legend(
                loc="outside right upper",
                title="cluster (notes)",
                fontsize=9,
                markerscale=(64 / size) ** 0.5,
                frameon=False,
                ncols=1 if len(shown) <= 24 else 2,
            )
        return _png(fig)


def _trend_clusters(imap: InterestMap) -> list[tuple[int, InterestCluster]]:
    """(colour index, cluster) of the panels: heating and cooling first, then the largest;
    shown in map order. A cluster without a dated note gets no panel: a flat zero says
    nothing (a vault of undated notes with a few dated ones drew a dozen of them)."""
    indexed = [(i, c) for i, c in enumerate(imap.clusters) if any(n for _, n in c.weekly)]
    ranked = sorted(indexed, key=lambda ic: (ic[1].trend not in ("heating", "cooling"), ic[0]))
    return sorted(ranked[:TREND_PANELS], key=lambda ic: ic[0])


def _weeks(shown: list[tuple[int, InterestCluster]]) -> list[str]:
    """The latest TREND_WEEKS weeks, from the first one any shown cluster has a note in
    (at least MIN_WEEKS)."""
    weeks = sorted({w for _, c in shown for w, _ in c.weekly})[-TREND_WEEKS:]
    busy = {w for _, c in shown for w, n in c.weekly if n}
    first = next((i for i, w in enumerate(weeks) if w in busy), 0)
    return weeks[max(0, min(first, len(weeks) - MIN_WEEKS)) :]


def _mean(values: Sequence[int], span: int = 4) -> list[float]:
    return [
        sum(values[max(0, i - span + 1) : i + 1]) / min(span, i + 1) for i in range(len(values))
    ]


def trends_png(imap: InterestMap) -> tuple[bytes, int, int]:
    """Weekly notes per cluster, one panel each: (PNG, width, height)."""
    import matplotlib
    from matplotlib.figure import Figure

    fonts = chart_fonts()
    shown = _trend_clusters(imap)
    weeks = _weeks(shown)
    rows = max(len(shown), 1)
    with matplotlib.rc_context(_rc(fonts)):
        height = 1.1 + 1.05 * rows
        fig = Figure(figsize=(11, height))  # fixed margins: constrained layout is slow here
        fig.subplots_adjust(
            left=0.045, right=0.985, top=1 - 0.8 / height, bottom=0.5 / height, hspace=0.55
        )
        axes = fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
        undated = sum(1 for c in imap.clusters if not any(n for _, n in c.weekly))
        more = len(imap.clusters) - len(shown) - undated
        fig.suptitle(
            "Weekly notes per cluster (bars) and 4-week mean (line)"
            + (f"; {more} more clusters in the report" if more > 0 else "")
            + (f"; {undated} clusters without dated notes" if undated else ""),
            fontsize=11,
            y=1 - 0.15 / height,
            va="top",
        )
        for ax, (index, cluster) in zip(axes, shown, strict=False):
            counts = dict(cluster.weekly)
            values = [counts.get(w, 0) for w in weeks]
            xs = list(range(len(weeks)))
            colour = _style(index)[0]
            ax.bar(xs, values, width=0.85, color=colour, alpha=0.35, linewidth=0)
            ax.plot(xs, _mean(values), color=colour, linewidth=1.8)
            mark = {"heating": " ▲ heating", "cooling": " ▼ cooling", "new": " · new"}
            title_colour = {"heating": HEATING, "cooling": COOLING}.get(cluster.trend, STEADY)
            ax.set_title(
                f"{_label(cluster, fonts)} · {cluster.size} notes{mark.get(cluster.trend, '')}",
                loc="left",
                fontsize=10,
                color=title_colour,
            )
            top = max(values, default=0)
            ax.set_ylim(0, max(top, 1) * 1.15)
            ax.set_yticks([0, top] if top else [0])
            ax.tick_params(axis="y", labelsize=8)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        if weeks:
            step = max(1, len(weeks) // 8)
            ticks = list(range(0, len(weeks), step))
            axes[-1].set_xticks(ticks, [weeks[i] for i in ticks], fontsize=8)
            axes[-1].set_xlim(-0.6, len(weeks) - 0.4)
        return _png(fig)


def draw_charts(imap: InterestMap | None) -> tuple[list[Chart], list[str]]:
    """The report's charts for a stored map (none without one), and notices for the user
    (matplotlib missing, no CJK font)."""
    if imap is None or not imap.clusters:
        return [], []
    if not charts_available():
        return [], [f"charts need matplotlib: {install_hint('report')}"]
    notices: list[str] = []
    fonts = chart_fonts()
    labels = " ".join(c.label for c in imap.clusters)
    if fonts.cjk is None and any(ord(ch) not in fonts.covered for ch in labels if ch.strip()):
        notices.append(f"no chart font for some label characters, left out: {FONT_HINT}")
    charts = []
    drawn = [("map", "clusters-map.png", "Interest map", map_png)]
    if any(n for c in imap.clusters for _, n in c.weekly):
        drawn.append(("trends", "clusters-trends.png", "Weekly notes per cluster", trends_png))
    else:  # empty axes would say nothing
        notices.append("no dated notes (front matter, file name or text): no trend chart")
    for key, filename, title, draw in drawn:
        png, width, height = draw(imap)
        charts.append(Chart(key, filename, title, png, width, height))
    return charts, notices
