"""The Report (lore.interest.report) over real indexes, and its Markdown form."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_support import HOSTILE, TODAY, make_map, make_report, vault_files

import lore
from lore.errors import QueryError
from lore.interest.report import report_window
from lore.present.report_md import (
    SPARK,
    clip,
    display_width,
    format_report_md,
    md_code,
    md_text,
    sparkline,
)

TODAY_DATE = dt.date.fromisoformat(TODAY)


# -- the window ------------------------------------------------------------------------------


def test_window_is_the_last_seven_days_when_notes_are_recent() -> None:
    w = report_window(None, TODAY_DATE, "2026-11-29")
    assert (w.since, w.until, w.basis, w.days) == ("2026-11-24", "2026-11-30", "today", 7)


def test_window_falls_back_to_the_week_up_to_the_newest_note() -> None:
    w = report_window(None, TODAY_DATE, "2026-09-15")
    assert (w.since, w.until, w.basis) == ("2026-09-09", "2026-09-15", "newest note")
    assert "newest note" in w.describe()


def test_window_since_runs_to_today() -> None:
    w = report_window("2026-09", TODAY_DATE, "2026-11-29")
    assert (w.since, w.until, w.basis) == ("2026-09-01", "2026-11-30", "since")


@pytest.mark.parametrize("since", ["2027-01-01", "yesterday", "2026-13"])
def test_window_refuses_a_bad_since(since: str) -> None:
    with pytest.raises(QueryError, match="--since"):
        report_window(since, TODAY_DATE, None)


def test_window_of_an_undated_vault_is_the_last_week() -> None:
    w = report_window(None, TODAY_DATE, None)
    assert (w.since, w.until, w.basis) == ("2026-11-24", "2026-11-30", "today")


# -- the report over a real index ------------------------------------------------------------


def test_report_gathers_new_notes_tags_and_entities(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    vault = open_vault(make_vault(vault_files()))
    vault.sync()
    report = vault.report()
    assert report.window.basis == "today" and report.window.today == TODAY
    assert [n.path for n in report.new_notes] == [
        "inbox/hostile.md",
        "rules/客户去重规则 v2.md",
        "reading/sqlite-wal.md",
    ]
    assert report.new_notes_total == 3 and report.notes_total == 30
    assert report.new_notes[1].tags == ("规则", "去重")
    assert report.top_tags[0][1] == 12 and ("规则", 2) in report.top_tags
    assert ("规则", 1) in report.window_tags and all(n == 1 for _, n in report.window_tags)
    assert [(e.name, e.last_activity, e.source) for e in report.entities] == [
        ("张三", "2026-11-28", "event")
    ]
    assert report.interest is None
    assert report.messages == ("no interest clusters yet: run `lore clusters build`",)


def test_report_since_and_limit(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    vault = open_vault(make_vault(vault_files()))
    vault.sync()
    report = vault.report(since="2026-10", limit=2)
    assert report.window.since == "2026-10-01" and report.window.basis == "since"
    assert len(report.new_notes) == 2 and report.new_notes_total > 2
    dates = [n.date or "" for n in report.new_notes]
    assert dates == sorted(dates, reverse=True) and dates[0] == "2026-11-29"
    assert "2025/last-year.md" not in {n.path for n in vault.report(since="2026").new_notes}
    text = format_report_md(report)
    assert f"… and {report.new_notes_total - 2} more" in text


def test_report_of_a_quiet_vault_uses_the_newest_week(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    files = {k: v for k, v in vault_files().items() if k.startswith(("topics/", ".lore/"))}
    vault = open_vault(make_vault(files))
    vault.sync()
    report = vault.report()
    assert report.window.basis == "newest note"
    assert report.window.until == "2026-11-21"  # 向量检索-11: 2026-11-21
    assert report.new_notes and report.new_notes[0].date == "2026-11-21"
    assert "nothing is dated in the 7 days up to 2026-11-30" in format_report_md(report)


def test_report_of_an_empty_vault(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    vault = open_vault(make_vault({}))
    vault.sync()
    report = vault.report(today="2026-11-30")
    assert report.notes_total == 0 and report.new_notes == () and report.entities == ()
    text = format_report_md(report)
    assert "Nothing dated from 2026-11-24 to 2026-11-30." in text
    assert "- Whole vault: none" in text and "None active in the window." in text
    assert "run `lore clusters build`" in text


def test_report_refuses_a_bad_today_or_limit(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    vault = open_vault(make_vault({}))
    with pytest.raises(QueryError, match="today"):
        vault.report(today="someday")
    with pytest.raises(QueryError, match="--limit"):
        vault.report(limit=0)


# -- Markdown --------------------------------------------------------------------------------


def test_markdown_without_clusters_says_how_to_build_them() -> None:
    text = format_report_md(make_report(None))
    assert text.count("lore clusters build") == 1
    assert "## Interest clusters" not in text
    assert "\\<" not in text.split("## New notes")[0]  # the message keeps its code span


def test_markdown_with_clusters() -> None:
    imap = make_map(8)
    text = format_report_md(make_report(imap))
    assert "## Interest clusters (8)" in text
    for cluster in imap.clusters:
        assert f"### #{cluster.id} " in text
        assert cluster.members[0].path in text
        assert cluster.members[3].path not in text  # three representatives
    heating = [c for c in imap.clusters if c.trend == "heating"]
    assert heating and all(
        f"#{c.id} " in text.split("- **Heating:**")[1].split("\n")[0] for c in heating
    )
    assert "**▲ heating**" in text and "**▼ cooling**" in text
    sparks = re.findall(f"[{SPARK}]{{16}}", text)
    assert len(sparks) == 8
    assert "Charts: run `lore report --out DIR`" in text
    assert "semantic" in text and "lexical" not in text


def test_markdown_links_the_charts_it_was_given() -> None:
    text = format_report_md(
        make_report(make_map(3)),
        {"map": "clusters-map.png", "trends": "clusters-trends.png"},
    )
    assert "![Interest map](clusters-map.png)" in text
    assert "![Weekly notes per cluster](clusters-trends.png)" in text
    assert "Charts: run" not in text


def test_markdown_says_when_the_map_is_lexical() -> None:
    report = make_report(make_map(3, lexical=True))
    text = format_report_md(report)
    assert "(lexical)" in text
    from lore.interest.report import _messages

    assert any("lexical" in m for m in _messages(report.interest))


def test_markdown_escapes_note_text() -> None:
    imap = make_map(2, labels=((HOSTILE, ("<b>",)), ("*bold* [link](http://x)", ("a|b",))))
    report = make_report(imap, new_notes=())
    text = format_report_md(report)
    assert not re.search(r"(?<!\\)[<>]", text), "an unescaped < or >"
    assert "\\<script\\>" in text and "\\*bold\\* \\[link\\](http://x)" in text


def test_markdown_is_deterministic() -> None:
    assert format_report_md(make_report(make_map(8))) == format_report_md(make_report(make_map(8)))


# -- pieces ----------------------------------------------------------------------------------


def test_sparkline_examples() -> None:
    assert sparkline([]) == ""
    assert sparkline([0, 0]) == "▁▁"
    assert sparkline([0, 1, 2, 4, 8]) == "▁▂▃▅█"
    assert sparkline([3, 3]) == "██"
    assert sparkline([0, 1, 1]) == "▁██"


@given(st.lists(st.integers(min_value=0, max_value=500), max_size=60))
def test_sparkline_properties(values: list[int]) -> None:
    line = sparkline(values)
    assert len(line) == len(values) and set(line) <= set(SPARK)
    for v, ch in zip(values, line, strict=True):
        assert (ch == "▁") == (v == 0)  # an empty week and only an empty week is ▁
        if v and v == max(values):
            assert ch == "█"


@given(st.text(max_size=80))
def test_md_text_unescapes_to_the_original(text: str) -> None:
    from lore.present.report_md import one_line

    escaped = md_text(text)
    assert "\n" not in escaped and "<" not in escaped.replace("\\<", "")
    assert re.sub(r"\\(.)", r"\1", escaped) == one_line(text)


@given(st.text(alphabet="ab`c ", max_size=20))
def test_md_code_holds_any_backticks(text: str) -> None:
    code = md_code(text)
    fence = re.match("`+", code)
    assert fence is not None
    inner = code[len(fence.group()) : -len(fence.group())]
    assert fence.group() not in inner
    assert inner.strip(" ") == text.strip() or inner == f" {text.strip()} "


@given(st.text(max_size=60), st.integers(min_value=2, max_value=40))
def test_clip_fits_the_width(text: str, width: int) -> None:
    clipped = clip(text, width)
    assert display_width(clipped) <= width
    assert clipped == clip(text, width)


def test_clip_counts_cjk_as_two_columns() -> None:
    assert clip("读书笔记：认知科学与学习方法论", 12) == "读书笔记：…"
    assert clip("short", 12) == "short"
