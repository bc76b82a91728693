"""The name channel: how well the query names a note. A note's names are its title, its
front matter aliases and its file name (lore.derive.fields.note_names); they are the
strongest evidence of what a note is, so a query that is a note's name finds that note
first unless another matches far better.

    name  max over the note's names of  share of the name's words the query holds
                                      × share of the query's words the name holds
          (1.0: the query is the name, word for word, in any order and case; the words
          are the index's tokens, so "State machines" names "state machine"); 1.0 too
          when the query is the note's folder and name ("Minimal theme": Themes/Minimal)

Candidates: the notes whose names hold the query's candidate-bringing terms (FTS5 on the
title column, which holds every name).
"""

from __future__ import annotations

import json

from ..derive.fields import note_names
from ..derive.tokenize import terms
from ..store.sqlite import SqliteStore
from .query import _EN_STOP, _ZH_STOP_CHARS, QueryPlan
from .search import Filters, _filter_sql

# Words a name holds that say nothing about it ("The", "的"): they count on neither side.
_FILLER = _EN_STOP | _ZH_STOP_CHARS


def _words(text: str) -> set[str]:
    return {t for t in terms(text) if t not in _FILLER}


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


def query_words(plan: QueryPlan) -> set[str]:
    return {tok for term in plan.terms for tok in term.tokens} - _FILLER


def name_candidates(store: SqliteStore, plan: QueryPlan, filters: Filters, pool: int) -> list[int]:
    """The best `pool` notes by BM25 of the candidate-bringing terms in their names."""
    generating = plan.generating
    if not generating:
        return []
    query = "title : (" + " OR ".join(t.fts() for t in generating) + ")"
    where, params = _filter_sql(filters)
    rows = store.query(
        "SELECT n.id, bm25(fts, 1.0, 0.0, 0.0, 0.0) AS s FROM fts JOIN notes n"
        f" ON n.id = fts.rowid WHERE fts MATCH ?{where} ORDER BY s, n.path LIMIT ?",
        [query, *params, pool],
    )
    return [int(r[0]) for r in rows]


def name_scores(store: SqliteStore, plan: QueryPlan, ids: list[int]) -> dict[int, float]:
    """The name channel's score of each of these notes (those above 0)."""
    wanted = query_words(plan)
    if not ids or not wanted:
        return {}
    marks = ",".join("?" * len(ids))
    scores: dict[int, float] = {}
    for nid, title, fm, path in store.query(
        f"SELECT id, title, frontmatter, path FROM notes WHERE id IN ({marks})", ids
    ):
        folder = path.rsplit("/", 2)[-2] if "/" in path else ""
        best = max(
            max(name_match(wanted, n), folder_match(wanted, n, folder))
            for n in note_names(title, json.loads(fm), path)
        )
        if best > 0:
            scores[int(nid)] = best
    return scores
