"""Entity cards and relation edges of one note. Pure: note fields in, definitions out.

Two forms are read (seed 001, section 7):

- a file per entity under the entities folder, front matter `type`, `aliases`, `tags`,
  `last_activity`, `pinned`, with a `## 关系` / `## Relations` section of lines
  `- relation [[Target]]` and a `## 关键事件` / `## Events` section of dated lines;
- a `### Name (Type)` / `### 张三（Person）` section anywhere, holding field lines such as
  `- **别名**：Zhang San, zs`, `- **关系**：[[李四]] | [[CRM]]`, `- **最后活动**：2026-10-12`.

Every `[[wikilink]]` elsewhere in any note is an edge too (kind `wikilink`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..ingest.inline import MD_LINK, WIKILINK, strip_markup
from ..ingest.markdown import (
    HEADING,
    Line,
    as_date,
    bullet,
    iter_lines,
    leading_date,
)
from .keys import fold_key
from .markdown import field as card_field
from .markdown import split_heading, split_list

_SECTION_CARD = re.compile(r"^(.+?)\s*[（(]\s*([^()（）]{1,24}?)\s*[)）]$")
_RELATION_HEADINGS = {"关系", "relations", "related", "links", "关联"}
_EVENT_HEADINGS = {"关键事件", "事件", "events", "keyevents", "timeline", "里程碑", "milestones"}
_LAST_ACTIVITY_KEYS = ("last_activity", "last-activity", "lastActivity", "最后活动")
_REL_TRIM = " \t:：、，,|;；()（）-–—→>"
MAX_DEFINITION = 240


@dataclass(frozen=True)
class Edge:
    source: str  # entity name, or '' when the note itself links
    relation: str
    target: str
    line: int
    kind: str  # relation | wikilink


@dataclass(frozen=True)
class Event:
    date: str | None
    text: str
    line: int


@dataclass
class CardDef:
    name: str
    kind: str  # file | section
    line: int
    type: str | None = None
    definition: str = ""
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    last_activity: str | None = None
    last_activity_raw: str | None = None
    status: str | None = None
    pinned: bool = False
    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return fold_key(self.name)


@dataclass
class CardParse:
    cards: list[CardDef] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)


def in_folder(path: str, folder: str) -> bool:
    folder = folder.strip("/")
    return bool(folder) and path.startswith(folder + "/")


def _relation_edges(item: str, line: int, source: str, label: bool) -> list[Edge]:
    """`负责 [[客户去重规则 v2]]`, `和 [[王磊]] 合作过 [[ADR-001]]`, `[李四](#实体李四) | ...`."""
    links: list[tuple[int, int, str]] = []
    for match in WIKILINK.finditer(item):
        target = (match.group(1) or "").strip()
        if target:
            links.append((match.start(), match.end(), target))
    for match in MD_LINK.finditer(item):
        href = match.group(2)
        if href.startswith("#") or href.endswith((".md", ".markdown")) or not href:
            if not any(s <= match.start() < e for s, e, _ in links):
                links.append((match.start(), match.end(), match.group(1).strip()))
    links.sort()
    edges: list[Edge] = []
    previous = "related" if label else ""
    cursor = 0
    for start, end, target in links:
        segment = strip_markup(item[cursor:start])
        for colon in (":", "："):
            if colon in segment:
                segment = segment.split(colon, 1)[0]
        relation = segment.strip(_REL_TRIM)[:40] or previous or "related"
        edges.append(Edge(source, relation, target, line, "relation"))
        previous = relation
        cursor = end
    return edges


class _Scope:
    """Reads the lines of one card (a whole file card, or one `### X (Type)` section)."""

    def __init__(self, card: CardDef) -> None:
        self.card = card
        self.edges: list[Edge] = []
        self.relation_lines: set[int] = set()
        self.fields = 0
        self._list_field: tuple[str, int] | None = None  # ('relations'|'events', indent)
        self._section: str | None = None  # a relations or events heading we are under

    def heading(self, text: str) -> None:
        key = fold_key(split_heading(text)[0])
        self._section = (
            "relations"
            if key in _RELATION_HEADINGS
            else "events"
            if key in _EVENT_HEADINGS
            else None
        )
        self._list_field = None

    def line(self, line: Line) -> None:
        item = bullet(line.text)
        if item is None:
            if line.text.strip():
                self._list_field = None
            return
        indent, text, _checked = item
        if self._list_field is not None:
            kind, parent_indent = self._list_field
            if indent > parent_indent:
                self._take(kind, text, line.number, label=False)
                return
            self._list_field = None
        parsed = card_field(text)
        if parsed is not None:
            self.fields += 1
            name, value = parsed
            if name in ("relations", "events"):
                if value:
                    self._take(name, value, line.number, label=True)
                else:
                    self._list_field = (name, indent)
                return
            self._set(name, value, line.number)
            return
        if self._section is not None:
            self._take(self._section, text, line.number, label=False)

    def _take(self, kind: str, text: str, number: int, *, label: bool) -> None:
        if kind == "relations":
            self.edges.extend(_relation_edges(text, number, self.card.name, label))
            self.relation_lines.add(number)
            return
        date, raw, rest = leading_date(text)
        if raw is not None and date is None:
            self.card.problems.append(f"line {number}: event date {raw!r} is not a date")
        self.card.events.append(Event(date, strip_markup(rest if raw else text), number))

    def _set(self, name: str, value: str, number: int) -> None:
        card = self.card
        if name == "aliases":
            card.aliases += [a for a in split_list(value) if a not in card.aliases]
        elif name == "tags":
            card.tags += [t for t in split_list(value) if t not in card.tags]
        elif name == "definition" and not card.definition:
            card.definition = strip_markup(value)[:MAX_DEFINITION]
        elif name == "type" and not card.type:
            card.type = strip_markup(value) or None
        elif name == "status" and not card.status:
            card.status = strip_markup(value) or None
        elif name == "last_activity" and card.last_activity_raw is None:
            date, raw = as_date(value)
            card.last_activity, card.last_activity_raw = date, raw
            if raw and date is None:
                card.problems.append(f"line {number}: last activity {raw!r} is not a date")


def _file_card(title: str, frontmatter: dict[str, Any], line: int) -> CardDef:
    card = CardDef(name=title, kind="file", line=line)
    kind = frontmatter.get("type")
    card.type = str(kind).strip() if isinstance(kind, str | int) and str(kind).strip() else None
    card.aliases = [a for a in split_list(frontmatter.get("aliases")) if fold_key(a) != card.key]
    card.tags = split_list(frontmatter.get("tags", frontmatter.get("tag")))
    status = frontmatter.get("status")
    card.status = str(status) if isinstance(status, str | int | float) else None
    pinned = frontmatter.get("pinned")
    card.pinned = pinned is True or str(pinned).lower() in ("true", "yes", "1")
    for key in _LAST_ACTIVITY_KEYS:
        if key in frontmatter:
            date, raw = as_date(frontmatter[key])
            card.last_activity, card.last_activity_raw = date, raw
            if raw and date is None:
                card.problems.append(f"front matter {key} {raw!r} is not a date")
            break
    return card


def _first_paragraph(lines: list[Line]) -> str:
    for line in lines:
        text = line.text.strip()
        if not text or line.code or HEADING.match(text) or bullet(line.text) or text == "---":
            continue
        return strip_markup(text)[:MAX_DEFINITION]
    return ""


def parse_cards(
    path: str,
    title: str,
    frontmatter: dict[str, Any],
    body: str,
    body_line: int,
    *,
    entities_dir: str,
) -> CardParse:
    """Entity definitions and edges of one note."""
    is_file_card = in_folder(path, entities_dir)
    lines = list(iter_lines(body, body_line))
    result = CardParse()
    file_scope = _Scope(_file_card(title, frontmatter, 1)) if is_file_card else None

    # Section cards: `### Name (Type)` up to the next heading of the same or a higher level.
    sections: list[tuple[int, int, _Scope]] = []  # (first index, end index, scope)
    heads = [  # a heading starts with "#": the pattern is tried on those lines only
        (i, len(m.group(1)), m.group(2))
        for i, line in enumerate(lines)
        if not line.code and line.text.startswith("#") and (m := HEADING.match(line.text))
    ]
    for n, (i, level, text) in enumerate(heads):
        match = _SECTION_CARD.match(split_heading(strip_markup(text))[0])
        if level < 2 or not match or not fold_key(match.group(1)):
            continue
        end = next((j for j, lv, _ in heads[n + 1 :] if lv <= level), len(lines))
        card = CardDef(name=match.group(1).strip(), kind="section", line=lines[i].number)
        card.type = match.group(2).strip()
        scope = _Scope(card)
        for line in lines[i + 1 : end]:
            heading = None if line.code else HEADING.match(line.text)
            if heading:
                scope.heading(heading.group(2))
            elif not line.code:
                scope.line(line)
        if scope.fields:
            card.definition = card.definition or _first_paragraph(lines[i + 1 : end])
            sections.append((i, end, scope))

    in_section = {k for start, end, _ in sections for k in range(start, end)}
    if file_scope is not None:
        for k, line in enumerate(lines):
            if k in in_section or line.code:
                continue
            heading = HEADING.match(line.text)
            if heading:
                file_scope.heading(heading.group(2))
            else:
                file_scope.line(line)
        card = file_scope.card
        card.definition = card.definition or _first_paragraph(
            [ln for k, ln in enumerate(lines) if k not in in_section]
        )
        result.cards.append(card)
    scopes = ([file_scope] if file_scope else []) + [s for _, _, s in sections]
    result.cards += [s.card for _, _, s in sections]

    owner: dict[int, str] = {}
    for start, end, scope in sections:
        for k in range(start, end):
            owner[lines[k].number] = scope.card.name
    relation_lines: set[int] = set()
    for scope in scopes:
        result.edges += scope.edges
        relation_lines |= scope.relation_lines
    default = file_scope.card.name if file_scope else ""
    for line in lines:
        if line.code or line.number in relation_lines or "[[" not in line.text:
            continue
        source = owner.get(line.number, default)
        for match in WIKILINK.finditer(line.text):
            target = (match.group(1) or "").strip()
            if target:
                result.edges.append(Edge(source, "links to", target, line.number, "wikilink"))
    return result
