"""Evidence for a hit: the best window of the original text, its highlights, its heading.

The snippet is cut from the note as written (never rebuilt from tokens): the window holding
the most distinct query terms wins, earlier windows win ties, and matched spans are wrapped
in the highlight markers.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

from ..derive.tokenize import has_cjk, wanted_spans
from ..ingest.inline import COMMENT, pointer_spans, strip_markup
from .query import QueryPlan, QueryTerm

SCAN_LIMIT_CHARS = 300_000  # past this, a giant note's snippet comes from its head
_WEIGHTS = {"cjk_char": 1.0, "word": 4.0, "phrase": 6.0, "cjk_word": 3.0}
_WS = re.compile(r"\s+")
# What may stand between two tokens of a phrase inside one highlight: "kernel module",
# "e-mail", "**粗体**中文". Anything else (a line end, 。，: ( ...) parts the highlight.
_JOINS = re.compile(r"[ \t\-'’_./*~`]*")
# Markdown that only adds noise to a one-line snippet: heading and quote marks at the
# start of a line. Matched against the whole body, so "^" means a real line start.
_LINE_MARKUP = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?)", re.MULTILINE)


class Match(NamedTuple):  # a tuple: a note of a million matches makes a million of them
    start: int
    end: int
    term: QueryTerm


class Evidence(NamedTuple):  # a tuple: cheaper for a cold process than a dataclass
    snippet: str
    heading: str | None
    line: int
    matched: list[QueryTerm]


def find_matches(text: str, plan: QueryPlan) -> list[Match]:
    """Every occurrence of a plan term in `text`, as character spans of the original text.
    Only the tokens that are some term's are looked at (wanted_spans): a phrase matches
    where its tokens stand at consecutive positions of the text's stream. A phrase whose
    tokens a line end or a punctuation mark parts (进程。\n- 调度 for 进程调度: the index
    finds it, as FTS5 does) is one match a piece, so that no highlight spans the break."""
    by_first: dict[str, list[QueryTerm]] = {}
    for term in plan.terms:
        by_first.setdefault(term.tokens[0], []).append(term)
    wanted = frozenset(tok for term in plan.terms for tok in term.tokens)
    found = wanted_spans(text[:SCAN_LIMIT_CHARS], wanted, with_alternatives=True)
    at = {position: (token, start, end) for position, token, start, end in found}
    matches: list[Match] = []
    for position, token, start, end in found:
        for term in by_first.get(token, ()):
            pieces: list[Match] = []
            piece, last = start, end
            for k, want in enumerate(term.tokens[1:], 1):
                got = at.get(position + k)
                if got is None or got[0] != want:
                    break
                if got[1] > last and not _JOINS.fullmatch(text, last, got[1]):
                    pieces.append(Match(piece, last, term))
                    piece = got[1]
                last = got[2]
            else:
                matches += pieces
                matches.append(Match(piece, last, term))
    return matches


def _slots(matches: list[Match]) -> tuple[list[int], list[float]]:
    """(for each match, the number of its term; each term's weight). A term is hashed once
    per distinct object, not once per match: a note of a million matches stays fast."""
    by_id: dict[int, int] = {}
    by_term: dict[QueryTerm, int] = {}
    weights: list[float] = []
    keys: list[int] = []
    for match in matches:
        key = by_id.get(id(match.term))
        if key is None:
            key = by_term.setdefault(match.term, len(by_term))
            if key == len(weights):
                weights.append(_WEIGHTS.get(match.term.kind, 1.0) * len(match.term.tokens))
            by_id[id(match.term)] = key
        keys.append(key)
    return keys, weights


def _best_window(matches: list[Match], width: int) -> tuple[int, int]:
    """Indices [lo, hi) into `matches` (sorted by start) of the best window: the one whose
    distinct terms weigh most. One pass with a count per term in the window, so a note of
    a million repeated matches costs linear time."""
    keys, weights = _slots(matches)
    starts = [m.start for m in matches]
    ends = [m.end for m in matches]
    in_window = [0] * len(weights)
    best = (-1.0, 0, 0)
    score = 0.0
    hi = 0
    total = len(matches)
    for lo in range(total):
        hi = max(hi, lo)
        # A window holds at least the match it starts at, even one wider than `width` (a
        # long token): it is clipped when rendered.
        while hi < total and (hi == lo or ends[hi] - starts[lo] <= width):
            key = keys[hi]
            if not in_window[key]:
                score += weights[key]
            in_window[key] += 1
            hi += 1
        if score > best[0]:
            best = (score, lo, hi)
        if hi > lo:  # matches[lo] leaves the window
            key = keys[lo]
            in_window[key] -= 1
            if not in_window[key]:
                score -= weights[key]
    return best[1], best[2]


def _said(body: str, matches: list[Match]) -> list[Match]:
    """`matches` (sorted) without those inside an image, a link target, a URL or an HTML
    tag whose term the note also says in its text: the evidence is where the note says a
    word, not the badge URLs above it. A term found only there still counts."""
    spans = pointer_spans(body[:SCAN_LIMIT_CHARS])
    if not spans:
        return matches
    starts = [start for start, _end in spans]

    def pointed(match: Match) -> bool:
        at = bisect_right(starts, match.start) - 1
        return at >= 0 and match.start < spans[at][1]

    marked = [(m, pointed(m)) for m in matches]
    said = {id(m.term) for m, pointing in marked if not pointing}
    return [m for m, pointing in marked if not pointing or id(m.term) not in said]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _flat(text: str) -> str:
    return _WS.sub(" ", text)


def _markup_free(
    body: str, start: int, end: int, highlights: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The spans of body[start:end] left once line-start markup and the comments that hold
    no highlight are cut out (a comment is hidden when the note is read: "%% Do not edit
    anything above this line %%" is no evidence, unless the query's word is in it)."""
    cuts = [mark.span() for mark in _LINE_MARKUP.finditer(body, start, end)]
    line_end = body.find("\n", end)  # a comment the window cuts off is still one
    cuts += [
        (max(comment.start(), start), min(comment.end(), end))
        for comment in COMMENT.finditer(
            body, body.rfind("\n", 0, start) + 1, len(body) if line_end < 0 else line_end
        )
        if comment.end() > start and comment.start() < end
        if not any(
            h_start < comment.end() and h_end > comment.start() for h_start, h_end in highlights
        )
    ]
    spans: list[tuple[int, int]] = []
    cursor = start
    for cut_start, cut_end in sorted(cuts):
        if cut_start > cursor:
            spans.append((cursor, cut_start))
        cursor = max(cursor, cut_end)
    if cursor < end:
        spans.append((cursor, end))
    return spans


def _render(
    body: str, start: int, end: int, highlights: list[tuple[int, int]], markers: tuple[str, str]
) -> str:
    """body[start:end] without line-start markup, highlights wrapped in the markers."""
    out: list[str] = []
    for span_start, span_end in _markup_free(body, start, end, highlights):
        cursor = span_start
        for h_start, h_end in highlights:
            if h_end <= cursor or h_start >= span_end:
                continue
            h_start, h_end = max(h_start, cursor), min(h_end, span_end)
            out.append(body[cursor:h_start])
            out.append(markers[0] + body[h_start:h_end] + markers[1])
            cursor = h_end
        out.append(body[cursor:span_end])
    return "".join(out)


def build_evidence(
    body: str,
    body_line: int,
    headings: list[tuple[int, str, int, int]],
    plan: QueryPlan,
    *,
    markers: tuple[str, str] = ("«", "»"),
    width: int | None = None,
    matches: list[Match] | None = None,
) -> Evidence:
    """Cut the snippet for one note body. `headings` are (level, text, offset, line);
    `matches`: find_matches(body, plan) when the caller has them already."""
    if width is None:
        width = 90 if has_cjk(body[:2000]) else 200
    if matches is None:
        matches = find_matches(body, plan)
    matches = sorted(matches, key=lambda m: (m.start, m.end))
    distinct = {id(m.term): m.term for m in matches}.values()  # hashed once each
    matched_terms = sorted(set(distinct), key=plan.terms.index)
    if not matches:
        return head_evidence(body, body_line, markers=markers, width=width)

    matches = _said(body, matches)
    backup = plan.backup_chars
    # A match in a first heading that repeats the title says nothing the title does not:
    # look for the evidence in the text below it when there is any, unless all there is
    # below are lone characters backing up a word the heading holds whole (读 of 读书, for a
    # note titled 学习笔记: the heading is the better evidence).
    if headings and headings[0][0] == 1 and headings[0][2] < 3:
        heading_end = body.find("\n", headings[0][2])
        below = [m for m in matches if heading_end >= 0 and m.start > heading_end]
        if below and (
            any(m.term not in backup for m in below) or all(m.term in backup for m in matches)
        ):
            matches = below
    lo, hi = _best_window(matches, width)
    window = matches[lo:hi]
    first, last = window[0].start, min(max(m.end for m in window), window[0].start + width)
    slack = max(0, width - (last - first))
    start = max(0, first - slack // 3)
    # Start at a line or sentence boundary when one is near.
    boundary = max(body.rfind("\n", start, first), body.rfind("。", start, first))
    if boundary >= 0:
        start = boundary + 1
    end = min(len(body), max(last, start + width))
    # A character of a query word that stands alone ("消" of 消息, for 消费者) backs the
    # word up in the ranking; next to the word itself its highlight is only noise.
    if any(m.term not in backup for m in window):
        window = [m for m in window if m.term not in backup]
    spans = _merge([(max(m.start, start), min(m.end, end)) for m in window if m.start < end])
    snippet = _flat(_render(body, start, end, spans, markers)).strip()
    if start > 0:
        snippet = "…" + snippet
    if end < len(body.rstrip()):
        snippet += "…"

    offsets = [h[2] for h in headings]
    at = bisect_right(offsets, first) - 1
    heading = (strip_markup(headings[at][1]) or headings[at][1]) if at >= 0 else None
    line = body_line + body.count("\n", 0, first)
    return Evidence(snippet, heading, line, matched_terms)


def head_evidence(
    body: str, body_line: int, *, markers: tuple[str, str] = ("«", "»"), width: int | None = None
) -> Evidence:
    """The head of the body, without looking for the query's words: the snippet of a note
    with no match in its text, and of every hit of a query out of time (lore.retrieve.budget)."""
    if width is None:
        width = 90 if has_cjk(body[:2000]) else 200
    head = body.strip()
    lead = body.find(head[:1]) if head else 0
    snippet = _flat(_render(head, 0, min(width, len(head)), [], markers)).strip()
    if len(head) > width:
        snippet += "…"
    return Evidence(snippet, None, body_line + body.count("\n", 0, max(lead, 0)), [])


def matched_in(text: str, plan: QueryPlan) -> set[QueryTerm]:
    return {m.term for m in find_matches(text, plan)}


def folded_matches(text: str, plan: QueryPlan, limit: int = 4) -> list[str]:
    """The query's CJK words that match `text` written another way ("数据库 ≈ 數據庫",
    "软件 ≈ 軟體"): the query's own spelling against the note's, for --explain."""
    out: dict[str, None] = {}
    for m in find_matches(text, plan):
        if m.term.kind != "cjk_word":
            continue
        written = text[m.start : m.end]
        asked = m.term.surface or m.term.text
        if written != asked:
            out.setdefault(f"{asked} ≈ {written}")
            if len(out) == limit:
                break
    return list(out)
