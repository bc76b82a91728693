"""Inline Markdown, the part of lore's Markdown reader (lore.ingest.markdown) that looks at
text within a line: wikilinks and Markdown links, comments, and what a note points at
rather than says. A search cuts its snippets with these and never reads a note line by
line, so it imports this module without the rest of the reader (whose block, tag and date
patterns a cold process would compile for nothing). Pure functions.
"""

from __future__ import annotations

import re

# [[target#anchor|shown]] and ![[embed]]: target (may be empty: [[#Heading]]), anchor, shown.
WIKILINK = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
MD_LINK = re.compile(r"(?<!!)\[([^\[\]\n]+)\]\(([^()\s]*)\)")

# What a note points at rather than says: images and embeds, link targets, URLs, HTML tags
# and comments (each within a line). Link text stays. Only the three parts that start with
# "<" can match at the same place (kept in this order), so adding inline code between the
# groups below changes nothing else they match (lore.ingest.markdown's _NOT_PROSE does).
IMAGES_LINKS_URLS = (
    r"!\[[^\]\n]*\]\([^)\n]*\)"  # ![alt](image.png)
    r"|!\[\[[^\]\n]*\]\]"  # ![[embed.png]]
    r"|\]\([^)\n]*\)"  # the target of [text](target)
    r"|<[a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*>"  # <https://autolink>
    r"|\b[a-zA-Z][a-zA-Z0-9+.-]*://\S*"  # bare URLs
)
# An Obsidian or HTML comment within a line: hidden when the note is read.
COMMENT = re.compile(r"%%.*?%%|<!--.*?-->")
TAGS_COMMENTS = r"|</?[a-zA-Z][^<>\n]*>" + "|" + COMMENT.pattern  # HTML tags, comments
_POINTERS = re.compile(IMAGES_LINKS_URLS + TAGS_COMMENTS)


def strip_markup(text: str) -> str:
    """Plain text of a short Markdown fragment: links to their text, emphasis removed."""
    text = WIKILINK.sub(lambda m: (m.group(3) or m.group(1) or "").strip(), text)
    text = MD_LINK.sub(lambda m: m.group(1), text)
    return re.sub(r"(\*\*|__|`)", "", text).strip()


def pointer_spans(text: str) -> list[tuple[int, int]]:
    """The spans of `text` (sorted, disjoint) that point at something rather than say it:
    images and embeds, link targets, URLs, HTML tags, comments. A plugin note's badges are
    all of these: its words are in the prose below them."""
    return [match.span() for match in _POINTERS.finditer(text)]
