"""The section channel: how well the best part of a note answers the query.

BM25 over whole notes divides a long note's matches by its length, so a long note that
holds the detail in one section loses to short notes that merely share the words, and to
notes that mention them everywhere. Each note's body is also indexed in parts
(lore.derive.sections: at headings and paragraphs, the note's title in front of
each), and this channel scores a note by BM25 of its best part over the collection of
parts: there, a part that holds the query's words together is short and dense, wherever it
sits in its note. The fts channel then takes the better of the two (lore.retrieve.fuse).

    section  BM25 of the note's best part among the collection of parts (raw)

A part is ranked by the query's terms that bring candidates (QueryPlan.generating), not by
the common ones that only score the candidates: a term most notes hold (a character such as
器, a word such as 时间) says little about which note answers, and the whole note's BM25
gives it little weight, but among short parts it is rare, so a short part dense in common
characters outscored the parts holding the query's rare words (for "DNF 包管理器用法", a
part about singleton managers: 55 against the DNF guide's 43; 25 as a whole note). The
whole note's BM25 still counts every term. bench.realvault, mode4 MRR@10 of mynote's
queries (all / known-item / topic / mixed / deep) with the common terms scoring parts:
0.790 / 0.922 / 0.546 / 0.917 / 0.807; without: 0.802 / 0.944 / 0.539 / 0.917 / 0.842
(obsidian-hub level: its short queries have few common terms). Measured and left: the
notes' IDF for parts (deep 0.855, mixed 0.804), half notes' and half parts' IDF (mixed
0.892, topic 0.536), every common term at half weight in parts (topic 0.531), and leaving
out every term the pruning calls common, also those it lets bring candidates (mixed 0.867).

Candidates: the notes of the best parts; every other candidate is scored on all its parts,
in the same pass.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from ..ingest.inline import strip_markup
from ..store.query import Filters, TextQuery
from .query import QueryPlan

if TYPE_CHECKING:  # the store's Protocol: annotations only (a search does not import it)
    from ..store.base import Store
    from ..store.search import PendingParts


class BestSection(NamedTuple):  # a tuple: a search ranks hundreds of parts
    score: float
    start: int  # the part's span in the body
    end: int


def uses_parts(field_weights: Mapping[str, float]) -> bool:
    """A part is body text read with its note's title: with either field weighed 0
    (`field_weights`), parts would count what the user left out, so none are used."""
    return all(field_weights.get(name, 1.0) > 0 for name in ("title", "body"))


def part_query(plan: QueryPlan) -> TextQuery:
    """The plan as parts are ranked by: its candidate-bringing terms, counted as the whole
    note's ranking counts them (a backup character at 1/BACKUP_SHARE), without the terms
    that only score."""
    return plan.text_query._replace(score_only=())


class StartedParts(NamedTuple):
    query: TextQuery  # the parts' query it was begun with
    pending: PendingParts


def start_sections(
    store: Store, plan: QueryPlan, filters: Filters, depth: int
) -> StartedParts | None:
    """The part ranking begun before the other channels bring their candidates (the
    store may rank the parts meanwhile: lore.store.sqlite_parts); best_sections ends it."""
    if not plan.generating:
        return None
    query = part_query(plan)
    return StartedParts(query, store.start_sections(query, filters, depth))


def best_sections(
    store: Store,
    plan: QueryPlan,
    filters: Filters,
    pool: int,
    depth: int,
    among: list[int],
    started: StartedParts | None = None,
) -> tuple[list[int], dict[int, BestSection]]:
    """The best `pool` notes by their best part among the best `depth` parts, and the best
    part of each of those notes and of the `among` notes (one pass over the parts).
    `started`: the ranking begun for this plan, used unless the plan was widened since."""
    if not plan.generating:
        return [], {}
    query = part_query(plan)
    if started is not None and started.query == query:
        best = started.pending.finish(among)
    else:
        best = store.rank_sections(query, filters, depth, among)
    found = {nid: BestSection(*part) for nid, part in best.items()}
    ranked = sorted(found, key=lambda n: (-found[n].score, n))
    return ranked[:pool], found


def part_heading(headings: list[tuple[int, str, int, int]], start: int) -> str | None:
    """The heading a part sits under (None before the first): a part opens at a heading or
    runs on from the one above it (lore.derive.sections). `headings`: (level, text,
    offset, line)."""
    at = bisect_right([h[2] for h in headings], start) - 1
    return (strip_markup(headings[at][1]) or headings[at][1]) if at >= 0 else None
