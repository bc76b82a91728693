"""The section channel: how well the best part of a note answers the query.

BM25 over whole notes divides a long note's matches by its length, so a long note that
holds the detail in one section loses to short notes that merely share the words, and to
notes that mention them everywhere. Each note's body is also indexed in parts
(lore.derive.sections: at headings and paragraphs, the note's title in front of
each), and this channel scores a note by BM25 of its best part over the collection of
parts: there, a part that holds the query's words together is short and dense, wherever it
sits in its note. The fts channel then takes the better of the two (lore.retrieve.fuse).

    section  BM25 of the note's best part among the collection of parts (raw)

Candidates: the notes of the best parts; every other candidate is scored on all its parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..store.base import Store
from ..store.query import Filters
from .query import QueryPlan


@dataclass(frozen=True)
class BestSection:
    score: float
    start: int  # the part's span in the body
    end: int


def uses_parts(field_weights: Mapping[str, float]) -> bool:
    """A part is body text read with its note's title: with either field weighed 0
    (`field_weights`), parts would count what the user left out, so none are used."""
    return all(field_weights.get(name, 1.0) > 0 for name in ("title", "body"))


def section_candidates(
    store: Store, plan: QueryPlan, filters: Filters, pool: int, depth: int
) -> tuple[list[int], dict[int, BestSection]]:
    """The best `pool` notes by their best part among the best `depth` parts, and the
    best part of every note seen."""
    if not plan.terms:
        return [], {}
    found = {
        nid: BestSection(*best)
        for nid, best in store.rank_sections(plan.text_query, filters, depth).items()
    }
    ranked = sorted(found, key=lambda n: (-found[n].score, n))
    return ranked[:pool], found


def section_scores(
    store: Store, plan: QueryPlan, ids: list[int], known: dict[int, BestSection]
) -> dict[int, BestSection]:
    """The best part of each of these notes (`known` ones are not asked again)."""
    missing = [n for n in ids if n not in known]
    found = dict(known)
    if missing and plan.terms:
        extra = store.rank_sections(plan.text_query, Filters(), 0, ids=missing)
        found.update({nid: BestSection(*best) for nid, best in extra.items()})
    return {n: found[n] for n in ids if n in found}
