"""Captured content → the Markdown body of a note plus what the content says about itself.

HTML goes through trafilatura (the `capture` extra): it keeps the main text (headings,
paragraphs, lists, tables, code) as Markdown and drops navigation, ads, comments and
footers. Markdown keeps its own front matter; plain text is kept as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import CaptureError, install_hint
from ..ingest.parse import FrontMatterError, load_frontmatter, split_frontmatter

_H1 = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_SPACE = re.compile(r"\s+")
# htmldate: only dates the page states (meta tags, structured data, the URL), never
# guesses from the copyright line or the current time.
_DATE_PARAMS = {"extensive_search": False, "original_date": True}


@dataclass(frozen=True)
class Extracted:
    body: str  # Markdown, ending with one newline
    title: str | None = None
    url: str | None = None  # the address the content gives for itself (canonical link)
    date: str | None = None  # published, YYYY-MM-DD
    author: str | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict)  # kept from a Markdown source


def _clean_line(text: str | None) -> str | None:
    if text is None:
        return None
    line = _SPACE.sub(" ", str(text)).strip()
    return line or None


def _strip_header(text: str) -> str:
    """Drop the metadata block trafilatura puts before the Markdown (one `key: value` line
    per field between two `---` lines)."""
    if not text.startswith("---\n"):
        return text
    end = text.find("\n---\n", 3)
    return text if end < 0 else text[end + 5 :]


def _normalise(body: str) -> str:
    lines = [line.rstrip() for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n") + "\n"


def extract_html(html: str, url: str | None, name: str) -> Extracted:
    """The main text of a page as Markdown. `name` (the URL or file) goes in error messages."""
    try:
        import trafilatura
    except ImportError:
        raise CaptureError(
            f"{name}: extracting text from HTML needs the capture extra",
            hint=install_hint("capture"),
        ) from None
    try:
        doc = trafilatura.extract_with_metadata(
            html,
            url=url,
            output_format="markdown",
            include_comments=False,
            include_tables=True,
            include_images=False,
            include_links=False,
            include_formatting=True,
            date_extraction_params=_DATE_PARAMS,
        )
    except Exception as exc:  # noqa: BLE001 - any failure of the extractor on odd markup
        raise CaptureError(f"{name}: cannot extract text from the page ({exc})") from None
    body = _strip_header(doc.text or "") if doc is not None else ""
    if doc is None or not body.strip():
        raise CaptureError(
            f"{name}: no article text found in the page; nothing written",
            hint="a page built by JavaScript needs a browser: set LORE_SCRAPE_CMD",
        )
    author = _clean_line(doc.author)
    return Extracted(
        body=_normalise(body),
        title=_clean_line(doc.title),
        url=doc.url or None,
        date=str(doc.date)[:10] if doc.date else None,
        author=author,
    )


def extract_markdown(text: str, name: str) -> Extracted:
    """A Markdown document: its front matter (if readable) is kept, its first H1 is a title."""
    source, body, _line = split_frontmatter(text)
    frontmatter: dict[str, Any] = {}
    if source is not None:
        try:
            frontmatter = load_frontmatter(source)
        except FrontMatterError:
            body = text.removeprefix("\ufeff")  # keep every byte: it becomes the body
    if not body.strip():
        raise CaptureError(f"{name}: no text to capture (empty); nothing written")
    heading = _H1.search(body)
    title = frontmatter.get("title")
    url = frontmatter.get("source", frontmatter.get("url"))
    return Extracted(
        body=_normalise(body),
        title=_clean_line(str(title) if isinstance(title, str | int | float) else None)
        or (_clean_line(heading.group(1)) if heading else None),
        url=url if isinstance(url, str) and url.strip() else None,
        frontmatter=frontmatter,
    )


def extract_text(text: str, name: str) -> Extracted:
    """Plain text is the body as it is (Markdown is a superset of it)."""
    if not text.strip():
        raise CaptureError(f"{name}: no text to capture (empty); nothing written")
    return Extracted(body=_normalise(text.removeprefix("\ufeff")))
