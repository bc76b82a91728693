"""Has this page been captured already? Looked up in the index, never in a side file.

Two keys: the normalised URL of a note's `source` (or `url`) front matter (urls.url_key),
and the hash of its body with whitespace collapsed (content_key). Every note counts, however
it was written: a hand-written note with the same source or the same text is a duplicate.
"""

from __future__ import annotations

import hashlib
import json

from ..store.base import Store
from .urls import url_key

SOURCE_KEYS = ("source", "url")


def content_key(body: str) -> str:
    """sha256 of the body with every run of whitespace collapsed to one space."""
    return hashlib.sha256(" ".join(body.split()).encode("utf-8")).hexdigest()


class DedupeIndex:
    """Keys of the notes in the index, plus the notes written during this capture."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._urls: dict[str, str] = {}
        self._contents: dict[str, str] | None = None  # built on first use (reads every body)
        self._written: dict[str, str] = {}
        for path, frontmatter in store.frontmatter_texts():
            for source in _sources(str(frontmatter)):
                self._urls.setdefault(url_key(source), str(path))

    def by_url(self, *urls: str | None) -> str | None:
        """The path of a note captured from any of these URLs, if there is one."""
        for url in urls:
            if url:
                found = self._urls.get(url_key(url))
                if found is not None:
                    return found
        return None

    def by_content(self, body: str) -> str | None:
        """The path of a note whose body is the same text, if there is one."""
        key = content_key(body)
        if key in self._written:
            return self._written[key]
        if self._contents is None:
            self._contents = {}
            for path, text in self._store.bodies():
                self._contents.setdefault(content_key(str(text)), str(path))
        return self._contents.get(key)

    def add(self, path: str, source: str | None, body: str) -> None:
        """Remember a note written by this capture (the index learns of it at the end)."""
        if source:
            self._urls.setdefault(url_key(source), path)
        self._written.setdefault(content_key(body), path)


def _sources(frontmatter_json: str) -> list[str]:
    if '"source"' not in frontmatter_json and '"url"' not in frontmatter_json:
        return []  # most notes: skip the JSON parse
    try:
        data = json.loads(frontmatter_json)
    except ValueError:
        return []
    found = []
    for key in SOURCE_KEYS:
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, str) and value.strip():
            found.append(value)
        elif isinstance(value, list):
            found += [v for v in value if isinstance(v, str) and v.strip()]
    return found
