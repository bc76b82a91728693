"""The Markdown reader every part of lore shares: lines and fenced code, headings, list
items, wikilinks, inline tags and dates. Indexing (lore.ingest.parse) and agent memory
(lore.memory) both read notes through these functions, so a heading, a list item, a link,
a tag or a date is the same thing to search, to the tag filter, to cluster labels and to
entity cards. Pure functions.

Tags follow Obsidian's rules: `#tag` or `#parent/child` at the start of a line or after
white space, made of letters, digits, `_`, `-` and `/`, with at least one character that
is not a digit; never inside code (fenced or inline), a wikilink or embed (`[[#Heading]]`,
`[[note#Heading]]`), a Markdown link target, a URL or a comment (`%%…%%`, `<!-- … -->`).
So `C#`, `#123`, `issue#45` and `x.com/#anchor` are not tags.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple
from urllib.parse import unquote

# The inline part of the reader (links, comments, what points rather than says) is a
# module of its own, lore.ingest.inline: a search cuts snippets with it and never reads a
# note line by line.
from .inline import IMAGES_LINKS_URLS, MD_LINK, TAGS_COMMENTS, WIKILINK, strip_markup

HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
# A code fence at any indentation (fences inside list items are indented past 3 spaces),
# inside a block quote / callout, or opening a list item ("- ```c", as outliners write);
# a backtick fence's info string holds no backtick, so "```x```" is inline code.
FENCE = re.compile(r"^[ \t]*(?:>[ \t]*|(?:[-*+]|\d{1,9}[.)])[ \t]+)*(?:(`{3,})(?!.*`)|(~{3,}))")

# What is never a tag's context: inline code, wikilinks and embeds, link targets, URLs,
# comments. Replaced by a space before tags are looked for.
_NOT_TAG_TEXT = re.compile(
    r"(`+).*?(?<!`)\1(?!`)"  # inline code: a run of backticks to a run as long
    r"|!?\[\[[^\]\n]*\]\]"  # [[link]], [[#Heading]], ![[embed]]
    r"|\]\([^)\n]*\)"  # the target of [text](target)
    r"|<[a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*>"  # <https://autolink>
    r"|\b[a-zA-Z][a-zA-Z0-9+.-]*://\S*"  # bare URLs
    r"|%%.*?%%|<!--.*?-->"  # Obsidian and HTML comments on one line
    r"|</?[a-zA-Z][^<>\n]*>"  # an HTML tag and its attributes: style="color: #ccc"
)
_TAG = re.compile(r"(?<!\S)#([\w\-/]+)")
_LINE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]*)*")

_DATE_AT_START = re.compile(
    r"^\s*(\d{4})\s*(?:[-/.]|年)\s*(\d{1,2})\s*(?:[-/.]|月)\s*(\d{1,2})(?:日|号)?(?!\d)"
)
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
BULLET = re.compile(r"^([ \t]*)(?:[-*+]|\d+[.)])[ \t]+(.*)$")
_CHECKBOX = re.compile(r"^\[([ xX])\][ \t]+")
_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
# A labelled date near the top of a note ("date: 2026-09-03", "- 日期：2026年9月3日").
_DATE_LABEL = re.compile(
    r"^[\s>*_\-+]*(?:date|created|published|updated|日期|时间|创建|创建于|创建时间|创建日期"
    r"|发布|发布于|发布时间|发布日期|更新时间|生成时间|写于)[\s*_]*[:：]?[\s*_]*",
    re.IGNORECASE,
)
TEXT_DATE_LINES = 12  # how many lines at the top of a note may carry its date


# HTML blocks (CommonMark 0.31, the kinds a note holds): Obsidian shows them as HTML, so no
# #word inside one is a tag (`<td>background: #1a1a1a</td>`, CSS in a <style> block).
# Kind 1 runs to its closing tag; kind 6 (a block-level element) and kind 7 (a line that is
# one whole tag, which cannot interrupt a paragraph) run to the next blank line.
_HTML_RAW_START = re.compile(r"^ {0,3}<(pre|script|style|textarea)(?:[\s>]|$)", re.IGNORECASE)
_HTML_RAW_END = re.compile(r"</(?:pre|script|style|textarea)>", re.IGNORECASE)
_HTML_BLOCK_START = re.compile(
    r"^ {0,3}</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col"
    r"|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame"
    r"|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav"
    r"|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th"
    r"|thead|title|tr|track|ul)(?:[ \t>]|/>|$)",
    re.IGNORECASE,
)
_HTML_WHOLE_TAG_LINE = re.compile(
    r"^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>]*?)?/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$"
)


class Line(NamedTuple):  # a tuple: one per line of every note, and cheap to define
    number: int  # 1-based line of the file
    text: str  # without the line break
    offset: int  # character offset of the line in the body
    code: bool  # inside a fenced code block (or a fence line)
    html: bool = False  # inside an HTML block (see _HTML_BLOCK_START)


def _fence_after(fence: str | None, text: str) -> tuple[str | None, bool]:
    """(the fence open after the line `text`, is the line code) given the fence open
    before it: a fence is closed by a run of the same character at least as long."""
    match = FENCE.match(text)
    run = (match.group(1) or match.group(2)) if match else ""
    if fence is not None:  # a closing fence carries no info string
        closes = (
            run[:1] == fence[0] and len(run) >= len(fence) and not text[match.end() :].strip()
            if match
            else False
        )
        return (None if closes else fence), True
    if run:
        return run, True
    return None, False


def iter_lines(body: str, body_line: int) -> Iterator[Line]:
    """Every line of `body` with its number, offset and whether it is code.

    Only \\n ends a line (as in editors): str.splitlines would also split at form feeds
    and U+2028 and shift every later line number.

    Every note is read line by line more than once (a first index reads millions of
    lines), so a line is matched against a pattern only when it holds the character the
    pattern starts with: a fence's ` or ~ (inside a fence, the fence's own), an HTML
    block's <."""
    fence: str | None = None
    html: str | None = None  # the open HTML block: "raw" (to its closing tag) or "blank"
    after_text = False  # the line before is a paragraph's (kind 7 cannot interrupt it)
    offset = 0
    number = body_line
    new_line = tuple.__new__  # Line(...) without its Python __new__: one per line
    for raw in body.split("\n"):
        text = raw.rstrip("\r")
        filled = bool(text.strip())
        if fence is not None:
            if fence[0] in text:
                fence, _code = _fence_after(fence, text)
            code = True
        elif "`" in text or "~" in text:
            fence, code = _fence_after(None, text)
        else:
            code = False
        if code:
            html = None
        elif html is None and "<" in text:
            html = _html_block_opened(text, after_text)
        in_html = html is not None
        if in_html and (
            html == "raw" and _HTML_RAW_END.search(text) or html == "blank" and not filled
        ):
            html = None
        after_text = filled and not code and not in_html
        yield new_line(Line, (number, text, offset, code, in_html and filled))
        offset += len(raw) + 1
        number += 1


