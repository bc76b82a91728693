"""Lexical ranking on PostgreSQL: the Store's search methods over lore.store.pg_lexical
(FTS5's bm25, reproduced over the same token stream), the filters compiled to a WHERE
clause, and the rows a hit, the name channel, the tag channel and the nudges read.

Filters are compiled here and nowhere else. SQLite's GLOB (paths, access rules) becomes an
anchored regular expression (`glob_regex`): the same patterns let the same paths through.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from . import pg_lexical
from .pg_base import PgBase
from .pg_notes import AUTHOR_CATEGORY
from .pg_schema import PARTS
from .query import EVERY_NOTE, Filters, TextQuery
from .rows import HitRow, NameRow
from .schema import FTS_COLUMNS
from .sqlite_search import fts_match

_CURRENT = "l.note_id = n.id AND l.note_hash = n.hash"


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


def _glob(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    if not any(c in path for c in "*?["):
        return path.rstrip("/") + "*" if path.endswith("/") else path + "*"
    return path


def filter_sql(filters: Filters) -> tuple[str, list[Any]]:
    """' AND ...' clauses over `notes n` for the filters, and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    for tag in filters.tags:
        clauses.append(
            "n.id IN (SELECT note_id FROM tags WHERE tag_key = %s OR starts_with(tag_key, %s))"
        )
        params.extend([tag, tag + "/"])
    if filters.path:
        clauses.append("n.path ~ %s")
        params.append(glob_regex(_glob(filters.path)))
    dated = []
    if filters.since:
        dated.append("n.date >= %s")
        params.append(filters.since)
    if filters.until:
        dated.append("n.date <= %s")
        params.append(filters.until)
    if dated:
        window = " AND ".join(dated)
        clauses.append(f"({window} OR n.date IS NULL)" if filters.include_undated else window)
    if filters.allow is not None:
        globs = " OR ".join("n.path ~ %s" for _ in filters.allow) or "false"
        clauses.append(f"({globs})")
        params.extend(glob_regex(g) for g in filters.allow)
    if filters.category:
        clauses.append(
            f"lower(coalesce({AUTHOR_CATEGORY}, (SELECT l.category_key FROM note_llm l"
            f" WHERE {_CURRENT}))) = %s"
        )
        params.append(filters.category)
    return "".join(f" AND {c}" for c in clauses), params


def _candidate_filter(
    filters: Filters, notes: str = "SELECT n.id FROM notes n"
) -> tuple[str, dict[str, Any]]:
    """The filters as a condition on pg_lexical's candidates (`s.doc`): the documents
    `notes` selects (a note's id by default; a part's, for the parts) from `notes n`."""
    where, params = filter_sql(filters)
    if not where:
        return "", {}
    named = {f"f{i}": value for i, value in enumerate(params)}
    counter = iter(range(len(params)))
    sql = re.sub(r"%s", lambda _m: f"%(f{next(counter)})s", where[len(" AND ") :])
    return f"s.doc IN ({notes} WHERE {sql})", named


