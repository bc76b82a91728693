"""Front matter + Markdown → a parsed note. Pure: no I/O beyond the text it is given."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..model import Heading

MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_FRONTMATTER_DEPTH = 20

_FM_OPEN = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_DATE_TEXT = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_INLINE_TAG = re.compile(r"(?<![\w#&/\\])#([^\W\d_][\w\-/]*|\d+[^\W\d_][\w\-/]*)")


def _flat(message: object) -> str:
    """A library's error message on one line (a problem is reported as one line)."""
    return " ".join(str(message).split())


class FrontMatterError(ValueError):
    """The front matter block exists but cannot be read; the message says where and why."""


@dataclass(frozen=True)
class ParsedNote:
    title: str
    title_source: str  # frontmatter | heading | filename
    date: str | None
    date_source: str | None  # frontmatter | filename | mtime
    frontmatter: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the file where the body starts
    headings: list[Heading]
    tags: list[str]  # front matter tags, in order, deduplicated
    inline_tags: list[str]
    links: list[str]
    problems: list[str] = field(default_factory=list)


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses YAML aliases: a 'billion laughs' block cannot expand."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.composer.ComposerError(
                None, None, "aliases are not allowed in front matter", event.start_mark
            )
        return super().compose_node(parent, index)


_FAST_LOADER: Any = getattr(yaml, "CSafeLoader", None)
_ANCHOR = re.compile(r"[&*!]")


def _depth(value: Any, limit: int) -> int:
    stack: list[tuple[Any, int]] = [(value, 1)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _plain(value: Any) -> Any:
    """Make a YAML value JSON-safe and stable: dates to ISO strings, keys to strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN and infinities are not JSON
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Return (front matter source or None, body, 1-based line where the body starts)."""
    opening = _FM_OPEN.match(text)
    if not opening:
        return None, text.removeprefix("\ufeff"), 1
    closing = _FM_CLOSE.search(text, opening.end())
    if not closing:
        return None, text.removeprefix("\ufeff"), 1
    source = text[opening.end() : closing.start()]
    rest_start = closing.end()
    if text.startswith("\r\n", rest_start):
        rest_start += 2
    elif text.startswith("\n", rest_start):
        rest_start += 1
    body_line = text.count("\n", 0, rest_start) + 1
    return source, text[rest_start:], body_line


def load_frontmatter(source: str) -> dict[str, Any]:
    """Parse a front matter block; raise FrontMatterError with a one-line reason."""
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise FrontMatterError(f"front matter longer than {MAX_FRONTMATTER_CHARS} characters")
    # libyaml is ~10x faster; anchors and aliases go through the pure-Python loader that
    # refuses them, so an alias bomb never expands.
    loader = (
        _FAST_LOADER if _FAST_LOADER is not None and not _ANCHOR.search(source) else _NoAliasLoader
    )
    try:
        data = yaml.load(source, Loader=loader)  # noqa: S506 - safe loaders only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 2}: " if mark is not None else ""
        raise FrontMatterError(f"malformed front matter ({where}{_flat(exc.problem)})") from None
    except yaml.YAMLError as exc:  # e.g. a control character: its message spans lines
        raise FrontMatterError(f"malformed front matter ({_flat(exc)})") from None
    except RecursionError:
        raise FrontMatterError("front matter nested too deeply") from None
    except (ValueError, TypeError, AttributeError, OverflowError) as exc:
        # YAML parsed, but a value cannot be built (2026-02-30, !!int abc, a huge number).
        raise FrontMatterError(f"front matter value cannot be read ({_flat(exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    if _depth(data, MAX_FRONTMATTER_DEPTH) > MAX_FRONTMATTER_DEPTH:
        raise FrontMatterError(f"front matter nested deeper than {MAX_FRONTMATTER_DEPTH} levels")
    plain = _plain(data)
    assert isinstance(plain, dict)
    return plain


def normalize_date(value: Any) -> str | None:
    """A front matter date (date, datetime or text like 2026-09-03 / 2026/9/3) → YYYY-MM-DD."""
    if isinstance(value, dt.datetime | dt.date):
        return value.strftime("%Y-%m-%d")
    if not isinstance(value, str | int):
        return None
    match = _DATE_TEXT.match(str(value))
    if not match:
        return None
    try:
        return dt.date(*(int(g) for g in match.groups())).isoformat()
    except ValueError:
        return None


def date_from_name(name: str) -> str | None:
    for match in _DATE_IN_NAME.finditer(name):
        try:
            return dt.date(*(int(g) for g in match.groups())).isoformat()
        except ValueError:
            continue
    return None


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in re.split(r"[,，;；\s]+", value) if part]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None and not isinstance(v, dict | list)]
    return [str(value)]


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        item = item.strip().lstrip("#").strip()
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            out.append(item)
    return out


