"""What both backends' lexical ranking shares (lore.store.sql_base): a TextQuery as an FTS5
MATCH expression (what SQLite runs and what --explain shows on either backend), counts and
document frequencies, the filters' id checks, and the rows a hit, the name channel, the
tag channel and the nudges read. The ranking itself is each backend's: FTS5's bm25 in
lore.store.sqlite_search, the same bm25 from postings in lore.store.pg_search.

In a MATCH expression every phrase is double-quoted (tokens hold only letters and digits,
so quoting is always safe), and the score-only phrases are ANDed as `(common OR
<every-note token>)`, so FTS5 reads candidates from the rare phrases' lists alone and still
computes BM25 over all of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .query import EVERY_NOTE, Filters, Phrase, TextQuery
from .rows import HitRow, NameRow
from .sql_base import SqlBase


def phrase_match(tokens: Phrase) -> str:
    return '"' + " ".join(tokens) + '"'


def fts_match(query: TextQuery, *, scored: bool = False) -> str:
    """The FTS5 MATCH expression of a query (an empty one matches nothing). `scored`: for
    ranking, each phrase written as many times as it counts (TextQuery.counts); the same
    notes match either way, so counting and --explain use the plain expression."""
    counts = dict(query.counts) if scored else {}

    def any_of(phrases: tuple[Phrase, ...]) -> str:
        return " OR ".join(" OR ".join([phrase_match(p)] * counts.get(p, 1)) for p in phrases)

    match = any_of(query.terms) or '""'
    # NOT before AND: FTS5 (SQLite 3.5x) gives some rows of `(a AND b) NOT c` a bm25 that
    # misses phrase matches (tests/store/test_pg_ranking.py holds it to bm25's definition);
    # `(a NOT c) AND b` matches the same notes and scores them right.
    if query.excluded:
        match = f"({match}) NOT ({' OR '.join(phrase_match(p) for p in query.excluded)})"
    if query.score_only:
        common = any_of(query.score_only)
        match = f'({match}) AND ({common} OR "{EVERY_NOTE}")'
    if query.fields:
        names = query.fields[0] if len(query.fields) == 1 else "{" + " ".join(query.fields) + "}"
        match = f"{names} : ({match})"
    return match


class PendingParts:
    """A part ranking begun (Store.start_sections): `finish(ids)` gives what
    rank_sections(query, filters, limit, ids) does, once the other channels' candidates
    `ids` are known."""

    def __init__(self, finish: Callable[[list[int]], dict[int, tuple[float, int, int]]]) -> None:
        self.finish = finish


# (table, condition) of the author's tags and of the LLM's
TAG_SOURCES = {False: ("tags", ""), True: ("derived_tags", " AND origin = 'llm'")}


class SearchSql(SqlBase):
    def describe(self, query: TextQuery) -> str:
        return fts_match(query).replace(f'"{EVERY_NOTE}"', "<every note>")

    def rank_sections(
        self, query: TextQuery, filters: Filters, limit: int, ids: list[int] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        raise NotImplementedError

    def start_sections(self, query: TextQuery, filters: Filters, limit: int) -> PendingParts:
        """rank_sections begun before the ids are known: here, all of it runs at the end."""
        return PendingParts(lambda ids: self.rank_sections(query, filters, limit, ids))

    # -- counts and frequencies (per backend: within access rules) ---------------------------

    def _frequencies_within(self, tokens: list[str], allow: tuple[str, ...]) -> dict[str, int]:
        """token → notes the rules allow that hold it (tokens no such note holds left out)."""
        raise NotImplementedError

    def note_count(self, allow: tuple[str, ...] | None = None) -> int:
        if allow is None:
            return int(self._scalar("SELECT count(*) FROM notes"))
        where, params = self.allow_sql(allow)
        return int(self._scalar(f"SELECT count(*) FROM notes n WHERE {self.TRUE}{where}", params))

    def document_frequencies(
        self, tokens: list[str], allow: tuple[str, ...] | None = None
    ) -> dict[str, int]:
        if allow is not None:
            return self._frequencies_within(tokens, allow)
        out: dict[str, int] = {}
        for chunk in self.chunks(tokens):
            where, params = self.in_list("term", chunk)
            out.update(
                (str(t), int(n))
                for t, n in self.query(f"SELECT term, df FROM term_df WHERE {where}", params)
            )
        return out

    def keep_filtered(self, ids: list[int], filters: Filters) -> list[int]:
        if not ids or not filters.active:
            return ids
        where, params = self.filter_sql(filters)
        among, among_params = self.in_ids("n.id", ids)
        ok = {
            int(r[0])
            for r in self.query(
                f"SELECT n.id FROM notes n WHERE {among}{where}", [*among_params, *params]
            )
        }
        return [i for i in ids if i in ok]

    # -- rows of hits and channels ------------------------------------------------------------

    def _llm_fields(self, ids: list[int]) -> dict[int, tuple[list[str], str | None]]:
        """note id → (its claims, its category: the author's, else the model's) for notes
        with either (lore.store.note_llm)."""
        from .note_llm import fields_of

        return {
            nid: ([c["text"] for c in shown.claims], shown.category)
            for nid, shown in fields_of(self, ids).items()
        }

    def hit_rows(self, ids: list[int]) -> dict[int, HitRow]:
        if not ids:
            return {}
        tags: dict[int, list[str]] = {}
        among, params = self.in_ids("note_id", ids)
        for nid, tag in self.query(
            f"SELECT note_id, tag FROM tags WHERE {among} ORDER BY position", params
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        fields = self._llm_fields(ids)
        rows: dict[int, HitRow] = {}
        among, params = self.in_ids("id", ids)
        for nid, path, title, date, fm_json, headings_json, body, body_line in self.query(
            "SELECT id, path, title, date, frontmatter, headings, body, body_line"
            f" FROM notes WHERE {among}",
            params,
        ):
            claims, category = fields.get(int(nid), ([], None))
            rows[int(nid)] = HitRow(
                int(nid),
                str(path),
                str(title),
                date,
                json.loads(fm_json),
                [(h[0], h[1], h[2], h[3]) for h in json.loads(headings_json)],
                str(body),
                int(body_line),
                tags.get(int(nid), []),
                claims,
                category,
            )
        return rows

    def paths_of(self, ids: list[int]) -> dict[int, str]:
        among, params = self.in_ids("id", ids)
        return {
            int(n): str(p)
            for n, p in self.query(f"SELECT id, path FROM notes WHERE {among}", params)
        }

    def name_rows(self, ids: list[int]) -> list[NameRow]:
        among, params = self.in_ids("id", ids)
        return [
            NameRow(int(nid), str(title), json.loads(fm), str(path))
            for nid, title, fm, path in self.query(
                f"SELECT id, title, frontmatter, path FROM notes WHERE {among}", params
            )
        ]

    def tag_holders(
        self, keys: Sequence[str], *, derived: bool, limit: int
    ) -> dict[str, list[tuple[int, str]]]:
        table, origin = TAG_SOURCES[derived]
        return {
            key: [
                (int(n), str(k))
                for n, k in self.query(
                    f"SELECT note_id, tag_key FROM {table} WHERE tag_key = ?{origin} LIMIT ?",
                    [key, limit],
                )
            ]
            for key in keys
        }

    def tag_holders_among(
        self, keys: list[str], ids: list[int], *, derived: bool
    ) -> list[tuple[int, str]]:
        table, origin = TAG_SOURCES[derived]
        tagged, params = self.in_list("tag_key", keys)
        among, among_params = self.in_ids("note_id", ids)
        return [
            (int(n), str(k))
            for n, k in self.query(
                f"SELECT note_id, tag_key FROM {table} WHERE {tagged}{origin} AND {among}",
                [*params, *among_params],
            )
        ]

    def nudge_rows(self, ids: list[int]) -> list[tuple[int, Any, Any]]:
        among, params = self.in_ids("id", ids)
        return [
            (int(i), p, d)
            for i, p, d in self.query(f"SELECT id, priority, date FROM notes WHERE {among}", params)
        ]
