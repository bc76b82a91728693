"""The report charts: valid, deterministic PNGs whose Chinese labels have glyphs."""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from report_support import make_map, make_report

from lore.errors import install_hint
from lore.present import charts
from lore.present.report_files import render_report, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == PNG_MAGIC
    out, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) == crc
        out.append((kind, body))
        pos += 12 + length
    return out


def png_size(data: bytes) -> tuple[int, int]:
    kind, body = png_chunks(data)[0]
    assert kind == b"IHDR"
    width, height = struct.unpack(">II", body[:8])
    return width, height


@pytest.fixture
def fresh_fonts() -> Iterator[None]:
    charts.chart_fonts.cache_clear()
    yield
    charts.chart_fonts.cache_clear()


@pytest.fixture(scope="module")
def drawn8() -> tuple[list[charts.Chart], list[str]]:
    return charts.draw_charts(make_map(8))


def test_the_bundled_font_covers_simplified_chinese() -> None:
    from fontTools.ttLib import TTFont

    path = charts.bundled_cjk_font()
    assert path is not None, "the report extra's font package is missing"
    cmap = TTFont(str(path), lazy=True).getBestCmap()
    for text in ("兴趣簇", "向量检索", "客户去重规则", "读书笔记：认知科学", "ABC abc 123"):
        assert all(ord(ch) in cmap for ch in text), text


def test_charts_use_the_cjk_font() -> None:
    fonts = charts.chart_fonts()
    assert fonts.cjk is not None and fonts.families[0] == fonts.cjk
    assert charts.drawable("兴趣簇 clusters", "x", fonts) == "兴趣簇 clusters"


def test_charts_are_valid_pngs_of_the_stated_size(
    drawn8: tuple[list[charts.Chart], list[str]],
) -> None:
    import matplotlib.image

    drawn, notices = drawn8
    assert notices == []
    assert [c.filename for c in drawn] == ["clusters-map.png", "clusters-trends.png"]
    for chart in drawn:
        assert png_size(chart.png) == (chart.width, chart.height)
        assert 800 <= chart.width <= 1600 and 400 <= chart.height <= 2000
        image = matplotlib.image.imread(io.BytesIO(chart.png), format="png")
        assert image.shape[:2] == (chart.height, chart.width)
        assert image.std() > 0.01  # something is drawn


def test_charts_carry_no_timestamp_and_are_reproducible(
    drawn8: tuple[list[charts.Chart], list[str]],
) -> None:
    first, _ = drawn8
    second, _ = charts.draw_charts(make_map(8))
    assert [c.png for c in first] == [c.png for c in second]
    for chart in first:
        text = b"".join(body for kind, body in png_chunks(chart.png) if kind in (b"tEXt", b"iTXt"))
        assert b"Software" not in text and b"matplotlib" not in text.lower()
        assert b"Creation Time" not in text


def test_many_clusters_and_panels_stay_bounded() -> None:
    png, width, height = charts.trends_png(make_map(24, weeks=80))
    assert png_size(png) == (width, height)
    assert height <= 1.1 * charts.DPI + 1.05 * charts.DPI * charts.TREND_PANELS + 1
    shown = charts._trend_clusters(make_map(24, weeks=80))
    assert len(shown) == charts.TREND_PANELS
    trending = [c for c in make_map(24, weeks=80).clusters if c.trend in ("heating", "cooling")]
    assert {c.id for _, c in shown} >= {c.id for c in trending[: charts.TREND_PANELS]}


def test_a_cluster_without_dated_notes_gets_no_trend_panel() -> None:
    """A vault of undated notes with a few dated ones drew a dozen flat-zero panels."""
    imap = make_map(8)
    undated = {1, 3, 4, 6}
    clusters = tuple(
        replace(c, weekly=tuple((w, 0) for w, _ in c.weekly)) if i in undated else c
        for i, c in enumerate(imap.clusters)
    )
    imap = replace(imap, clusters=clusters)
    assert [i for i, _ in charts._trend_clusters(imap)] == [0, 2, 5, 7]
    drawn, notices = charts.draw_charts(imap)
    trends = next(c for c in drawn if c.key == "trends")
    assert trends.height < charts.trends_png(make_map(8))[2]  # four panels, not eight
    assert notices == []


