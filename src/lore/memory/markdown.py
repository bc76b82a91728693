"""Readers the memory parsers add to the shared Markdown reader (lore.ingest.markdown, whose
lines, headings, list items, wikilinks and dates they use): headings with explicit ids,
block ids, slugs and `- **label**: value` fields; the name keys are lore.memory.keys.
Pure functions."""

from __future__ import annotations

import re

from ..ingest.inline import strip_markup
from .keys import fold_key

_EXPLICIT_ID = re.compile(r"[ \t]*\{#([A-Za-z0-9][\w\-.:]*)\}[ \t]*$")
_BLOCK_ID = re.compile(r"[ \t]\^([A-Za-z0-9][\w\-]*)[ \t]*$")
_SLUG_DROP = re.compile(r"[^\w\- ]+")

# Field labels of entity cards, Chinese and English, folded → canonical field.
FIELD_LABELS = {
    "别名": "aliases",
    "aliases": "aliases",
    "alias": "aliases",
    "aka": "aliases",
    "标签": "tags",
    "tags": "tags",
    "关系": "relations",
    "relations": "relations",
    "related": "relations",
    "关键事件": "events",
    "事件": "events",
    "events": "events",
    "keyevents": "events",
    "timeline": "events",
    "最后活动": "last_activity",
    "最近活动": "last_activity",
    "lastactivity": "last_activity",
    "身份": "definition",
    "定义": "definition",
    "definition": "definition",
    "identity": "definition",
    "role": "definition",
    "类型": "type",
    "type": "type",
    "状态": "status",
    "status": "status",
}
_FIELD = re.compile(r"^(?:\*\*|__)?([^*_:：\n]{1,24}?)(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*(.*)$")


def split_heading(text: str) -> tuple[str, str | None]:
    """'14:03 Redis {#m-1403-ab}' → ('14:03 Redis', 'm-1403-ab')."""
    match = _EXPLICIT_ID.search(text)
    if match:
        return text[: match.start()].rstrip(), match.group(1)
    return text, None


def block_id(text: str) -> str | None:
    match = _BLOCK_ID.search(text)
    return match.group(1) if match else None


def slug(text: str) -> str:
    """GitHub-style heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    clean = split_heading(text)[0].strip().lower()
    return _SLUG_DROP.sub("", clean).replace(" ", "-")


def field(item: str) -> tuple[str, str] | None:
    """A card field in a list item ('**别名**：Zhang San' → ('aliases', 'Zhang San'))."""
    match = _FIELD.match(item.strip())
    if not match:
        return None
    name = FIELD_LABELS.get(fold_key(match.group(1)))
    if name is None:
        return None
    return name, match.group(2).strip()


def split_list(value: object) -> list[str]:
    """A list value from front matter or a field ('a, b；c' / ['a', 'b'] / '#x #y')."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        items = [str(v) for v in value if v is not None and not isinstance(v, dict | list)]
    else:
        items = re.split(r"[,，;；、|/]+|\s+(?=#)", str(value))
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        clean = strip_markup(item).strip().lstrip("#").strip()
        key = fold_key(clean)
        if clean and key and key not in seen:
            seen.add(key)
            out.append(clean)
    return out
