"""Search through memory: the memory-path ranking (what every `Vault.search` is scoped by,
the access rules and alias expansion, is lore.memory.scope).

- `memory_hits` is L2 of `lookup` and the evidence of `context`: hits are cut into the
  entries they sit in (a daily note's sections and items, the core file's lines), each
  score is weighed by proximity (how much of the question one passage of the entry holds:
  a line, a list item, a wrapped sentence), then by activity decay and by trust.

Proximity is the memory path's own relevance evidence: the index scores a note by its words
wherever they stand, so a transcript that names a person in one turn and a topic in another
ranks with the one where the person decided the topic. An entry whose best passage holds
the whole question keeps its index score; one whose question words never meet in a passage
keeps half (PROXIMITY_FLOOR), so the index's relevance still counts.
"""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any

from ..model import Hit, SearchResult
from ..retrieve.query import QueryPlan, QueryTerm, plan
from ..retrieve.snippet import SCAN_LIMIT_CHARS, build_evidence, find_matches
from .access import Access
from .decay import decay_weight, trust_weight
from .registry import Registry
from .scope import expand_query, named_entities
from .settings import MemorySettings

if TYPE_CHECKING:
    # The memory result types are lookup's alone.
    from .model import MemoryHit
    from .services import MemoryServices

_TERM_WEIGHTS = {"cjk_char": 1.0, "word": 4.0, "phrase": 6.0, "cjk_word": 3.0}
PROXIMITY_FLOOR = 0.5  # the share of its score an entry keeps when no passage holds the question
# A line starts a new passage after a blank line, a heading or a line ending a sentence,
# and when it starts a block of its own (list item, heading, quote, table row, a speaker's
# turn "name: ..."); else it continues the sentence a hard-wrapped paragraph carries over.
_BLOCK_START = re.compile(
    r"^\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}\s|>|\||(?:\*\*)?[\w .\-@]{1,24}?(?:\*\*)?\s*[:：]\s)"
)
_HEADING = re.compile(r"^\s*#{1,6}\s")
_SENTENCE_END = re.compile(r"(?:[。！？!?;；:：.][)）\]」』\"'”’*_`]*\s*|\s{2,})$")


def passages(text: str) -> list[int]:
    """Start offsets of the passages of `text`: lines, list items, wrapped sentences."""
    starts: list[int] = []
    offset = 0
    joinable = False
    for line in text.split("\n"):
        if not line.strip():
            joinable = False
        else:
            if not joinable or _BLOCK_START.match(line):
                starts.append(offset)
            joinable = not (_SENTENCE_END.search(line) or _HEADING.match(line))
        offset += len(line) + 1
    return starts


class Coverage:
    """How much of a question a note covers: each significant term of the query (words,
    multi-character CJK words) counts once, and each entity the query names counts once,
    matched by any of its spellings. Lookup keeps notes covering at least MIN_COVERAGE, so
    a note sharing one stray character with the question is not offered as an answer."""

    MIN_COVERAGE = 1 / 3

    def __init__(self, query: str, registry: Registry) -> None:
        rest = query
        self.groups: list[list[QueryTerm]] = []
        for spelling, keys in named_entities(query, registry):
            rest = rest.replace(spelling, " ", 1)
            spellings = [s for k in keys for s in registry.entities[k].spellings]
            self.groups.append([t for s in spellings for t in plan(f'"{s}"').terms])
        rest_plan = plan(rest)
        self.terms = [t for t in rest_plan.terms if t.kind != "cjk_char"] or (
            [] if self.groups else rest_plan.terms
        )
        merged = list(dict.fromkeys([*self.terms, *(t for g in self.groups for t in g)]))
        self.plan = QueryPlan(text=query, terms=merged)

    @property
    def total(self) -> int:
        return len(self.terms) + len(self.groups)

    def share(self, text: str) -> float:
        if not self.total:
            return 1.0
        return self._share({m.term for m in find_matches(text, self.plan)})

    def _share(self, found: set[QueryTerm]) -> float:
        matched = sum(1 for t in self.terms if t in found)
        matched += sum(1 for group in self.groups if found.intersection(group))
        return matched / self.total

    def best_passage(self, text: str) -> float:
        """The largest share of the question that one passage of `text` holds."""
        if not self.total:
            return 1.0
        text = text[:SCAN_LIMIT_CHARS]  # as far as find_matches reads
        starts = passages(text)
        found: dict[int, set[QueryTerm]] = {}
        for match in find_matches(text, self.plan):
            found.setdefault(bisect_right(starts, match.start), set()).add(match.term)
        return max((self._share(terms) for terms in found.values()), default=0.0)

    def proximity(self, text: str) -> float:
        """The factor proximity gives an entry's score: PROXIMITY_FLOOR … 1."""
        return PROXIMITY_FLOOR + (1 - PROXIMITY_FLOOR) * self.best_passage(text)


