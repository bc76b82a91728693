"""Capture: web pages, HTML, Markdown and text files → ordinary notes in the vault's inbox.

    import lore
    from lore.capture import capture, CaptureOptions

    with lore.open("~/notes") as vault:
        report = capture(vault, "https://example.com/post", CaptureOptions(tags=("reading",)))
        print([c.path for c in report.added], report.duplicates)

Fetching and HTML extraction need the `capture` extra (httpx, trafilatura); they are
imported only when a page is fetched or an HTML document is extracted.
"""

from __future__ import annotations

from .ingest import (
    SUPPORTED_SUFFIXES,
    Captured,
    CaptureOptions,
    CaptureReport,
    Duplicate,
    capture,
    capture_many,
)

__all__ = [
    "SUPPORTED_SUFFIXES",
    "CaptureOptions",
    "CaptureReport",
    "Captured",
    "Duplicate",
    "capture",
    "capture_many",
]