def scan_markdown(body: str, body_line: int) -> tuple[list[Heading], list[str], list[str]]:
    """Headings (with offsets into body), wikilink targets and inline #tags, skipping code."""
    headings: list[Heading] = []
    links: list[str] = []
    inline_tags: list[str] = []
    fence: str | None = None
    offset = 0
    # Only \n ends a line here (as in editors and `line` numbers elsewhere): str.splitlines
    # would also split at form feeds and U+2028 and shift every later line number.
    for number, line in enumerate(body.split("\n")):
        line += "\n"
        stripped = line.rstrip("\r\n")
        fence_match = _FENCE.match(stripped)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        else:
            heading = _HEADING.match(stripped)
            if heading:
                headings.append(
                    Heading(len(heading.group(1)), heading.group(2), offset, body_line + number)
                )
            else:
                text = re.sub(r"`[^`\n]*`", " ", stripped)
                inline_tags.extend(m.group(1).rstrip("/-") for m in _INLINE_TAG.finditer(text))
            links.extend(m.group(1).strip() for m in _WIKILINK.finditer(stripped))
        offset += len(line)
    return headings, _dedupe(links), _dedupe(inline_tags)


def parse_note(text: str, file_name: str, mtime_date: str | None) -> ParsedNote:
    """Parse one note. Never raises on content: problems are reported in `.problems`."""
    problems: list[str] = []
    source, body, body_line = split_frontmatter(text)
    frontmatter: dict[str, Any] = {}
    if source is not None:
        try:
            frontmatter = load_frontmatter(source)
        except FrontMatterError as exc:
            problems.append(f"{exc}; indexed without it")
            body, body_line = text.removeprefix("\ufeff"), 1
    headings, links, inline_tags = scan_markdown(body, body_line)

    title_value = frontmatter.get("title")
    stem = file_name.rsplit("/", 1)[-1]
    stem = stem[: -len(".markdown")] if stem.endswith(".markdown") else stem.removesuffix(".md")
    if isinstance(title_value, str | int | float) and str(title_value).strip():
        title, title_source = str(title_value).strip(), "frontmatter"
    else:
        first_h1 = next((h for h in headings if h.level == 1), None)
        if first_h1 is not None:
            title, title_source = first_h1.text, "heading"
        else:
            title, title_source = stem, "filename"

    date, date_source = None, None
    if "date" in frontmatter:
        date = normalize_date(frontmatter["date"])
        if date is None:
            problems.append(f"front matter date {frontmatter['date']!r} is not a date; ignored")
        else:
            date_source = "frontmatter"
    if date is None:
        date = date_from_name(stem)
        date_source = "filename" if date else None
    if date is None and mtime_date is not None:
        date, date_source = mtime_date, "mtime"

    tags = _dedupe(_as_list(frontmatter.get("tags", frontmatter.get("tag"))))
    return ParsedNote(
        title=title,
        title_source=title_source,
        date=date,
        date_source=date_source,
        frontmatter=frontmatter,
        body=body,
        body_line=body_line,
        headings=headings,
        tags=tags,
        inline_tags=[t for t in inline_tags if t.casefold() not in {x.casefold() for x in tags}],
        links=links,
        problems=problems,
    )
