"""The name channel: how well the query names a note. A note's names are its title, its
front matter aliases and its file name (lore.derive.fields.note_names); they are the
strongest evidence of what a note is, so a query that is a note's name finds that note
first unless another matches far better.

    name  max over the note's names of  share of the name's words the query holds
                                      × share of the query's words the name holds
          (1.0: the query is the name, word for word, in any order and case; the words
          are the index's tokens, so "State machines" names "state machine"); 1.0 too
          when the query is the note's folder and name ("Minimal theme": Themes/Minimal);
          a CamelCase name counts as its words too ("JuliaPlots": "julia plot")

    or, when the query spells a name in pinyin ("zhangsan", "zs": lore.retrieve.pinyin),
    0.9 × the same shares (0.5 × for a tag), so a name written out always wins

The query's words include the filler the query plan left out ("为什么", "怎么") when a
candidate's name holds it: then it is a title word, and "为什么要写测试" names the note
titled so, word for word, better than one titled "要写测试", though 为什么 is not searched.
Filler no name holds ("我记得") counts on neither side.

Candidates: the notes whose names hold the query's candidate-bringing terms (FTS5 on the
title column, which holds every name), and those with a pinyin key the query's Latin
words begin.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from ..derive.fields import note_names
from ..derive.tokenize import is_cjk_char, terms
from ..store.query import Filters, TextQuery
from .pinyin import PinyinMatch, best_match, lookup_words, may_spell, pinyin_words
from .query import _EN_STOP, _ZH_STOP_CHARS, QueryPlan

if TYPE_CHECKING:  # the store's Protocol: annotations only (a search does not import it)
    from ..store.base import Store

# Words a name holds that say nothing about it ("The", "的"): they count on neither side.
_FILLER = frozenset(_EN_STOP | _ZH_STOP_CHARS)
_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=65_536)  # a search reads the names of a few hundred candidates
def _words(text: str) -> frozenset[str]:
    return frozenset(t for t in terms(text) if t not in _FILLER)


def name_match(query_words: set[str], name: str) -> float:
    words = _words(name)
    if not words or not query_words:
        return 0.0
    shared = len(words & query_words)
    return round((shared / len(words)) * (shared / len(query_words)), 6)


def folder_match(query_words: set[str], name: str, folder: str) -> float:
    """1.0 when the query is the note's folder and name, word for word ("Minimal theme"
    for Themes/Minimal.md: in a vault sorted by kind the folder says what a note is, and
    people name it so), else 0. Only word for word: a folder word shared with the query
    must not make a name that holds other words ("AI/结对编程" for "AI 编程") as good as a
    title that names the query itself."""
    words = _words(name)
    if not words & query_words:  # a folder alone names no note
        return 0.0
    return 1.0 if name_match(query_words, f"{folder} {name}") == 1.0 else 0.0


def spellings(name: str) -> list[str]:
    """A name, and the same name with its CamelCase humps apart ("JuliaPlots" → "Julia
    Plots"): people search a plugin or a class by the words it is made of."""
    apart = _HUMP.sub(" ", name)
    return [name, apart] if apart != name else [name]


def query_words(plan: QueryPlan) -> set[str]:
    return {tok for term in plan.terms for tok in term.tokens} - _FILLER


def _spelled(plan: QueryPlan) -> list[str]:
    """The query's Latin words as pinyin, English function words left out."""
    return [w for w in pinyin_words(plan.text) if w not in _EN_STOP]


def left_out_words(plan: QueryPlan) -> set[str]:
    """The words of the filler the plan left out (not the stop words names drop too)."""
    return {tok for text in plan.left_out for tok in terms(text)} - _FILLER


def name_candidates(store: Store, plan: QueryPlan, filters: Filters, pool: int) -> list[int]:
    """The best `pool` notes by BM25 of the candidate-bringing terms in their names, then
    those whose pinyin keys the query's Latin words begin (scored by name_scores)."""
    ids: list[int] = []
    if plan.generating:
        query = TextQuery(tuple(t.tokens for t in plan.generating), fields=("title",))
        ids = store.name_candidates(query, filters, pool)
    spelled = [w for w in lookup_words(_spelled(plan)) if may_spell(w)]
    if spelled:
        ids += store.pinyin_candidates(spelled, filters, pool)
    return list(dict.fromkeys(ids))


def name_scores(
    store: Store,
    plan: QueryPlan,
    ids: list[int],
    pinyin: dict[int, PinyinMatch] | None = None,
) -> dict[int, float]:
    """The name channel's score of each of these notes (those above 0). `pinyin` receives
    the notes whose score came from a pinyin spelling of one of their names or tags."""
    wanted = query_words(plan)
    if not ids or not wanted:
        return {}
    rows = [(row, note_names(row.title, row.frontmatter, row.path)) for row in store.name_rows(ids)]
    filler = left_out_words(plan)  # counts where a candidate's name holds it (see above)
    said = wanted | {w for _row, names in rows for n in names for w in _words(n) & filler}
    scores: dict[int, float] = {}
    for row, names in rows:
        folder = row.path.rsplit("/", 2)[-2] if "/" in row.path else ""
        best = max(
            max(name_match(said, n), folder_match(said, n, folder))
            for name in names
            for n in spellings(name)
        )
        if best > 0:
            scores[row.id] = best
    spelled = _spelled(plan)
    # Only when a word may spell a name ("history of the university" spells none): the
    # others spell nothing, though each counts in `total` when one does.
    if any(map(may_spell, spelled)):
        # Every query word counts once: its Latin words as written, its CJK characters.
        total = len(spelled) + sum(1 for w in wanted if is_cjk_char(w[0]))
        for nid, spelt in store.pinyin_names(ids).items():
            found = best_match(spelled, wanted, total, spelt, _FILLER)
            if found is not None and found.score > scores.get(nid, 0.0):
                scores[nid] = found.score
                if pinyin is not None:
                    pinyin[nid] = found
    return scores
