"""Small Markdown readers shared by the memory parsers: keys, lines outside code, headings
with explicit ids, wikilinks, `- **label**: value` fields and dates. Pure functions."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_EXPLICIT_ID = re.compile(r"[ \t]*\{#([A-Za-z0-9][\w\-.:]*)\}[ \t]*$")
_BLOCK_ID = re.compile(r"[ \t]\^([A-Za-z0-9][\w\-]*)[ \t]*$")
# [[target#anchor|shown]]: target, optional anchor, optional display text.
WIKILINK = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
MD_LINK = re.compile(r"(?<!!)\[([^\[\]\n]+)\]\(([^()\s]*)\)")
BULLET = re.compile(r"^([ \t]*)(?:[-*+]|\d+[.)])[ \t]+(.*)$")
_CHECKBOX = re.compile(r"^\[([ xX])\][ \t]+")
_DATE_AT_START = re.compile(
    r"^\s*(\d{4})\s*(?:[-/.]|年)\s*(\d{1,2})\s*(?:[-/.]|月)\s*(\d{1,2})(?:日)?(?!\d)"
)
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_NON_WORD = re.compile(r"[\W_]+")
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


def fold_key(text: str) -> str:
    """The matching key of a name: NFKC, case-folded, diacritics and every non-word
    character removed, so "Zhang San", "zhang-san" and "ZhangSan" share one key."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        folded = unicodedata.normalize(
            "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
        )
    return _NON_WORD.sub("", folded)


def link_key(target: str) -> str:
    """The key of a wikilink target: its last path component without `.md`."""
    name = target.strip().replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".md", ".markdown"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return fold_key(name)


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based line of the file
    text: str  # without the line break
    offset: int  # character offset of the line in the body
    code: bool  # inside a fenced code block (or a fence line)


def _fence_after(fence: str | None, text: str) -> tuple[str | None, bool]:
    """(the fence open after the line `text`, is the line code) given the fence open
    before it: a fence is closed by a run of the same character at least as long."""
    match = _FENCE.match(text)
    if fence is not None:
        closes = match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)
        return (None if closes else fence), True
    if match:
        return match.group(1), True
    return None, False


def iter_lines(body: str, body_line: int) -> Iterator[Line]:
    fence: str | None = None
    offset = 0
    for number, raw in enumerate(body.split("\n")):
        text = raw.rstrip("\r")
        fence, code = _fence_after(fence, text)
        yield Line(body_line + number, text, offset, code)
        offset += len(raw) + 1


def open_fence(body: str) -> str | None:
    """The code fence still open at the end of `body` (its opening run, e.g. "```"), or
    None: text appended after an unclosed fence would be read as code."""
    fence: str | None = None
    for raw in body.split("\n"):
        fence, _code = _fence_after(fence, raw.rstrip("\r"))
    return fence


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


def strip_markup(text: str) -> str:
    """Plain text of a short Markdown fragment: links to their text, emphasis removed."""
    text = WIKILINK.sub(lambda m: (m.group(3) or m.group(1) or "").strip(), text)
    text = MD_LINK.sub(lambda m: m.group(1), text)
    return re.sub(r"(\*\*|__|`)", "", text).strip()


def bullet(text: str) -> tuple[int, str, bool | None] | None:
    """(indent, item text, checked) of a list item line; checked is None without a box."""
    match = BULLET.match(text)
    if not match:
        return None
    indent = len(match.group(1).expandtabs(4))
    item = match.group(2)
    box = _CHECKBOX.match(item)
    if box:
        return indent, item[box.end() :], box.group(1) != " "
    return indent, item, None


def field(item: str) -> tuple[str, str] | None:
    """A card field in a list item ('**别名**：Zhang San' → ('aliases', 'Zhang San'))."""
    match = _FIELD.match(item.strip())
    if not match:
        return None
    name = FIELD_LABELS.get(fold_key(match.group(1)))
    if name is None:
        return None
    return name, match.group(2).strip()


def leading_date(text: str) -> tuple[str | None, str | None, str]:
    """(YYYY-MM-DD or None, the date as written or None, the rest of the text).

    A text that starts like a full date but is not one ('2026-13-45') gives (None, raw,
    rest): the caller reports it."""
    match = _DATE_AT_START.match(text)
    if not match:
        return None, None, text.strip()
    raw = match.group(0).strip()
    rest = text[match.end() :].lstrip(" \t:：-–—,，")
    try:
        return dt.date(*(int(g) for g in match.groups())).isoformat(), raw, rest.strip()
    except ValueError:
        return None, raw, rest.strip()


def as_date(value: object) -> tuple[str | None, str | None]:
    """A front matter or field value → (YYYY-MM-DD or None, the value as text or None)."""
    if value is None:
        return None, None
    if isinstance(value, dt.datetime | dt.date):
        return value.strftime("%Y-%m-%d"), value.isoformat()
    raw = str(value).strip()
    if not raw:
        return None, None
    date, written, _rest = leading_date(raw)
    if date is not None:
        return date, raw
    match = _ISO_DATE.search(raw) if written is None else None
    if match:
        try:
            return dt.date(*(int(g) for g in match.groups())).isoformat(), raw
        except ValueError:
            return None, raw
    return None, raw


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
