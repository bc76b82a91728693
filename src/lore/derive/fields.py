"""The four full-text fields of a note, as token streams (title, tags, summary, body).

One function builds them for the index and for the document-frequency bookkeeping, so the
two can never disagree about what a note contains.

The title field holds every name of the note: its title, its front matter aliases and its
file name when that differs from the title (in Obsidian the file name is the note's name).
Titles and aliases are the strongest evidence of what a note is, so search weighs this
field most and matches the query against these names as a whole (lore.retrieve.titles).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..store.query import EVERY_NOTE
from .tokenize import index_text


def aliases(frontmatter: dict[str, Any]) -> list[str]:
    """Front matter aliases (`aliases` or `alias`): a list, or text with commas between
    names (a space does not separate aliases: "Import notes" is one)."""
    value = frontmatter.get("aliases", frontmatter.get("alias"))
    if isinstance(value, list):
        items = [str(a) for a in value if a is not None and not isinstance(a, dict | list)]
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        items = re.split(r"[,，;；]", str(value))
    else:
        items = []
    return [a.strip() for a in items if a.strip()]


def name_key(name: str) -> str:
    """A name as a person may type it again: width (（ and (, ＋ and +), case and spacing
    aside, so "dnf 指南(最佳实践)" names the note titled "DNF 指南（最佳实践）"."""
    return "".join(unicodedata.normalize("NFKC", name).casefold().split())


def file_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[: -len(".markdown")] if name.endswith(".markdown") else name.removesuffix(".md")


def note_names(title: str, frontmatter: dict[str, Any], path: str) -> list[str]:
    """Every name of a note, the title first, each once (case-insensitively)."""
    out: list[str] = []
    seen: set[str] = set()
    for name in [title, *aliases(frontmatter), file_stem(path)]:
        key = " ".join(name.casefold().split())
        if key and key not in seen:
            seen.add(key)
            out.append(name.strip())
    return out


def fts_fields(
    names: list[str], tags: list[str], summary: str, body: str, body_terms: list[str] | None = None
) -> tuple[str, str, str, str]:
    """Token streams in FTS column order; every name of the note is title text.
    `body_terms`: the body's terms when the caller has them (the sync cuts the body into
    parts first: lore.derive.sections), so the body is not tokenized twice."""
    stream = " ".join(body_terms) if body_terms is not None else index_text(body)
    return (
        index_text("\n".join(names)),
        index_text(" ".join(tags)),
        index_text(summary),
        f"{stream} {EVERY_NOTE}".lstrip(),
    )


def note_fts_fields(
    title: str,
    frontmatter: dict[str, Any],
    path: str,
    tags: list[str],
    summary: str,
    body: str,
    body_terms: list[str] | None = None,
) -> tuple[str, str, str, str]:
    """fts_fields of a note from what the index stores of it (see SqliteStore.note_fields)."""
    return fts_fields(note_names(title, frontmatter, path), tags, summary, body, body_terms)


def distinct_terms(fields: tuple[str, ...]) -> set[str]:
    return set(" ".join(fields).split())
