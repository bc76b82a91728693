"""The four full-text fields of a note, as token streams (title, tags, summary, body).

One function builds them for the index and for the document-frequency bookkeeping, so the
two can never disagree about what a note contains.
"""

from __future__ import annotations

from typing import Any

from .tokenize import index_text


def alias_text(frontmatter: dict[str, Any]) -> str:
    aliases = frontmatter.get("aliases")
    if isinstance(aliases, list):
        return " ".join(str(a) for a in aliases if not isinstance(a, dict | list))
    if isinstance(aliases, str | int | float):
        return str(aliases)
    return ""


def fts_fields(
    title: str, frontmatter: dict[str, Any], tags: list[str], summary: str, body: str
) -> tuple[str, str, str, str]:
    """Token streams in FTS column order; aliases count as part of the title."""
    return (
        index_text(f"{title} {alias_text(frontmatter)}"),
        index_text(" ".join(tags)),
        index_text(summary),
        index_text(body),
    )


def distinct_terms(fields: tuple[str, ...]) -> set[str]:
    return set(" ".join(fields).split())