def _match_weight(text: str, query_plan: Any) -> float:
    terms = {m.term for m in find_matches(text, query_plan)}
    return sum(_TERM_WEIGHTS.get(t.kind, 1.0) * len(t.tokens) for t in terms)


def _note_weight(
    settings: MemorySettings, hit: Hit, today: dt.date, date: str | None = None
) -> float:
    fm = hit.frontmatter
    priority = fm.get("priority")
    return decay_weight(
        settings,
        date or hit.date,
        today,
        pinned=fm.get("pinned") is True,
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
    )


def memory_hits(
    services: MemoryServices,
    query: str,
    *,
    limit: int,
    access: Access,
    registry: Registry,
    settings: MemorySettings,
    today: dt.date,
) -> tuple[list[MemoryHit], SearchResult]:
    """The memory path's L2: entry-level hits weighed by decay and trust, best first."""
    result = services.search(query, limit=2 * limit + 5, principal=access.principal)
    if not result:
        return [], result
    query_plan = plan(expand_query(query, registry))
    coverage = Coverage(query, registry)
    bodies = services.store.note_bodies(sorted({h.path for h in result}))
    weak = {
        h.path
        for h in result
        if h.path in bodies
        and coverage.share(f"{h.title}\n{' '.join(h.tags)}\n{bodies[h.path][0]}")
        < Coverage.MIN_COVERAGE
    }
    by_path: dict[str, list[dict[str, Any]]] = {}
    for entry in services.store.entries(access.globs, paths=sorted({h.path for h in result})):
        by_path.setdefault(entry["path"], []).append(entry)
    cards = {d["path"] for info in registry.entities.values() for d in info.defs}
    markers = services.highlight
    out: list[MemoryHit] = []
    for hit in result:
        if hit.path in weak:
            continue
        entries = by_path.get(hit.path, [])
        scored = [(e, _match_weight(f"{e['heading']}\n{e['text']}", query_plan)) for e in entries]
        scored = [(e, w) for e, w in scored if w > 0]
        if not scored:
            weight = _note_weight(settings, hit, today)
            kind = "entity" if hit.path in cards else "note"
            body = bodies[hit.path][0] if hit.path in bodies else hit.snippet
            near = coverage.proximity(f"{hit.title}\n\n{body}")
            out.append(_memory_hit(hit, hit.score * near * weight, weight, kind=kind))
            continue
        best = max(w for _, w in scored)
        for entry, w in scored:
            decay = decay_weight(
                settings,
                entry["date"] or hit.date,
                today,
                pinned=entry["pinned"] or hit.frontmatter.get("pinned") is True,
                priority=entry["priority"],
            )
            weight = round(decay * trust_weight(entry["trust"]), 6)
            near = coverage.proximity(f"{entry['heading']}\n\n{entry['text']}")
            text = entry["text"] or entry["heading"]
            start = entry["text_line"] if entry["text"] else entry["line"]
            evidence = build_evidence(text, start, [], query_plan, markers=markers)
            out.append(
                _memory_hit(
                    hit,
                    round(hit.score * (w / best) * near * weight, 6),
                    weight,
                    kind=entry["kind"],
                    entry=entry,
                    snippet=evidence.snippet,
                    line=evidence.line,
                )
            )
    out.sort(key=lambda h: (-h.score, h.path, h.line))
    return out[:limit], result


def _memory_hit(
    hit: Hit,
    score: float,
    weight: float,
    *,
    kind: str,
    entry: dict[str, Any] | None = None,
    snippet: str | None = None,
    line: int | None = None,
) -> MemoryHit:
    fields = {k: getattr(hit, k) for k in Hit.__dataclass_fields__}
    fields.update(score=round(score, 6))
    if entry is not None:
        fields.update(
            snippet=snippet if snippet is not None else hit.snippet,
            line=line if line is not None else entry["line"],
            heading=entry["heading"] or None,
            date=entry["date"] or hit.date,
        )
    from .model import MemoryHit

    anchor = entry["anchor"] if entry else None
    return MemoryHit(
        **fields,
        anchor=f"{hit.path}#{anchor}" if anchor else None,
        kind=kind,
        status=entry["status"] if entry else None,
        trust=entry["trust"] if entry else None,
        source=(entry["source"] or entry["target"]) if entry else None,
        weight=weight,
    )