def test_labels_are_clipped() -> None:
    imap = make_map(4)
    fonts = charts.chart_fonts()
    from lore.present.report_md import display_width

    for cluster in imap.clusters:
        label = charts._label(cluster, fonts)
        assert display_width(label) <= charts.LABEL_WIDTH + len(f"#{cluster.id} ")


def test_without_a_cjk_font_labels_lose_what_cannot_be_drawn(
    monkeypatch: pytest.MonkeyPatch, fresh_fonts: None
) -> None:
    monkeypatch.setattr(charts, "bundled_cjk_font", lambda: None)
    monkeypatch.setattr(charts, "SYSTEM_CJK", ())
    fonts = charts.chart_fonts()
    assert fonts.cjk is None and fonts.families == ("DejaVu Sans",)
    assert charts.drawable("向量检索 / embeddings", "cluster 1", fonts) == "embeddings"
    assert charts.drawable("客户去重规则", "cluster 2", fonts) == "cluster 2"
    assert charts.drawable("缓存 · redis · 迁移", "cluster 3", fonts) == "redis"
    drawn, notices = charts.draw_charts(make_map(3))
    assert len(drawn) == 2 and all(c.png[:8] == PNG_MAGIC for c in drawn)
    assert len(notices) == 1 and install_hint("report") in notices[0]


def test_without_matplotlib_the_report_is_written_without_charts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(charts, "charts_available", lambda: False)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "clusters-map.png").write_bytes(b"stale")
    rendered = write_report(make_report(make_map(3)), "md", tmp_path / "out")
    assert rendered.charts == () and rendered.files == (tmp_path / "out" / "report.md",)
    assert rendered.notices == (f"charts need matplotlib: {install_hint('report')}",)
    assert not (tmp_path / "out" / "clusters-map.png").exists()  # no stale chart left linked
    assert "Charts: run" in rendered.text


def test_no_map_no_charts() -> None:
    assert charts.draw_charts(None) == ([], [])
    rendered = render_report(make_report(None), "html", charts=True)
    assert rendered.charts == () and "<img" not in rendered.text


def test_out_dir_gets_the_report_and_its_charts(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    rendered = write_report(make_report(make_map(5)), "md", out)
    assert [p.name for p in rendered.files] == [
        "report.md",
        "clusters-map.png",
        "clusters-trends.png",
    ]
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "![Interest map](clusters-map.png)" in text
    assert (out / "clusters-map.png").read_bytes() == rendered.charts[0].png
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in rendered.files)
    html = write_report(make_report(make_map(5)), "html", out)
    assert html.files[0].name == "report.html"
    assert html.text.count("data:image/png;base64,") == 2


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    from lore.errors import ConfigError

    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a folder"):
        write_report(make_report(None), "md", tmp_path / "file")
    with pytest.raises(ConfigError, match="--format"):
        render_report(make_report(None), "pdf")


def test_cluster_numbers_never_sit_on_each_other() -> None:
    points = [(0.5, 0.5)] * 6 + [(0.51, 0.49), (0.0, 0.0), (1.0, 1.0)]
    spots = charts._place_numbers(points, (0.0, 1.0, 0.0, 1.0))
    assert spots[0] == (0.5, 0.5) and spots[7] == (0.0, 0.0)  # a free spot is kept
    for i, (ax, ay) in enumerate(spots):
        for bx, by in spots[:i]:
            assert abs(ax - bx) >= 0.045 - 1e-9 or abs(ay - by) >= 0.055 - 1e-9


def test_an_undated_vault_gets_no_empty_trend_chart() -> None:
    """No note has a date of its own: the map is drawn, the trend chart would be empty
    axes, so it is left out and the report says why."""
    import dataclasses

    dated = make_map(3)
    undated = dataclasses.replace(
        dated, clusters=tuple(dataclasses.replace(c, weekly=()) for c in dated.clusters)
    )
    drawn, notices = charts.draw_charts(undated)
    assert [c.key for c in drawn] == ["map"]
    assert any("no dated notes" in n and "no trend chart" in n for n in notices)
    assert [c.key for c in charts.draw_charts(dated)[0]] == ["map", "trends"]
