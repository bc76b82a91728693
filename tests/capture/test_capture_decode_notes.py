"""Charset detection for pages and files; writing notes (front matter round trip, atomic and
never over another file)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lore.capture.decode import UndecodableText, codec_for, decode_bytes, looks_like_html
from lore.capture.notes import render_note, slugify, write_note
from lore.errors import CaptureError
from lore.ingest.parse import parse_note

ZH = "客户去重规则：同一个手机号加同一个邮箱，视为同一个客户。镕"


def page(charset_meta: str, body: str) -> str:
    return f"<html><head><meta charset='{charset_meta}'><title>t</title></head><body>{body}</body>"


def test_gbk_meta_charset() -> None:
    data = page("gbk", ZH).encode("gbk")
    assert ZH in decode_bytes(data, html=True)


def test_gb2312_label_decodes_gbk_only_characters() -> None:
    data = page("gb2312", ZH).encode("gbk")  # 镕 is not in GB2312
    assert ZH in decode_bytes(data, html=True)


def test_http_equiv_meta() -> None:
    head = '<meta http-equiv="Content-Type" content="text/html; charset=GBK">'
    data = f"<html><head>{head}</head><body>{ZH}</body></html>".encode("gbk")
    assert ZH in decode_bytes(data, html=True)


def test_header_charset_beats_meta_except_a_latin1_default() -> None:
    data = page("gbk", ZH).encode("utf-8")
    assert ZH in decode_bytes(data, "utf-8", html=True)
    gbk = page("gbk", ZH).encode("gbk")
    assert ZH in decode_bytes(gbk, "ISO-8859-1", html=True)


def test_bom_wins() -> None:
    data = "\ufeff".encode() + page("gbk", ZH).encode("utf-8")
    assert ZH in decode_bytes(data, "gbk", html=True)


def test_undeclared_utf8_and_undeclared_gbk() -> None:
    assert decode_bytes(ZH.encode("utf-8")) == ZH
    text = ("这是一段没有声明编码的中文文本，用 GBK 保存。" * 20).encode("gbk")
    assert "没有声明编码" in decode_bytes(text)


def test_binary_is_refused() -> None:
    with pytest.raises(UndecodableText, match="binary"):
        decode_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")


def test_unknown_label_falls_through() -> None:
    assert codec_for("no-such-charset") is None
    assert decode_bytes(page("no-such-charset", ZH).encode("utf-8"), html=True).count(ZH) == 1


@given(st.text(alphabet=st.characters(codec="gbk", exclude_categories=("Cs", "Cc")), max_size=200))
def test_any_gbk_text_round_trips_through_its_meta(text: str) -> None:
    html = page("gbk", text)
    assert decode_bytes(html.encode("gbk"), html=True) == html


def test_looks_like_html() -> None:
    assert looks_like_html("<!DOCTYPE html><html>")
    assert looks_like_html("\n  <html lang='zh'>")
    assert looks_like_html("some preamble\n<body><p>x</p></body>")
    assert not looks_like_html("# Title\n\nA <b>bold</b> Markdown note")


# -- notes ----------------------------------------------------------------------------------


def test_slugify() -> None:
    assert slugify("Dedupe rules explained") == "dedupe-rules-explained"
    assert slugify("客户去重规则 v2") == "客户去重规则-v2"
    assert slugify('a/b\\c:d*e?f"g<h>i|j#k') == "a-b-c-d-e-f-g-h-i-j-k"
    assert slugify("...") == "note"
    assert len(slugify("word " * 50)) <= 60


@given(st.text(max_size=200))
def test_slug_is_always_a_safe_file_name(title: str) -> None:
    slug = slugify(title)
    assert slug and len(slug) <= 60
    assert not any(c in slug for c in '/\\:*?"<>|\x00\n\r')
    assert not slug.startswith((".", "-")) and not slug.endswith("-")


text_value = st.text(
    alphabet=st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="\ufeff"),
    max_size=40,
)


@given(
    title=text_value.filter(lambda t: t.strip()),
    tags=st.lists(text_value.filter(lambda t: t.strip()), max_size=4),
    summary=st.text(max_size=300),
    body=st.text(max_size=300),
)
def test_front_matter_round_trips(title: str, tags: list[str], summary: str, body: str) -> None:
    front = {
        "title": title,
        "source": "https://example.com/a?b=1",
        "platform": "web",
        "fetched": dt.date(2026, 9, 3),
        "tags": tags,
        "summary": summary,
    }
    note = parse_note(render_note(front, body), "x.md")
    assert note.problems == []
    # A NUL (written as YAML's "\\0") is read as U+FFFD, as every NUL lore indexes is (#15).
    read = {**front, "fetched": "2026-09-03", "summary": summary.replace("\x00", "\ufffd")}
    assert note.frontmatter == read


def test_write_note_never_overwrites_and_leaves_no_temp(tmp_path: Path) -> None:
    names = [write_note(tmp_path, "inbox", "2026-09-03-a", t, label="test") for t in "abc"]
    assert names == ["inbox/2026-09-03-a.md", "inbox/2026-09-03-a-2.md", "inbox/2026-09-03-a-3.md"]
    assert [(tmp_path / n).read_text() for n in names] == ["a", "b", "c"]
    assert sorted(os.listdir(tmp_path / "inbox")) == sorted(n.split("/")[1] for n in names)


def test_write_note_error_names_the_capture(tmp_path: Path) -> None:
    (tmp_path / "inbox").write_text("a file where the folder should be")
    with pytest.raises(CaptureError, match="^https://example.com/a: inbox: is not a folder"):
        write_note(tmp_path, "inbox", "x", "text", label="https://example.com/a")
