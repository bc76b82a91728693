"""Lexical ranking on PostgreSQL: the Store's search methods over lore.store.pg_lexical
(FTS5's bm25, reproduced over the same token stream); lore.store.search has what both
backends share.

SQLite's GLOB (paths, access rules) becomes an anchored regular expression here
(`glob_regex`): the same patterns let the same paths through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from . import pg_lexical, pg_packs, pg_phrases
from .pg_base import PgBase
from .pg_names import psycopg_sql
from .pg_schema import NOTES, PARTS
from .query import Filters, TextQuery
from .schema import FTS_COLUMNS
from .search import TAG_SOURCES, SearchSql


def glob_regex(pattern: str) -> str:
    """SQLite's GLOB as a PostgreSQL regular expression matching the whole text: `*` any
    run of characters, `?` one, `[...]` a set (`[^...]` its complement, a `]` first in it
    is itself), anything else itself. An unclosed `[` matches nothing, as in SQLite."""
    out = ["^"]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = i + 1
            negate = j < len(pattern) and pattern[j] == "^"
            if negate:
                j += 1
            start = j
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 1
            if j >= len(pattern):
                return "^(?!)"  # never matches
            out.append(_char_set(pattern[start:j], negate))
            i = j
        else:
            out.append(re.escape(c) if not c.isalnum() else c)
        i += 1
    out.append("$")
    return "".join(out)


def _char_set(body: str, negate: bool) -> str:
    """A GLOB set's members as a bracket expression, read as SQLite reads them: a `]`
    first is itself; `a-z` is a range after a character that is itself (a `-` first,
    last or right after a range is itself); a reversed range `z-a` adds nothing to its
    first character."""
    parts: list[str] = []
    prior: str | None = None
    i = 0
    if body.startswith("]"):
        parts.append(_escaped("]"))
        i = 1
    while i < len(body):
        c = body[i]
        if c == "-" and prior is not None and i + 1 < len(body):
            if prior <= body[i + 1]:
                parts.append(f"{_escaped(prior)}-{_escaped(body[i + 1])}")
            prior = None
            i += 2
        else:
            parts.append(_escaped(c))
            prior = c
            i += 1
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _escaped(c: str) -> str:
    return "\\" + c if c in "\\^]-[" else c


def _candidate_filter(
    dialect: PgBase, filters: Filters, notes: str = "SELECT n.id FROM notes n"
) -> tuple[str, dict[str, Any]]:
    """The filters as a condition on pg_lexical's candidates (`s.doc`): the documents
    `notes` selects (a note's id by default; a part's, for the parts) from `notes n`."""
    where, params = dialect.filter_sql(filters)
    if not where:
        return "", {}
    named = {f"f{i}": value for i, value in enumerate(params)}
    counter = iter(range(len(params)))
    sql = re.sub(r"%s", lambda _m: f"%(f{next(counter)})s", psycopg_sql(where[len(" AND ") :]))
    return f"s.doc IN ({notes} WHERE {sql})", named


class PgSearch(SearchSql, PgBase):
    def tag_holders(
        self, keys: Sequence[str], *, derived: bool, limit: int
    ) -> dict[str, list[tuple[int, str]]]:
        """One statement for every tag (a round trip each would be most of a query's time),
        a branch per tag: planned for its own key, a tag no note carries is one index
        lookup (planned for any key, each was a pass over the table)."""
        table, origin = TAG_SOURCES[derived]
        out: dict[str, list[tuple[int, str]]] = {key: [] for key in keys}
        if not out:
            return out
        branch = f"(SELECT ?::text, note_id FROM {table} WHERE tag_key = ?{origin} LIMIT ?)"
        for key, n in self.query(
            " UNION ALL ".join([branch] * len(out)),
            [value for tag in out for value in (tag, tag, limit)],
        ):
            out[str(key)].append((int(n), str(key)))
        return out

    def note_count(self, allow: tuple[str, ...] | None = None) -> int:
        """Notes in the index (that the access rule allows): once per generation of the
        index, which every search asks for. All of them: the full-text statistics' count
        of documents (a note is one, lore.store.pg_postings), which the search's ranking
        reads anyway; counting the notes was a pass over them (3.8 ms at 100,000 notes,
        0.65 s at 300,000 just after a first index, before the server's visibility map is
        made). Those an access rule allows: counted."""
        cache = self.snapshot_cache()
        if allow is None:
            with self._connected():
                return pg_phrases.indexed_size(self.lexical(), NOTES, cache)[0]
        kept = cache.get(("note count", allow)) if cache is not None else None
        if kept is None:
            kept = super().note_count(allow)
            if cache is not None:
                cache.put(("note count", allow), kept)
        return int(kept)

    def _frequencies_within(self, tokens: list[str], allow: tuple[str, ...]) -> dict[str, int]:
        import numpy as np

        ids = {
            str(t): int(i)
            for t, i in self.query(
                "SELECT term, id FROM lex_terms WHERE term = ANY(?)", [list(tokens)]
            )
        }
        postings = pg_packs.term_postings(
            self.lexical(), NOTES, list(ids.values()), self.snapshot_cache()
        )
        every = [p.docs for p in postings.values()]
        held = np.unique(np.concatenate(every)) if every else np.zeros(0, dtype=np.int64)
        where, params = self.allow_sql(allow)
        allowed = np.array(
            [
                n
                for (n,) in self.query(
                    f"SELECT n.id FROM notes n WHERE n.id = ANY(?){where}", [held.tolist(), *params]
                )
            ],
            dtype=np.int64,
        )
        counts = {t: int(np.isin(postings[i].docs, allowed).sum()) for t, i in ids.items()}
        return {t: n for t, n in counts.items() if n}

    def rank(
        self, query: TextQuery, filters: Filters, limit: int, weights: list[float]
    ) -> list[tuple[int, float]]:
        """(note id, BM25 score as a positive number) for the best `limit` notes, ties by
        path."""
        where, params = _candidate_filter(self, filters)
        return pg_lexical.rank(
            self.lexical(),
            pg_lexical.LexicalQuery.of(query),
            weights,
            limit,
            where=where,
            params=params,
            cache=self.snapshot_cache(),
        )

    def rank_sections(
        self, query: TextQuery, filters: Filters, limit: int, ids: list[int] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        """note id -> (BM25 of its best part, the part's span), over the best `limit` parts
        that pass the filters (ties by part id) and every part of the `ids` notes: what
        lore.store.sqlite_search ranks over fts_sections, from the PARTS tables."""
        lexical = pg_lexical.LexicalQuery.of(query._replace(fields=None))
        conn, cache = self.lexical(), self.snapshot_cache()
        where, params = _candidate_filter(
            self, filters, "SELECT p.id FROM sections p JOIN notes n ON n.id = p.note_id"
        )
        spans: dict[int, tuple[int, int, int]] = {}

        def read_spans(where: str, among: list[int]) -> None:
            for pid, nid, start, end in self.query(
                f'SELECT id, note_id, start, "end" FROM sections WHERE {where} = ANY(?)', (among,)
            ):
                spans[int(pid)] = (int(nid), int(start), int(end))

        if ids:  # the spans of every part of these notes: the ones to score
            read_spans("note_id", list(ids))
        ranked, exact = pg_lexical.rank_and_score(
            conn,
            lexical,
            [1.0],
            limit,
            list(spans),
            where=where,
            params=params,
            lx=PARTS,
            cache=cache,
        )
        scored = dict(ranked) | {pid: round(score, 6) for pid, score in exact.items()}
        if missing := [pid for pid in scored if pid not in spans]:
            read_spans("id", missing)
        best: dict[int, tuple[float, int, int]] = {}
        for pid, score in sorted(scored.items()):  # in part order: the first best part wins
            nid, start, end = spans[pid]
            if nid not in best or score > best[nid][0]:
                best[nid] = (score, start, end)
        return best

    def count_matches(self, query: TextQuery, filters: Filters) -> int:
        """Notes the query matches that pass the filters."""
        where, params = _candidate_filter(self, filters)
        plain = pg_lexical.LexicalQuery.of(query, scored=False)
        return pg_lexical.count_matching(
            self.lexical(), plain, where=where, params=params, cache=self.snapshot_cache()
        )

    def field_scores(
        self, query: TextQuery, ids: list[int], weights: list[float]
    ) -> dict[int, dict[str, float]]:
        """Each note's BM25 score with one field's weight alone, per field."""
        lexical = pg_lexical.LexicalQuery.of(query)
        conn, cache = self.lexical(), self.snapshot_cache()
        out: dict[int, dict[str, float]] = {}
        for column, name in enumerate(FTS_COLUMNS):
            alone = [w if j == column else 0.0 for j, w in enumerate(weights)]
            # the notes among ids that match (and only those) are scored
            for nid, score in pg_lexical.scores(conn, lexical, alone, ids, cache=cache).items():
                out.setdefault(nid, {})[name] = round(float(score), 6)
        return {nid: out[nid] for nid in ids if nid in out}

    def holding(self, query: TextQuery) -> set[int]:
        """Ids of the notes that match the query (one pass over its phrases' notes)."""
        plain = pg_lexical.LexicalQuery.of(query, scored=False)
        return set(pg_lexical.matching(self.lexical(), plain, cache=self.snapshot_cache()))

    def name_candidates(self, query: TextQuery, filters: Filters, pool: int) -> list[int]:
        """The best `pool` notes by BM25 of the query in their names (the title field)."""
        where, params = _candidate_filter(self, filters)
        ranked = pg_lexical.rank(
            self.lexical(),
            pg_lexical.LexicalQuery.of(query, scored=False),
            [1.0, 0.0, 0.0, 0.0],
            pool,
            where=where,
            params=params,
            cache=self.snapshot_cache(),
        )
        return [nid for nid, _score in ranked]
