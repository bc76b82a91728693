"""Front matter + Markdown → a parsed note. Pure: no I/O beyond the text it is given.

The Markdown itself (headings, links, tags, dates) is read by lore.ingest.markdown, the one
reader memory uses too. A front matter block YAML refuses is read again key by key: one
bad value costs that key, never the title, tags and aliases beside it. A note is dated by
its front matter, else its file name, else a date it gives near its top; otherwise it is
undated (a file's modification time is not a date: a clone or a copy changes it).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from ..model.sync import Heading
from .inline import strip_markup
from .markdown import (
    HEADING,
    Line,
    as_date,
    date_from_name,
    date_in_text,
    iter_lines,
    line_tags,
    note_link_targets,
)
from .markdown import wikilink_targets as _wikilink_targets

MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_FRONTMATTER_DEPTH = 20

_FM_OPEN = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n")
_FM_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
# A top-level key of a front matter block: where a block YAML refused is cut to be read
# key by key.
_TOP_KEY = re.compile(
    r"^(?:[\"'][^\"'\n]*[\"']|[^\s#\-\"'][^:\n]*?)[ \t]*:(?:[ \t]|$)", re.MULTILINE
)
_REASON = re.compile(r"\((.*)\)\Z")
# Front matter keys that date a note, most specific first.
DATE_KEYS = ("date", "created", "published")


def _flat(message: object) -> str:
    """A library's error message on one line (a problem is reported as one line)."""
    return " ".join(str(message).split())


class FrontMatterError(ValueError):
    """The front matter block exists but cannot be read; the message says where and why."""


class _Refused(FrontMatterError):
    """Refused as a whole (too long, too deep, YAML aliases): never read key by key."""


@dataclass(frozen=True)
class Problem:
    """Something wrong with a note that did not stop it being indexed. `kind` groups the
    same problem across notes (a vault may have hundreds of one kind)."""

    kind: str  # frontmatter | frontmatter_key | date | ...
    message: str  # one line
    key: str | None = None  # the front matter key it is about