def _html_block_opened(text: str, after_text: bool) -> str | None:
    """The kind of HTML block the line `text` opens ("raw", "blank") or None."""
    if _HTML_RAW_START.match(text):
        return "raw"
    if _HTML_BLOCK_START.match(text) or (not after_text and _HTML_WHOLE_TAG_LINE.match(text)):
        return "blank"
    return None


# What a note quotes or points at rather than says: lore.ingest.inline's pointers, and
# inline code (only the pointers' three parts that start with "<" can match at the same
# place as each other, so inline code between the groups changes nothing else they match).
_NOT_PROSE = re.compile(IMAGES_LINKS_URLS + r"|(`+).*?(?<!`)\1(?!`)" + TAGS_COMMENTS)


# The extension of a file named in the text ("01-intro.md", "report.pdf"): a link's text is
# often the file's name, and a vault whose index lists its files made "md" its topic.
_FILE_EXTENSION = re.compile(
    r"(?<=\w)\.(?:md|markdown|txt|pdf|png|jpe?g|gif|svg|webp|html?|docx?|xlsx?|pptx?|csv"
    r"|json|ya?ml|toml|zip)\b",
    re.IGNORECASE,
)


def prose(text: str) -> str:
    """What a note says in its own words: `text` without fenced code, images, URLs, link
    targets, inline code and HTML tags (link text stays, wikilinks become their text), and
    without the extensions of the files it names. Keywords and labels come from this:
    `pdf`, `png`, `md` and `include` are not topics."""
    lines = []
    for line in iter_lines(text, 1):
        if not line.code:
            lines.append(_FILE_EXTENSION.sub("", _NOT_PROSE.sub(" ", line.text)))
    return strip_markup("\n".join(lines))


