"""`lore ingest URL` against a real HTTP server on 127.0.0.1 serving real-world-shaped pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from capture_pages import (
    ARTICLE_NOISE,
    ARTICLE_TEXT,
    ZH_GBK_ONLY,
    ZH_NOISE,
    ZH_TEXT,
    PageServer,
)
from click.testing import CliRunner, Result
from conftest import one_line_naming

import lore
from lore.cli import main
from lore.ingest.parse import parse_note

MakeVault = Callable[..., Path]


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()


def ingest(vault: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["ingest", *args, "--vault", str(vault)])


def inbox_files(vault: Path) -> list[Path]:
    inbox = vault / "inbox"
    return sorted(inbox.iterdir()) if inbox.exists() else []


def only_note(vault: Path) -> tuple[Path, str]:
    files = inbox_files(vault)
    assert len(files) == 1, files
    return files[0], files[0].read_text(encoding="utf-8")


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(
        {"hand/written.md": "# Hand\n\nA note written by hand.\n"}, name="v", index=True
    )


def test_article_keeps_the_text_and_drops_the_rest(vault: Path, pages: PageServer) -> None:
    url = pages.url("/article")
    result = ingest(vault, url, "--tag", "rules", "--tag", "customers")
    assert result.exit_code == 0, result.output
    path, text = only_note(vault)
    assert path.name.endswith("-dedupe-rules-explained.md")
    assert f"added inbox/{path.name}" in result.stdout
    note = parse_note(text, path.name)
    for paragraph in ARTICLE_TEXT:
        assert paragraph in note.body
    assert "## Why phone and email" in note.body
    assert "- Lower-case email addresses." in note.body
    for noise in ARTICLE_NOISE:
        assert noise not in text, noise
    fm = note.frontmatter
    assert fm["title"] == "Dedupe rules explained"
    assert fm["source"] == url
    assert fm["platform"] == "web"
    assert fm["tags"] == ["rules", "customers"]
    assert fm["date"] == "2026-09-03"
    assert fm["author"] == "Li Wei"
    assert len(fm["fetched"]) == 10 and fm["fetched"][4] == "-"
    assert fm["summary"].startswith("Customer deduplication is the practice")
    # Indexed at once, and found by a search, like any note.
    with lore.open(vault) as opened:
        hits = opened.search("false merge rate", tag="customers")
        assert [h.path for h in hits] == [f"inbox/{path.name}"]
        assert hits[0].title == "Dedupe rules explained"


def test_chinese_gbk_page_with_meta_charset(vault: Path, pages: PageServer) -> None:
    result = ingest(vault, pages.url("/zh/gbk"))
    assert result.exit_code == 0, result.output
    path, text = only_note(vault)
    assert path.name.endswith("-客户去重规则-v2.md")
    for paragraph in ZH_TEXT:
        assert paragraph in text
    assert ZH_GBK_ONLY in text  # a GBK-only character: decoded as GBK, not GB2312
    for noise in ZH_NOISE:
        assert noise not in text.split("---", 2)[2], noise
    assert parse_note(text, path.name).frontmatter["title"] == "客户去重规则 v2"
    with lore.open(vault) as opened:
        assert [h.path for h in opened.search("去重")] == [f"inbox/{path.name}"]


def test_meta_charset_beats_a_default_latin1_header(vault: Path, pages: PageServer) -> None:
    result = ingest(vault, pages.url("/zh/header-latin1"))
    assert result.exit_code == 0, result.output
    _path, text = only_note(vault)
    assert ZH_TEXT[1] in text


def test_redirect_records_the_final_address_without_tracking(
    vault: Path, pages: PageServer
) -> None:
    result = ingest(vault, pages.url("/old-article"))
    assert result.exit_code == 0, result.output
    _path, text = only_note(vault)
    fm = parse_note(text, "x.md").frontmatter
    assert fm["source"] == pages.url("/article")  # utm_source and fbclid dropped
    # The same page under its final address (with other tracking) is not captured again.
    again = ingest(vault, pages.url("/article?utm_campaign=x&spm=1.2#comments"))
    assert again.exit_code == 0
    assert "already in the vault" in again.stdout and "same URL" in again.stdout
    assert len(inbox_files(vault)) == 1


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/missing", "HTTP 404 Not Found"),
        ("/huge", "larger than 10.0 MB"),
        ("/huge-chunked", "larger than 10.0 MB"),
        ("/hang", "no response within 0.5 s"),
        ("/report.pdf", "not a web page (application/pdf)"),
        ("/spa", "no article text found"),
        ("/loop", "more than 10 redirects"),
    ],
)
def test_failures_are_one_line_naming_the_url_and_write_nothing(
    vault: Path, pages: PageServer, index_dump: Callable[[Path], object], path: str, expected: str
) -> None:
    assert ingest(vault, "--timeout", "0.5", str(vault / "hand/written.md")).exit_code == 0
    before_files = sorted(p for p in vault.rglob("*") if ".lore" not in p.parts)
    before_index = index_dump(vault / ".lore" / "index.sqlite")
    url = pages.url(path)
    result = ingest(vault, "--timeout", "0.5", url)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    line = result.stderr.rstrip("\n")
    one_line_naming(line, url, expected)
    assert line.startswith("lore: error: ")
    assert sorted(p for p in vault.rglob("*") if ".lore" not in p.parts) == before_files
    assert index_dump(vault / ".lore" / "index.sqlite") == before_index


def test_size_cap_is_configurable(vault: Path, pages: PageServer) -> None:
    from lore.capture import CaptureOptions, capture
    from lore.errors import CaptureError

    url = pages.url("/article")
    with lore.open(vault) as opened:
        with pytest.raises(CaptureError) as caught:
            capture(opened, url, CaptureOptions(max_bytes=1000))
        one_line_naming(str(caught.value), url, "larger than 1,000 bytes")
        assert inbox_files(vault) == []
        report = capture(opened, url, CaptureOptions(max_bytes=100_000))
        assert [c.origin for c in report.added] == [url]


def test_hang_times_out_quickly(vault: Path, pages: PageServer) -> None:
    import time

    started = time.monotonic()
    result = ingest(vault, "--timeout", "0.3", pages.url("/hang"))
    assert result.exit_code == 1
    assert time.monotonic() - started < 3.0
    assert inbox_files(vault) == []


def test_markdown_served_as_text_markdown(vault: Path, pages: PageServer) -> None:
    result = ingest(vault, pages.url("/notes.md"), "--platform", "blog")
    assert result.exit_code == 0, result.output
    _path, text = only_note(vault)
    fm = parse_note(text, "x.md").frontmatter
    assert fm["title"] == "Notes from the scraper"
    assert fm["author"] == "Scraper Bot"  # the document's own front matter is kept
    assert fm["platform"] == "blog"


def test_several_urls_one_failing(vault: Path, pages: PageServer) -> None:
    result = ingest(vault, pages.url("/article"), pages.url("/missing"), pages.url("/zh/gbk"))
    assert result.exit_code == 1
    assert len(inbox_files(vault)) == 2
    assert "captured 2" in result.stdout and "failed 1" in result.stdout
    one_line_naming(result.stderr.rstrip("\n"), pages.url("/missing"), "HTTP 404")


def test_refused_urls(vault: Path) -> None:
    for url, expected in [
        ("ftp://example.com/a", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("http://", "no host"),
        ("http://example.com:99999/", "not a valid URL"),
    ]:
        result = ingest(vault, url)
        assert result.exit_code == 1, url
        one_line_naming(result.stderr.rstrip("\n"), url, expected)


def test_connection_refused_names_the_url(vault: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/page"
    result = ingest(vault, "--timeout", "1", url)
    assert result.exit_code == 1
    one_line_naming(result.stderr.rstrip("\n"), url, "cannot connect")
