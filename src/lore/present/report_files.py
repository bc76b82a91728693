"""Render a Report in a format, with its charts, to a string or into a folder
(`lore report --out DIR`: report.md or report.html plus the chart PNGs beside it).

Markdown links the PNG files, so it has charts only in a folder; HTML carries its charts
inside (data: URIs), so it has them on standard output, too. Files are written whole
and never through a symlink planted in the folder (lore.safe_write).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError, PathError, shown
from ..interest.report import Report
from ..safe_write import open_folder
from .charts import Chart, draw_charts
from .report_html import format_report_html
from .report_md import format_report_md

FORMATS = ("md", "html")
CHART_FILES = ("clusters-map.png", "clusters-trends.png")


@dataclass(frozen=True)
class Rendered:
    text: str  # the report in its format
    charts: tuple[Chart, ...] = ()
    files: tuple[Path, ...] = ()  # written, report first (empty without a folder)
    notices: tuple[str, ...] = field(default=())


def render_report(report: Report, fmt: str = "md", *, charts: bool = False) -> Rendered:
    """The report as text; `charts` draws them (Markdown can only link files: see
    write_report)."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    drawn, notices = draw_charts(report.interest) if charts else ([], [])
    if fmt == "html":
        text = format_report_html(report, drawn)
    else:
        text = format_report_md(report, {c.key: c.filename for c in drawn} or None)
    return Rendered(text, tuple(drawn), notices=tuple(notices))


def _place(out_dir: Path, vault_root: Path | None) -> tuple[Path, str | None]:
    """(the root to write under, the folder relative to it, or None for a folder of the
    user's own): a folder inside the vault is reached from the vault's root without
    following links, like every other write there; any other folder is the user's."""
    if vault_root is not None:
        absolute = Path(os.path.normpath(Path.cwd() / out_dir))  # not resolved: on purpose
        if absolute == vault_root or vault_root in absolute.parents:
            return vault_root, absolute.relative_to(vault_root).as_posix()
    return out_dir, None


def write_report(
    report: Report,
    fmt: str,
    out_dir: Path,
    *,
    charts: bool = True,
    vault_root: Path | None = None,
) -> Rendered:
    """Write report.<fmt> and its chart PNGs into `out_dir` (created when missing); chart
    files of an earlier run that this one does not draw are removed. `vault_root`: the
    (resolved) vault, whose folders are written like the vault's own (lore.safe_write)."""
    root, rel = _place(out_dir, vault_root)
    if rel is None:
        if out_dir.exists() and not out_dir.is_dir():
            raise ConfigError(f"--out {shown(str(out_dir))}: not a folder")
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"--out {shown(str(out_dir))}: cannot create: {exc.strerror}"
            ) from None
    rendered = render_report(report, fmt, charts=charts)
    files = [(f"report.{fmt}", rendered.text.encode("utf-8"))]
    files += [(chart.filename, chart.png) for chart in rendered.charts]
    try:
        with open_folder(root, rel or "") as folder:
            for name, data in files:
                folder.write(name, data)
            for name in sorted(set(CHART_FILES) - {c.filename for c in rendered.charts}):
                folder.remove(name)
    except PathError as exc:
        raise ConfigError(f"--out {shown(str(out_dir))}: {exc}") from None
    written = [out_dir / name for name, _data in files]
    return Rendered(rendered.text, rendered.charts, tuple(written), rendered.notices)