@dataclass(frozen=True)
class ParsedNote:
    title: str
    title_source: str  # frontmatter | heading | filename
    date: str | None  # None: undated
    date_source: str | None  # frontmatter | filename | text
    frontmatter: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the file where the body starts
    headings: list[Heading]
    tags: list[str]  # front matter tags, in order, deduplicated
    inline_tags: list[str]
    links: list[str]
    problems: list[Problem] = field(default_factory=list)
    # The body's lines as lore.ingest.markdown reads them: read once, for every later pass
    # over the same body (the summary's tail, lore.derive.summary).
    lines: list[Line] = field(default_factory=list, repr=False, compare=False)


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
    """Make a YAML value JSON-safe and stable: dates to ISO strings, keys to strings, and
    a NUL a YAML escape wrote ("\\0", "\\x00") as U+FFFD, as a NUL in the file is
    (lore.index.sync.decode_note): PostgreSQL's text cannot hold it, so no backend does."""
    if isinstance(value, dict):
        return {_plain(str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN and infinities are not JSON
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if value is None or isinstance(value, bool | int | float):
        return value
    return _plain(str(value))


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


def load_frontmatter(source: str, *, first_line: int = 2) -> dict[str, Any]:
    """Parse a front matter block (starting on line `first_line` of the file); raise
    FrontMatterError with a one-line reason."""
    if len(source) > MAX_FRONTMATTER_CHARS:
        raise _Refused(f"front matter longer than {MAX_FRONTMATTER_CHARS} characters")
    # libyaml is ~10x faster; anchors and aliases go through the pure-Python loader that
    # refuses them, so an alias bomb never expands.
    loader = (
        _FAST_LOADER if _FAST_LOADER is not None and not _ANCHOR.search(source) else _NoAliasLoader
    )
    try:
        data = yaml.load(source, Loader=loader)  # noqa: S506 - safe loaders only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + first_line}: " if mark is not None else ""
        refused = ("aliases are not allowed", "nesting depth")
        error = _Refused if any(r in str(exc.problem) for r in refused) else FrontMatterError
        raise error(f"malformed front matter ({where}{_flat(exc.problem)})") from None
    except yaml.YAMLError as exc:  # e.g. a control character: its message spans lines
        raise FrontMatterError(f"malformed front matter ({_flat(exc)})") from None
    except RecursionError:
        raise _Refused("front matter nested too deeply") from None
    except (ValueError, TypeError, AttributeError, OverflowError) as exc:
        # YAML parsed, but a value cannot be built (2026-02-30, !!int abc, a huge number).
        raise FrontMatterError(f"front matter value cannot be read ({_flat(exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    if _depth(data, MAX_FRONTMATTER_DEPTH) > MAX_FRONTMATTER_DEPTH:
        raise _Refused(f"front matter nested deeper than {MAX_FRONTMATTER_DEPTH} levels")
    plain = _plain(data)
    assert isinstance(plain, dict)
    return plain


def read_frontmatter(source: str) -> tuple[dict[str, Any], list[Problem]]:
    """The front matter as a mapping, and its problems. A block YAML refuses is read key by
    key (each top-level key with the lines under it): the keys that read are kept, each
    one that does not is reported by name. Blocks refused as a whole (too long, too deep,
    YAML aliases) give an empty mapping."""
    try:
        return load_frontmatter(source), []
    except _Refused as exc:
        return {}, [Problem("frontmatter", f"{exc}; indexed without it")]
    except FrontMatterError as whole:
        starts = [m.start() for m in _TOP_KEY.finditer(source)]
        if not starts:
            return {}, [Problem("frontmatter", f"{whole}; indexed without it")]
    kept: dict[str, Any] = {}
    problems: list[Problem] = []
    if source[: starts[0]].strip():
        problems.append(
            Problem("frontmatter_key", "front matter text before its first key ignored")
        )
    for start, end in zip(starts, [*starts[1:], len(source)], strict=True):
        block = source[start:end]
        try:
            kept.update(load_frontmatter(block, first_line=2 + source.count("\n", 0, start)))
            continue
        except FrontMatterError as exc:
            error = exc
        key = block.split(":", 1)[0].strip().strip("\"'")[:60]
        why = _REASON.search(str(error))
        reason = f"front matter {key} cannot be read ({why.group(1) if why else error})"
        as_text = _as_text(block)
        if as_text is not None:  # a value YAML cannot build (2026-02-30): keep what is written
            kept.update(as_text)
        remedy = "kept as text" if as_text is not None else "the other keys are kept"
        problems.append(Problem("frontmatter_key", f"{reason}; {remedy}", key))
    return kept, problems


def _as_text(block: str) -> dict[str, Any] | None:
    """One key's block read with every value as text (YAML's base loader builds strings,
    lists and mappings only), or None when even that fails."""
    if re.search(r"[&*]", block):  # anchors and aliases expand in any loader
        return None
    try:
        data = yaml.load(block, Loader=yaml.BaseLoader)  # noqa: S506 - strings only
    except (yaml.YAMLError, RecursionError):
        return None
    if not isinstance(data, dict) or _depth(data, MAX_FRONTMATTER_DEPTH) > MAX_FRONTMATTER_DEPTH:
        return None
    return dict(_plain(data))


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


def scan_markdown(
    body: str, body_line: int, folder: str = "", lines: list[Line] | None = None
) -> tuple[list[Heading], list[str], list[str]]:
    """Headings (with offsets into body), link targets and inline #tags, skipping code.
    Links are wikilink targets as written and the notes Markdown links point at, as paths
    in the vault (resolved from the note's `folder`). `lines`: the body's lines, when the
    caller has read them (iter_lines)."""
    headings: list[Heading] = []
    links: list[str] = []
    inline_tags: list[str] = []
    # Each pattern is tried only on the lines that hold what it starts with.
    for line in iter_lines(body, body_line) if lines is None else lines:
        if line.code:
            continue
        text = line.text
        heading = HEADING.match(text) if text.startswith("#") else None
        if heading:
            headings.append(
                Heading(len(heading.group(1)), heading.group(2), line.offset, line.number)
            )
        if not line.html and "#" in text:
            inline_tags.extend(line_tags(text))
        if "[[" in text:
            links.extend(_wikilink_targets(text))
        if "](" in text:
            links.extend(note_link_targets(text, folder))
    return headings, _dedupe(links), _dedupe(inline_tags)


def note_date(
    frontmatter: dict[str, Any], name: str, body: str, lines: list[Line] | None = None
) -> tuple[str | None, str | None, list[Problem]]:
    """(YYYY-MM-DD, where it came from, problems): front matter, file name, the text."""
    problems: list[Problem] = []
    for key in DATE_KEYS:
        date, raw = as_date(frontmatter.get(key))
        if date is not None:
            return date, "frontmatter", problems
        if raw is not None:
            message = f"front matter {key} {raw[:80]!r} is not a date; ignored"
            problems.append(Problem("date", message, key))
    date = date_from_name(name)
    if date is not None:
        return date, "filename", problems
    date = date_in_text(body, lines)
    return date, ("text" if date else None), problems


# A template's placeholder ("{{title}}", "<% tp.file.title %>"): what the template will
# write, not a name of the note (Obsidian shows the file's name).
_PLACEHOLDER = re.compile(r"\{\{.*?\}\}|<%.*?%>")


def _names(title: str) -> bool:
    """Whether `title` can name a note: it says something besides template placeholders."""
    return bool(_PLACEHOLDER.sub("", title).strip())


def parse_note(text: str, file_name: str) -> ParsedNote:
    """Parse one note. Never raises on content: problems are reported in `.problems`."""
    problems: list[Problem] = []
    source, body, body_line = split_frontmatter(text)
    frontmatter: dict[str, Any] = {}
    if source is not None:
        frontmatter, problems = read_frontmatter(source)
        if not frontmatter and problems and problems[0].kind == "frontmatter":
            body, body_line = text.removeprefix("\ufeff"), 1
    folder = file_name.rsplit("/", 1)[0] if "/" in file_name else ""
    lines = list(iter_lines(body, body_line))
    headings, links, inline_tags = scan_markdown(body, body_line, folder, lines)

    title_value = frontmatter.get("title")
    stem = file_name.rsplit("/", 1)[-1]
    stem = stem[: -len(".markdown")] if stem.endswith(".markdown") else stem.removesuffix(".md")
    if isinstance(title_value, str | int | float) and _names(str(title_value)):
        title, title_source = str(title_value).strip(), "frontmatter"
    else:
        # The note's first heading names it when it is a level-1 heading, or when nothing
        # is written before it. A "#" heading below a "##" one is a section (a vault's
        # "# This note in GitHub" footer, a "# Part two"), not the note's name.
        first = headings[0] if headings else None
        opens = first is not None and (first.level == 1 or not body[: first.offset].strip())
        # Named as it reads: "Intro to [[dataview|Dataview]]" is "Intro to Dataview".
        heading = (strip_markup(first.text) or first.text) if first and opens else ""
        if _names(heading):
            title, title_source = heading, "heading"
        else:
            title, title_source = stem, "filename"

    date, date_source, date_problems = note_date(frontmatter, stem, body, lines)
    tags = _dedupe(_as_list(frontmatter.get("tags", frontmatter.get("tag"))))
    folded = {t.casefold() for t in tags}
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
        inline_tags=[t for t in inline_tags if t.casefold() not in folded],
        links=links,
        # A date key's own problem says more than "kept as text".
        problems=[p for p in problems if p.key not in {d.key for d in date_problems}]
        + date_problems,
        lines=lines,
    )
