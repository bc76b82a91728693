"""The entries of daily notes (`memory/YYYY-MM-DD.md`) and of the core file. Pure.

A daily note is cut at its second-level headings: each section is one entry (a `remember`
entry, a `digest` section, or a section written by hand). What stands before the first such
heading (the usual hand-written bullet list under the title) gives one entry per top-level
list item or paragraph. The core file gives one entry per list item: a conclusion, an open
item or a next step depending on the section it is in, with its pointer
(`→ memory/2026-09-22.md#模型路由`) and status marker (`[verified]`, `[claimed]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ingest.inline import WIKILINK, strip_markup
from ..ingest.markdown import HEADING, Line, bullet, iter_lines
from .keys import fold_key
from .markdown import split_heading

_TIME = re.compile(r"^(\d{1,2}:\d{2}(?::\d{2})?)\s*(?:·\s*)?")
_META_KEYS = ("status", "trust", "source", "entities")
_META = re.compile(r"^\s*\*?(status|trust|source)\s*:\s*")
_POINTER = re.compile(
    r"(?:→|->|⇒|详见|详|see)\s*\[?([^\[\]()#\n]+?\.(?:md|markdown))(?:#([^\s\]()]+))?"
)
_MD_POINTER = re.compile(r"\]\(([^()\s#]+?\.(?:md|markdown))(?:#([^\s()]+))?\)")
_STATUS_MARK = re.compile(
    r"\[(verified|claimed|unverified|已验证|已确认|待确认|未验证)\]|[(（](verified|claimed|"
    r"unverified|已验证|已确认|待确认|未验证)[)）]",
    re.IGNORECASE,
)
_STATUS_WORDS = {
    "verified": "verified",
    "已验证": "verified",
    "已确认": "verified",
    "claimed": "claimed",
    "unverified": "claimed",
    "待确认": "claimed",
    "未验证": "claimed",
}
OPEN_HEADINGS = ("待办", "在办", "未完成", "open", "todo", "inprogress", "openitems")
NEXT_HEADINGS = ("下一步", "接下来", "next", "nextsteps")
STATUSES = ("claimed", "verified")
TRUST_LEVELS = ("confirmed", "inferred", "imported")


@dataclass
class Entry:
    kind: str  # remember | digest | section | item | conclusion | open | next
    anchor: str
    heading: str
    line: int
    end_line: int
    date: str | None
    text_line: int = 0  # the line `text` starts on
    time: str | None = None
    status: str | None = None
    trust: str | None = None
    source: str | None = None
    target: str | None = None
    entities: list[str] = field(default_factory=list)
    text: str = ""


def parse_meta(text: str) -> dict[str, str]:
    """'status: claimed · trust: inferred · source: chat · entities: [[张三]]' → dict."""
    out: dict[str, str] = {}
    for part in re.split(r"\s+·\s+", text.strip().strip("*_")):
        key, sep, value = part.partition(":")
        key = key.strip().lower()
        if sep and key in _META_KEYS and key not in out:
            out[key] = value.strip()
    return out


def meta_entities(value: str) -> list[str]:
    names = [(m.group(1) or "").strip() for m in WIKILINK.finditer(value)]
    if not names:
        names = [n.strip() for n in re.split(r"[,，、]", value)]
    return [n for n in names if n]


def _status_of(text: str) -> str | None:
    match = _STATUS_MARK.search(text)
    if not match:
        return None
    return _STATUS_WORDS.get((match.group(1) or match.group(2)).lower())


def pointer(text: str) -> str | None:
    """The `path#anchor` a line points to (`→ memory/2026-09-22.md#模型路由`), or None."""
    match = _POINTER.search(text) or _MD_POINTER.search(text)
    if match:
        return match.group(1) + (f"#{match.group(2)}" if match.group(2) else "")
    for link in WIKILINK.finditer(text):
        if link.group(2):
            target = (link.group(1) or "").strip()
            return f"{target}#{link.group(2).strip()}"
    return None


def _blocks(lines: list[Line]) -> list[list[Line]]:
    """Top-level list items (with their nested lines) and paragraphs."""
    blocks: list[list[Line]] = []
    current: list[Line] = []
    for line in lines:
        item = bullet(line.text) if not line.code else None
        if not line.text.strip() and not line.code:
            if current:
                blocks.append(current)
            current = []
        elif item is not None and item[0] == 0:
            if current:
                blocks.append(current)
            current = [line]
        else:
            current.append(line)
    if current:
        blocks.append(current)
    return blocks


def _block_text(block: list[Line]) -> str:
    out = []
    for line in block:
        item = bullet(line.text) if not line.code else None
        out.append(item[1] if item is not None and item[0] == 0 else line.text.strip())
    return "\n".join(t for t in out if t).strip()


def _checkbox(block: list[Line]) -> str | None:
    item = bullet(block[0].text)
    if item is None or item[2] is None:
        return None
    return "done" if item[2] else "open"


def parse_daily(body: str, body_line: int, date: str | None) -> list[Entry]:
    """The entries of one daily note."""
    lines = list(iter_lines(body, body_line))
    heads = [
        (i, len(m.group(1)), m.group(2))
        for i, ln in enumerate(lines)
        if not ln.code and (m := HEADING.match(ln.text))
    ]
    levels = [lv for _, lv, _ in heads if lv >= 2]
    split = min(levels) if levels else None
    cuts = [i for i, lv, _ in heads if lv == split]
    entries: list[Entry] = []
    first = cuts[0] if cuts else len(lines)
    preamble = [ln for i, ln in enumerate(lines[:first]) if not any(i == h for h, _, _ in heads)]
    for block in _blocks(preamble):
        text = _block_text(block)
        if text and text != "---":
            entries.append(
                Entry(
                    kind="item",
                    anchor="",
                    heading="",
                    line=block[0].number,
                    end_line=block[-1].number,
                    date=date,
                    text_line=block[0].number,
                    status=_checkbox(block) or _status_of(text),
                    text=text,
                )
            )
    for n, start in enumerate(cuts):
        end = cuts[n + 1] if n + 1 < len(cuts) else len(lines)
        entries.append(_section(lines[start:end], date))
    return entries


def _section(lines: list[Line], date: str | None) -> Entry:
    match = HEADING.match(lines[0].text)
    assert match is not None
    heading, explicit = split_heading(match.group(2))
    time_match = _TIME.match(heading)
    # The metadata line (`status: claimed · trust: inferred · ...`) is the section's last.
    meta: dict[str, str] = {}
    rest = lines[1:]
    filled = [k for k, ln in enumerate(rest) if ln.text.strip()]
    if filled and not rest[filled[-1]].code and _META.match(rest[filled[-1]].text):
        meta = parse_meta(rest[filled[-1]].text)
        rest = rest[: filled[-1]]
    while rest and not rest[0].text.strip():
        rest = rest[1:]
    body = [ln.text for ln in rest]
    text_line = rest[0].number if rest else lines[0].number
    last = max((ln.number for ln in lines if ln.text.strip()), default=lines[0].number)
    anchor = explicit or ""
    kind = "section"
    if anchor.startswith("m-"):
        kind = "remember"
    elif anchor.startswith("d-"):
        kind = "digest"
    status = meta.get("status", "").lower() or None
    trust = meta.get("trust", "").lower() or None
    return Entry(
        kind=kind,
        anchor=anchor,
        heading=heading,
        line=lines[0].number,
        end_line=last,
        date=date,
        text_line=text_line,
        time=time_match.group(1) if time_match else None,
        status=status if status in (*STATUSES, "done", "open") else _status_of(heading),
        trust=trust if trust in TRUST_LEVELS else None,
        source=meta.get("source") or None,
        entities=meta_entities(meta.get("entities", "")),
        text="\n".join(body).strip(),
    )


def _heading_kind(heading: str) -> str:
    key = fold_key(heading)
    if any(key.startswith(fold_key(k)) or fold_key(k) in key for k in OPEN_HEADINGS):
        return "open"
    if any(key.startswith(fold_key(k)) or fold_key(k) in key for k in NEXT_HEADINGS):
        return "next"
    return "conclusion"


def parse_core(body: str, body_line: int, date: str | None) -> list[Entry]:
    """The conclusions, open items and next steps of the core file."""
    entries: list[Entry] = []
    kind = "conclusion"
    heading = ""
    section: list[Line] = []

    def flush() -> None:
        for block in _blocks(section):
            if bullet(block[0].text) is None:
                continue  # prose in the core file is context, not a conclusion
            text = _block_text(block)
            checkbox = _checkbox(block)
            entries.append(
                Entry(
                    kind=kind,
                    anchor="",
                    heading=heading,
                    line=block[0].number,
                    end_line=block[-1].number,
                    date=date,
                    text_line=block[0].number,
                    status=checkbox if checkbox == "done" else _status_of(text) or checkbox,
                    target=pointer(text),
                    text=strip_markup(_STATUS_MARK.sub("", text)).strip(),
                )
            )

    for line in iter_lines(body, body_line):
        match = HEADING.match(line.text) if not line.code else None
        if match:
            flush()
            section = []
            heading = split_heading(match.group(2))[0]
            kind = _heading_kind(heading) if len(match.group(1)) > 1 else "conclusion"
        else:
            section.append(line)
    flush()
    return entries