class PgSearch(PgBase):
    def describe(self, query: TextQuery) -> str:
        """The query as FTS5 would run it (the same phrases are ranked here), for
        --explain (the every-note token spelled out)."""
        return fts_match(query).replace(f'"{EVERY_NOTE}"', "<every note>")

    # -- counts and frequencies --------------------------------------------------------------

    def note_count(self, allow: tuple[str, ...] | None = None) -> int:
        if allow is None:
            return int(self._scalar("SELECT count(*) FROM notes"))
        where, params = filter_sql(Filters(allow=allow))
        return int(self._scalar(f"SELECT count(*) FROM notes n WHERE true{where}", params))

    def document_frequencies(
        self, tokens: list[str], allow: tuple[str, ...] | None = None
    ) -> dict[str, int]:
        """token → notes holding it (any field); within `allow` when given."""
        if allow is None:
            return {
                str(t): int(n)
                for t, n in self.query(
                    "SELECT term, df FROM term_df WHERE term = ANY(%s)", (list(tokens),)
                )
            }
        where, params = filter_sql(Filters(allow=allow))
        return {
            str(t): int(n)
            for t, n in self.query(
                "SELECT t.term, count(*) FROM lex_terms t JOIN lex_postings p ON p.term_id = t.id"
                f" JOIN notes n ON n.id = p.note_id WHERE t.term = ANY(%s){where}"
                " GROUP BY t.term",
                [list(tokens), *params],
            )
        }

    # -- ranking -----------------------------------------------------------------------------

    def _paths(self, ids: list[int]) -> dict[int, str]:
        return {
            int(n): str(p)
            for n, p in self.query("SELECT id, path FROM notes WHERE id = ANY(%s)", (ids,))
        }

    def rank(
        self, query: TextQuery, filters: Filters, limit: int, weights: list[float]
    ) -> list[tuple[int, float]]:
        """(note id, BM25 score as a positive number) for the best `limit` notes, ties by
        path."""
        where, params = _candidate_filter(filters)
        return pg_lexical.rank(
            self.lexical(),
            pg_lexical.LexicalQuery.of(query),
            weights,
            limit,
            self._paths,
            where=where,
            params=params,
        )

    def rank_sections(
        self, query: TextQuery, filters: Filters, limit: int, ids: list[int] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        """note id -> (BM25 of its best part, the part's span), over the best `limit` parts
        that pass the filters (ties by part id) and every part of the `ids` notes: what
        lore.store.sqlite_search ranks over fts_sections, from the PARTS tables."""
        lexical = pg_lexical.LexicalQuery.of(replace(query, fields=None))
        conn = self.lexical()
        where, params = _candidate_filter(
            filters, "SELECT p.id FROM sections p JOIN notes n ON n.id = p.note_id"
        )
        ranked = pg_lexical.rank(
            conn,
            lexical,
            [1.0],
            limit,
            lambda pids: {pid: f"{pid:020d}" for pid in pids},  # ties by part id
            where=where,
            params=params,
            lx=PARTS,
        )
        scored = dict(ranked)
        if ids:
            among = {"among": list(ids)}
            where = "s.doc IN (SELECT id FROM sections WHERE note_id = ANY(%(among)s))"
            found = pg_lexical.matching(conn, lexical, where=where, params=among, lx=PARTS)
            exact = pg_lexical.scores(conn, lexical, [1.0], found, lx=PARTS)
            scored |= {pid: round(exact[pid], 6) for pid in exact}
        spans = {
            int(pid): (int(nid), int(start), int(end))
            for pid, nid, start, end in self.query(
                'SELECT id, note_id, start, "end" FROM sections WHERE id = ANY(%s)',
                (list(scored),),
            )
        }
        best: dict[int, tuple[float, int, int]] = {}
        for pid, score in sorted(scored.items()):  # in part order: the first best part wins
            nid, start, end = spans[pid]
            if nid not in best or score > best[nid][0]:
                best[nid] = (score, start, end)
        return best

    def count_matches(self, query: TextQuery, filters: Filters) -> int:
        """Notes the query matches that pass the filters."""
        where, params = _candidate_filter(filters)
        plain = pg_lexical.LexicalQuery.of(query, scored=False)
        return pg_lexical.count_matching(self.lexical(), plain, where=where, params=params)

    def field_scores(
        self, query: TextQuery, ids: list[int], weights: list[float]
    ) -> dict[int, dict[str, float]]:
        """Each note's BM25 score with one field's weight alone, per field."""
        matching = [i for i in ids if i in self._holding(query, ids)]
        lexical = pg_lexical.LexicalQuery.of(query)
        out: dict[int, dict[str, float]] = {i: {} for i in matching}
        for column, name in enumerate(FTS_COLUMNS):
            alone = [w if j == column else 0.0 for j, w in enumerate(weights)]
            for nid, score in pg_lexical.scores(self.lexical(), lexical, alone, matching).items():
                out[nid][name] = round(float(score), 6)
        return out

    def _holding(self, query: TextQuery, among: list[int] | None = None) -> set[int]:
        plain = pg_lexical.LexicalQuery.of(query, scored=False)
        where, params = ("", {})
        if among is not None:
            where, params = "s.doc = ANY(%(among)s)", {"among": list(among)}
        return set(pg_lexical.matching(self.lexical(), plain, where=where, params=params))

    def holding(self, query: TextQuery) -> set[int]:
        """Ids of the notes that match the query (one pass over its phrases' notes)."""
        return self._holding(query)

    def keep_filtered(self, ids: list[int], filters: Filters) -> list[int]:
        """The ids (in order) that pass the filters."""
        if not ids or not filters.active:
            return ids
        where, params = filter_sql(filters)
        ok = {
            int(r[0])
            for r in self.query(
                f"SELECT n.id FROM notes n WHERE n.id = ANY(%s){where}", [list(ids), *params]
            )
        }
        return [i for i in ids if i in ok]

    # -- rows of hits and channels ------------------------------------------------------------

    def _llm_fields(self, ids: list[int]) -> dict[int, tuple[list[str], str | None]]:
        """note id → (its claims, its category: the author's, else the model's) for notes
        with either (lore.store.note_llm.fields_of on SQLite)."""
        return {
            int(nid): (
                [c["text"] for c in json.loads(claims)] if claims else [],
                category or None,
            )
            for nid, claims, category in self.query(
                f"SELECT n.id, l.claims, coalesce({AUTHOR_CATEGORY}, l.category)"
                f" FROM notes n LEFT JOIN note_llm l ON {_CURRENT} WHERE n.id = ANY(%s)"
                f" AND (l.note_id IS NOT NULL OR {AUTHOR_CATEGORY} IS NOT NULL)",
                (ids,),
            )
        }

    def hit_rows(self, ids: list[int]) -> dict[int, HitRow]:
        if not ids:
            return {}
        tags: dict[int, list[str]] = {}
        for nid, tag in self.query(
            "SELECT note_id, tag FROM tags WHERE note_id = ANY(%s) ORDER BY position", (ids,)
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        fields = self._llm_fields(ids)
        rows: dict[int, HitRow] = {}
        for nid, path, title, date, fm_json, headings_json, body, body_line in self.query(
            "SELECT id, path, title, date, frontmatter, headings, body, body_line"
            " FROM notes WHERE id = ANY(%s)",
            (ids,),
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
        return self._paths(list(ids))

    def name_candidates(self, query: TextQuery, filters: Filters, pool: int) -> list[int]:
        """The best `pool` notes by BM25 of the query in their names (the title field)."""
        where, params = _candidate_filter(filters)
        ranked = pg_lexical.rank(
            self.lexical(),
            pg_lexical.LexicalQuery.of(query, scored=False),
            [1.0, 0.0, 0.0, 0.0],
            pool,
            self._paths,
            where=where,
            params=params,
        )
        return [nid for nid, _score in ranked]

    def name_rows(self, ids: list[int]) -> list[NameRow]:
        return [
            NameRow(int(nid), str(title), json.loads(fm), str(path))
            for nid, title, fm, path in self.query(
                "SELECT id, title, frontmatter, path FROM notes WHERE id = ANY(%s)", (ids,)
            )
        ]

    def tag_holders(self, key: str, *, derived: bool, limit: int) -> list[tuple[int, str]]:
        """(note id, tag key) of at most `limit` notes carrying the tag: the author's tags
        by case-folded text, or (`derived`) the LLM's tags by token key."""
        select, origin = _TAG_SOURCES[derived]
        return [
            (int(n), str(k)) for n, k in self.query(f"{select} = %s{origin} LIMIT %s", (key, limit))
        ]

    def tag_holders_among(
        self, keys: list[str], ids: list[int], *, derived: bool
    ) -> list[tuple[int, str]]:
        """(note id, tag key) of these notes carrying any of the tags."""
        select, origin = _TAG_SOURCES[derived]
        return [
            (int(n), str(k))
            for n, k in self.query(
                f"{select} = ANY(%s){origin} AND note_id = ANY(%s)", (list(keys), list(ids))
            )
        ]

    def nudge_rows(self, ids: list[int]) -> list[tuple[int, Any, Any]]:
        """(id, priority, date) of these notes."""
        return [
            (int(i), p, d)
            for i, p, d in self.query(
                "SELECT id, priority, date FROM notes WHERE id = ANY(%s)", (list(ids),)
            )
        ]


_TAG_SOURCES = {
    False: ("SELECT note_id, tag_key FROM tags WHERE tag_key", ""),
    True: ("SELECT note_id, tag_key FROM derived_tags WHERE tag_key", " AND origin = 'llm'"),
}
