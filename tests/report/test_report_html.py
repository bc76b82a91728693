"""The HTML report: self-contained, and every piece of note text escaped."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st
from report_support import HOSTILE, make_map, make_report

from lore.interest.report import ActiveEntity, ReportNote
from lore.present.charts import Chart
from lore.present.report_html import format_report_html, spark_svg

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Collect(HTMLParser):
    """Tags, attributes and text as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Collect:
    parser = Collect()
    parser.feed(html)
    parser.close()
    return parser


def hostile_report() -> str:
    imap = make_map(3, labels=((HOSTILE, ("<b>tag</b>",)), ('" onmouseover="x', ("a&b",))))
    report = make_report(
        imap,
        vault="<i>vault</i>",
        new_notes=(ReportNote("inbox/<x>.md", HOSTILE, "2026-11-29", ('"><svg onload=1>',)),),
        entities=(ActiveEntity("<u>张三</u>", "person", "e/<p>.md", "2026-11-28", "event", 1.0),),
        messages=("map built from `<stale>` data & more",),
    )
    return format_report_html(report)


def test_note_text_renders_as_text_never_as_markup() -> None:
    html = hostile_report()
    parsed = parse(html)
    allowed = {
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "ul", "li",
        "code", "span", "section", "div", "a", "strong", "svg", "rect",
    }  # fmt: skip
    assert set(parsed.tags) <= allowed, set(parsed.tags) - allowed
    assert not any(name.startswith("on") for name, _ in parsed.attrs)
    text = "".join(parsed.text)
    assert HOSTILE in text  # shown literally
    assert "<i>vault</i>" in text and "<u>张三</u>" in text and "inbox/<x>.md" in text
    assert "&lt;script&gt;" in html and "<script" not in html.lower()


def test_messages_keep_their_code_spans_escaped() -> None:
    html = hostile_report()
    assert "<code>&lt;stale&gt;</code> data &amp; more" in html


def test_page_is_self_contained() -> None:
    html = format_report_html(
        make_report(make_map(4)),
        [Chart("map", "clusters-map.png", "Interest map", PNG_1X1, 1, 1)],
    )
    assert html.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html)  # no CDN, no remote asset
    assert "@import" not in html and "url(" not in html
    srcs = [v for k, v in parse(html).attrs if k == "src"]
    assert srcs == ["data:image/png;base64," + base64.b64encode(PNG_1X1).decode()]


def test_clusters_are_shown_with_trends_highlighted() -> None:
    imap = make_map(8)
    html = format_report_html(make_report(imap))
    for cluster in imap.clusters:
        assert f'id="cluster-{cluster.id}"' in html
        assert f'class="cluster {cluster.trend}"' in html
    assert html.count("<svg") == 8
    heating = re.search(r'<p class="trend-list heating">(.*?)</p>', html)
    assert heating is not None
    for c in (c for c in imap.clusters if c.trend == "heating"):
        assert f'href="#cluster-{c.id}"' in heating.group(1)
    assert "▼ cooling" in html


def test_without_clusters_the_page_says_how_to_build_them() -> None:
    html = format_report_html(make_report(None))
    assert "<code>lore clusters build</code>" in html
    assert "Interest clusters" not in html and "<img" not in html


def test_html_is_deterministic() -> None:
    assert format_report_html(make_report(make_map(8))) == format_report_html(
        make_report(make_map(8))
    )


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=30))
def test_spark_svg_has_one_bar_per_week(values: list[int]) -> None:
    svg = spark_svg(values)
    assert svg.count("<rect") == len(values)
    heights = [float(h) for h in re.findall(r'height="([\d.]+)" fill', svg)]
    assert all(0 < h <= 24 for h in heights)


@given(st.text(max_size=40))
def test_any_title_survives_as_text(title: str) -> None:
    report = make_report(None, new_notes=(ReportNote("a.md", title, "2026-11-30"),))
    parsed = parse(format_report_html(report))
    assert not {"script", "img", "iframe", "object"} & set(parsed.tags)
    from lore.present.report_md import one_line

    if one_line(title):
        assert one_line(title) in "".join(parsed.text).replace("\r", "")
