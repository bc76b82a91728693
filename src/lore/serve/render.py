"""A note's Markdown as safe HTML: markdown-it-py with raw HTML shown as text (a note's
`<script>` is never run), links limited to http(s), mailto and the vault's own notes,
images not loaded (a note cannot make the browser call anywhere; the CSP also forbids it),
headings with ids to link to, `[[wikilinks]]` resolved to the notes they name (for this
caller), Obsidian comments (`%%…%%`) shown dimmed, and the query's words marked.

    html, toc = render_note(body, links={"张三": "entities/张三.md"}, query="去重")
"""

from __future__ import annotations

import html as htmlmod
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from ..memory.markdown import slug, split_heading
from ..retrieve.query import QueryPlan, plan
from ..retrieve.snippet import find_matches

_WIKI = re.compile(r"\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\|([^\[\]\n]*))?\]\]")
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_COMMENT = re.compile(r"%%(.*?)%%", re.S)


def anchor_of(heading: str) -> str:
    """The id a heading gets on the note page: its explicit {#id}, else its slug."""
    title, explicit = split_heading(heading.strip())
    return explicit or slug(title) or "section"


def note_href(path: str, heading: str | None = None, query: str | None = None) -> str:
    """The note page's URL, at a heading, with the words to mark."""
    url = "/note/" + quote(path, safe="/")
    if query:
        url += "?q=" + quote(query, safe="")
    return url + ("#" + quote(anchor_of(heading), safe="") if heading else "")


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    if not state.src.startswith("[[", state.pos):
        return False
    match = _WIKI.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {
            "target": match.group(1).strip(),
            "anchor": (match.group(2) or "").strip() or None,
            "shown": (match.group(3) or "").strip(),
        }
    state.pos = match.end()
    return True


def _comment_rule(state: StateInline, silent: bool) -> bool:
    """An Obsidian comment, `%%…%%` within one paragraph: hidden in Obsidian's reading
    view, kept here (a hit's snippet may point into it) but set apart."""
    if not state.src.startswith("%%", state.pos):
        return False
    match = _COMMENT.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        state.push("obsidian_comment", "", 0).content = match.group(1)
    state.pos = match.end()
    return True


def marker(query: str | None) -> Callable[[str], str]:
    """text → escaped HTML with the query's terms in <mark> (the same matching as the
    search snippets: CJK words and characters, Latin words, ids)."""
    query_plan = plan(query) if query and query.strip() else None
    if query_plan is not None:
        # Single CJK characters find notes, but marking each one all over a page is noise:
        # the page marks the words (and a character only when the query is no more).
        words = [t for t in query_plan.terms if t.kind != "cjk_char"]
        query_plan = QueryPlan(query_plan.text, words or query_plan.terms)

    def mark(text: str) -> str:
        if query_plan is None or not query_plan.terms:
            return htmlmod.escape(text)
        merged: list[list[int]] = []
        for start, end in sorted((m.start, m.end) for m in find_matches(text, query_plan)):
            if merged and start <= merged[-1][1]:  # overlapping or touching: one mark
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        out, at = [], 0
        for start, end in merged:
            out.append(htmlmod.escape(text[at:start]))
            out.append(f"<mark>{htmlmod.escape(text[start:end])}</mark>")
            at = end
        out.append(htmlmod.escape(text[at:]))
        return "".join(out)

    return mark


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:  # noqa: N802 - markdown-it's name
        """http(s), mailto and links inside the vault; never javascript:, data:, …"""
        text = url.strip().lower()
        if text.startswith(_SAFE_SCHEMES):
            return True
        return ":" not in text.split("/", 1)[0].split("#", 1)[0]


def _local(href: str, here: str, links: Mapping[str, str | None]) -> str:
    """A relative link of a note, as a link to the note it names (or nowhere)."""
    target, _, anchor = href.partition("#")
    if not target:
        return href
    found = links.get(target) or links.get(re.sub(r"\.md$", "", target))
    if found is None:
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(here), unquote(target)))
        if joined.startswith(("../", "/")) or joined in ("..", "."):
            return "#"
        found = joined
    return note_href(found, anchor or None)


def _md(
    links: Mapping[str, str | None], mark: Callable[[str], str], toc: list[Any], here: str
) -> MarkdownIt:
    md = _SafeMarkdown("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("emphasis", "obsidian_comment", _comment_rule)
    used: dict[str, int] = {}

    def wikilink(_r: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        meta = tokens[idx].meta
        shown = meta["shown"] or meta["target"] + (f"#{meta['anchor']}" if meta["anchor"] else "")
        path = links.get(meta["target"])
        if path is None:
            return f'<span class="wikilink dangling" title="not found">{mark(shown)}</span>'
        return f'<a class="wikilink" href="{note_href(path, meta["anchor"])}">{mark(shown)}</a>'

    def comment(_r: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return f'<span class="comment">%%{mark(tokens[idx].content)}%%</span>'

    def text(_r: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return mark(tokens[idx].content)

    def heading_open(_r: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        inline = tokens[idx + 1]
        title, _explicit = split_heading(inline.content)
        anchor = anchor_of(inline.content)
        n = used.get(anchor, 0)
        used[anchor] = n + 1
        anchor = anchor if n == 0 else f"{anchor}-{n}"
        toc.append((int(tokens[idx].tag[1]), title, anchor))
        tag = tokens[idx].tag
        return (
            f'<{tag} id="{htmlmod.escape(anchor)}"><a class="anchor" href="#{quote(anchor)}">#</a> '
        )

    def image(_r: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = "".join(c.content for c in (token.children or [])) or "image"
        src = str(token.attrGet("src") or "")
        return f'<span class="image">[{mark(alt)}: {htmlmod.escape(src)}]</span>'

    def link_open(_r: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        href = str(tokens[idx].attrGet("href") or "")
        if "://" not in href and not href.startswith(("mailto:", "#")) and href:
            href = _local(href, here, links)
        rel = ' rel="noopener noreferrer nofollow"' if "://" in href else ""
        return f'<a href="{htmlmod.escape(href)}"{rel}>'

    md.add_render_rule("wikilink", wikilink)
    md.add_render_rule("text", text)
    md.add_render_rule("obsidian_comment", comment)
    md.add_render_rule("heading_open", heading_open)
    md.add_render_rule("image", image)
    md.add_render_rule("link_open", link_open)
    return md


def render_note(
    body: str, *, here: str, links: Mapping[str, str | None], query: str | None = None
) -> tuple[str, list[tuple[int, str, str]]]:
    """(the body of the note at `here` as HTML, its headings as (level, text, anchor))."""
    toc: list[tuple[int, str, str]] = []
    html = _md(links, marker(query), toc, here).render(body)
    return html, toc


def snippet_html(snippet: str, markers: tuple[str, str]) -> str:
    """A hit's snippet (matches between the highlight markers) as HTML with <mark>."""
    opening, closing = markers
    out = []
    for i, part in enumerate(snippet.split(opening)):
        if i == 0:
            out.append(htmlmod.escape(part))
            continue
        inside, _, rest = part.partition(closing)
        out.append(f"<mark>{htmlmod.escape(inside)}</mark>{htmlmod.escape(rest)}")
    return "".join(out)