def open_fence(body: str) -> str | None:
    """The code fence still open at the end of `body` (its opening run, e.g. "```"), or
    None: text appended after an unclosed fence would be read as code."""
    fence: str | None = None
    for raw in body.split("\n"):
        fence, _code = _fence_after(fence, raw.rstrip("\r"))
    return fence


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


def line_tags(text: str) -> list[str]:
    """The inline tags of one line of text outside fenced code, as written (no `#`)."""
    if "#" not in text:
        return []
    heading = HEADING.match(text)
    if heading:
        text = heading.group(2)
    text = _NOT_TAG_TEXT.sub(" ", _LINE_PREFIX.sub("", text))
    tags: list[str] = []
    for match in _TAG.finditer(text):
        tag = match.group(1).strip("/")
        if tag and not tag.replace("/", "").isdigit() and "//" not in tag:
            tags.append(tag)
    return tags


def wikilink_targets(text: str) -> list[str]:
    """The note targets of the wikilinks in `text` (`[[#Heading]]` links to no note)."""
    return [t for m in WIKILINK.finditer(text) if (t := m.group(1).strip())]


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def note_link_targets(text: str, folder: str) -> list[str]:
    """The notes the Markdown links of `text` point at (`[text](../other%20note.md#part)`),
    as paths in the vault: resolved from the linking note's `folder` ("" at the top; a
    target starting with "/" from the vault's top), URL-decoded. Links to other files, to
    URLs and out of the vault are not note links."""
    out: list[str] = []
    for match in MD_LINK.finditer(text):
        href = match.group(2).split("#", 1)[0].split("?", 1)[0]
        if not href or _SCHEME.match(href):
            continue
        href = unquote(href)
        if not href.lower().endswith((".md", ".markdown")) or _CONTROL.search(href):
            continue  # not a note; %00 and other control characters name no file either
        joined = href.lstrip("/") if href.startswith("/") else posixpath.join(folder, href)
        path = posixpath.normpath(joined)
        if path != ".." and not path.startswith("../"):
            out.append(path)
    return out


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
    """A front matter or field value → (YYYY-MM-DD or None, the value as text or None).

    Accepts dates and datetimes, and text that starts with a date (2026-09-03, 2026/9/3,
    2026.9.3, 2026年9月3日, an ISO timestamp) or holds one ISO date."""
    if value is None or isinstance(value, bool):
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


def date_from_name(name: str) -> str | None:
    """The first real YYYY-MM-DD date in a file name."""
    for match in _DATE_IN_NAME.finditer(name):
        try:
            return dt.date(*(int(g) for g in match.groups())).isoformat()
        except ValueError:
            continue
    return None


def date_in_text(body: str, lines: Iterable[Line] | None = None) -> str | None:
    """The date a note gives itself near its top: a line that starts with a full date, or a
    labelled one ("date: 2026-09-03", "- 生成时间：2026-06-30 02:11"). Code is skipped.
    `lines`: the body's lines, when the caller has read them (iter_lines)."""
    seen = 0
    for line in iter_lines(body, 1) if lines is None else lines:
        text = line.text.strip()
        if not text or line.code:
            continue
        seen += 1
        if seen > TEXT_DATE_LINES:
            break
        heading = HEADING.match(text)
        if heading:
            text = heading.group(2)
        label = _DATE_LABEL.match(text)
        date, _raw, _rest = leading_date(text[label.end() :] if label else text.lstrip("-*+> "))
        if date is not None:
            return date
    return None
