"""Lexical ranking in SQLite: FTS5's BM25 over our token stream with per-field weights,
the filters compiled to a WHERE clause, document frequencies, and the rows a hit, the name
channel, the tag channel and the nudges read.

A TextQuery becomes an FTS5 MATCH expression here and nowhere else: every phrase is
double-quoted (tokens hold only letters and digits, so quoting is always safe), and the
score-only phrases are ANDed as `(common OR <every-note token>)`, so FTS5 reads candidates
from the rare phrases' lists alone and still computes BM25 over all of them.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from .query import EVERY_NOTE, Filters, Phrase, TextQuery
from .rows import HitRow, NameRow
from .schema import FTS_COLUMNS
from .sqlite_base import SqliteBase, marks

TIE_MARGIN = 20  # extra rows fetched so ties at the cut can be ordered by path


def _phrase(tokens: Phrase) -> str:
    return '"' + " ".join(tokens) + '"'


def fts_match(query: TextQuery, *, scored: bool = False) -> str:
    """The FTS5 MATCH expression of a query (an empty one matches nothing). `scored`: for
    ranking, each phrase written as many times as it counts (TextQuery.counts); the same
    notes match either way, so counting and --explain use the plain expression."""
    counts = dict(query.counts) if scored else {}

    def any_of(phrases: tuple[Phrase, ...]) -> str:
        return " OR ".join(" OR ".join([_phrase(p)] * counts.get(p, 1)) for p in phrases)

    match = any_of(query.terms) or '""'
    # NOT before AND: FTS5 (SQLite 3.5x) gives some rows of `(a AND b) NOT c` a bm25 that
    # misses phrase matches (tests/store/test_pg_ranking.py holds it to bm25's definition);
    # `(a NOT c) AND b` matches the same notes and scores them right.
    if query.excluded:
        match = f"({match}) NOT ({' OR '.join(_phrase(p) for p in query.excluded)})"
    if query.score_only:
        common = any_of(query.score_only)
        match = f'({match}) AND ({common} OR "{EVERY_NOTE}")'
    if query.fields:
        names = query.fields[0] if len(query.fields) == 1 else "{" + " ".join(query.fields) + "}"
        match = f"{names} : ({match})"
    return match


def _glob(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    if not any(c in path for c in "*?["):
        return path.rstrip("/") + "*" if path.endswith("/") else path + "*"
    return path


def allow_clause(allow: tuple[str, ...] | list[str], column: str = "n.path") -> str:
    return "(" + (" OR ".join(f"{column} GLOB ?" for _ in allow) or "0") + ")"


def filter_sql(filters: Filters) -> tuple[str, list[Any]]:
    """' AND ...' clauses over `notes n` for the filters, and their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    for tag in filters.tags:
        clauses.append("n.id IN (SELECT note_id FROM tags WHERE tag_key = ? OR tag_key GLOB ?)")
        params.extend([tag, tag.replace("[", "[[]") + "/*"])
    if filters.path:
        clauses.append("n.path GLOB ?")
        params.append(_glob(filters.path))
    dated = []
    if filters.since:
        dated.append("n.date >= ?")
        params.append(filters.since)
    if filters.until:
        dated.append("n.date <= ?")
        params.append(filters.until)
    if dated:
        window = " AND ".join(dated)
        clauses.append(f"({window} OR n.date IS NULL)" if filters.include_undated else window)
    if filters.allow is not None:
        clauses.append(allow_clause(filters.allow))
        params.extend(filters.allow)
    if filters.category:
        from .note_llm import category_filter_sql

        clauses.append(category_filter_sql())
        params.append(filters.category)
    return "".join(f" AND {c}" for c in clauses), params


def _ids(ids: list[int]) -> str:
    return ",".join(str(int(i)) for i in ids)


class SearchSql(SqliteBase):
    def describe(self, query: TextQuery) -> str:
        """The query as this backend runs it, for --explain (the every-note token spelled
        out)."""
        return fts_match(query).replace(f'"{EVERY_NOTE}"', "<every note>")

    # -- counts and frequencies --------------------------------------------------------------

    def note_count(self, allow: tuple[str, ...] | None = None) -> int:
        if allow is None:
            return int(self.query("SELECT count(*) FROM notes")[0][0])
        where = allow_clause(allow)
        return int(self.query(f"SELECT count(*) FROM notes n WHERE {where}", allow)[0][0])

    def document_frequencies(
        self, tokens: list[str], allow: tuple[str, ...] | None = None
    ) -> dict[str, int]:
        """token → notes holding it (any field); within `allow` when given."""
        if allow is not None:
            where = allow_clause(allow)
            df: dict[str, int] = {}
            for token in tokens:
                found = self.query(
                    "SELECT count(*) FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?"
                    f" AND {where}",
                    [_phrase((token,)), *allow],
                )[0][0]
                if found:
                    df[token] = int(found)
            return df
        out: dict[str, int] = {}
        for start in range(0, len(tokens), 500):
            chunk = tokens[start : start + 500]
            out.update(
                (str(t), int(n))
                for t, n in self.db.execute(
                    f"SELECT term, df FROM term_df WHERE term IN ({marks(chunk)})", chunk
                )
            )
        return out

    # -- ranking -----------------------------------------------------------------------------

    def rank(
        self, query: TextQuery, filters: Filters, limit: int, weights: list[float]
    ) -> list[tuple[int, float]]:
        """(note id, BM25 score as a positive number) for the best `limit` notes, ties by
        path.

        Without filters the FTS table is ranked alone (joining `notes` for every matching
        row doubles the cost at 100k notes); a few extra rows are fetched so ties at the
        cut can be ordered by path, and the join is used only when a tie runs past them.
        """
        match = fts_match(query, scored=True)
        where, params = filter_sql(filters)
        if not where:
            fetch = limit + TIE_MARGIN
            rows = self.query(
                "SELECT rowid, bm25(fts, ?, ?, ?, ?) AS s FROM fts WHERE fts MATCH ?"
                " ORDER BY s LIMIT ?",
                [*weights, match, fetch],
            )
            if len(rows) < fetch or rows[-1][1] != rows[limit - 1][1]:
                ids = [int(r[0]) for r in rows]
                paths = dict(
                    self.query(f"SELECT id, path FROM notes WHERE id IN ({marks(ids)})", ids)
                )
                ordered = sorted(rows, key=lambda r: (r[1], paths[r[0]]))[:limit]
                return [(int(nid), round(-float(score), 6)) for nid, score in ordered]
        sql = (
            "SELECT n.id, bm25(fts, ?, ?, ?, ?) AS s FROM fts JOIN notes n ON n.id = fts.rowid"
            f" WHERE fts MATCH ?{where} ORDER BY s, n.path LIMIT ?"
        )
        rows = self.query(sql, [*weights, match, *params, limit])
        return [(int(nid), round(-float(score), 6)) for nid, score in rows]

    def rank_sections(
        self, query: TextQuery, filters: Filters, limit: int, ids: list[int] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        """note id -> (BM25 of its best part, the part's span), over the best `limit` parts
        that pass the filters (ties by part id) and every part of the `ids` notes (the
        other channels' candidates, filtered already).

        One statement: FTS5 computes every matching part's bm25 once (the ranking needs it
        for all of them anyway); the best `limit` and the parts of `ids` are read from that
        one pass, where asking for the `ids` apart would match the whole query again."""
        match = fts_match(replace(query, fields=None), scored=True)
        where, params = filter_sql(filters)
        join = " JOIN notes n ON n.id = matched.note_id" if where else ""
        among = f"note_id IN ({_ids(ids)})" if ids else "0"
        rows = self.query(
            "WITH matched AS MATERIALIZED (SELECT s.id, s.note_id, bm25(fts_sections) AS b,"
            ' s.start, s."end" FROM fts_sections JOIN sections s ON s.id = fts_sections.rowid'
            " WHERE fts_sections MATCH ?),"
            f" top AS (SELECT matched.id FROM matched{join} WHERE 1{where}"
            " ORDER BY b, matched.id LIMIT ?)"
            ' SELECT note_id, b, start, "end" FROM matched'
            f" WHERE id IN (SELECT id FROM top) OR {among} ORDER BY id",
            [match, *params, limit],
        )
        best: dict[int, tuple[float, int, int]] = {}
        for nid, score, start, end in rows:  # in part order: the first best part wins
            found = (round(-float(score), 6), int(start), int(end))
            if int(nid) not in best or found[0] > best[int(nid)][0]:
                best[int(nid)] = found
        return best

    def count_matches(self, query: TextQuery, filters: Filters) -> int:
        """Notes the query matches that pass the filters."""
        where, params = filter_sql(filters)
        if not where:
            sql = "SELECT count(*) FROM fts WHERE fts MATCH ?"
        else:
            sql = "SELECT count(*) FROM fts JOIN notes n ON n.id = fts.rowid"
            sql += f" WHERE fts MATCH ?{where}"
        return int(self.query(sql, [fts_match(query), *params])[0][0])

    def field_scores(
        self, query: TextQuery, ids: list[int], weights: list[float]
    ) -> dict[int, dict[str, float]]:
        """Each note's BM25 score with one field's weight alone, per field."""
        names = list(FTS_COLUMNS)
        cols = []
        params: list[Any] = []
        for i in range(len(names)):
            cols.append("bm25(fts, ?, ?, ?, ?)")
            params.extend(weights[j] if j == i else 0.0 for j in range(len(names)))
        rows = self.query(
            f"SELECT rowid, {', '.join(cols)} FROM fts WHERE fts MATCH ? AND rowid IN"
            f" ({marks(ids)})",
            [*params, fts_match(query, scored=True), *ids],
        )
        return {
            int(row[0]): {name: round(-float(v), 6) for name, v in zip(names, row[1:], strict=True)}
            for row in rows
        }

    def holding(self, query: TextQuery) -> set[int]:
        """Ids of the notes that match the query (one pass over its phrases' notes)."""
        return {
            int(r[0])
            for r in self.query("SELECT rowid FROM fts WHERE fts MATCH ?", [fts_match(query)])
        }

    def keep_filtered(self, ids: list[int], filters: Filters) -> list[int]:
        """The ids (in order) that pass the filters."""
        if not ids or not filters.active:
            return ids
        where, params = filter_sql(filters)
        ok = {
            int(r[0])
            for r in self.query(
                f"SELECT n.id FROM notes n WHERE n.id IN ({_ids(ids)}){where}", params
            )
        }
        return [i for i in ids if i in ok]

    # -- rows of hits and channels ------------------------------------------------------------

    def hit_rows(self, ids: list[int]) -> dict[int, HitRow]:
        if not ids:
            return {}
        tags: dict[int, list[str]] = {}
        for nid, tag in self.query(
            f"SELECT note_id, tag FROM tags WHERE note_id IN ({marks(ids)}) ORDER BY position", ids
        ):
            tags.setdefault(int(nid), []).append(str(tag))
        from .note_llm import fields_of

        fields = fields_of(self, ids)  # type: ignore[arg-type]
        rows: dict[int, HitRow] = {}
        for nid, path, title, date, fm_json, headings_json, body, body_line in self.query(
            "SELECT id, path, title, date, frontmatter, headings, body, body_line"
            f" FROM notes WHERE id IN ({marks(ids)})",
            ids,
        ):
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
                [c["text"] for c in fields[int(nid)].claims] if int(nid) in fields else [],
                fields[int(nid)].category if int(nid) in fields else None,
            )
        return rows

    def paths_of(self, ids: list[int]) -> dict[int, str]:
        return {
            int(n): str(p)
            for n, p in self.query(
                f"SELECT id, path FROM notes WHERE id IN ({_ids(ids) or 'NULL'})"
            )
        }

    def name_candidates(self, query: TextQuery, filters: Filters, pool: int) -> list[int]:
        """The best `pool` notes by BM25 of the query in their names (the title field)."""
        where, params = filter_sql(filters)
        rows = self.query(
            "SELECT n.id, bm25(fts, 1.0, 0.0, 0.0, 0.0) AS s FROM fts JOIN notes n"
            f" ON n.id = fts.rowid WHERE fts MATCH ?{where} ORDER BY s, n.path LIMIT ?",
            [fts_match(query), *params, pool],
        )
        return [int(r[0]) for r in rows]

    def name_rows(self, ids: list[int]) -> list[NameRow]:
        return [
            NameRow(int(nid), str(title), json.loads(fm), str(path))
            for nid, title, fm, path in self.query(
                f"SELECT id, title, frontmatter, path FROM notes WHERE id IN ({marks(ids)})", ids
            )
        ]

    def tag_holders(self, key: str, *, derived: bool, limit: int) -> list[tuple[int, str]]:
        """(note id, tag key) of at most `limit` notes carrying the tag: the author's tags
        by case-folded text, or (`derived`) the LLM's tags by token key."""
        select, origin = _TAG_SOURCES[derived]
        return [
            (int(n), str(k)) for n, k in self.query(f"{select} = ?{origin} LIMIT ?", [key, limit])
        ]

    def tag_holders_among(
        self, keys: list[str], ids: list[int], *, derived: bool
    ) -> list[tuple[int, str]]:
        """(note id, tag key) of these notes carrying any of the tags."""
        select, origin = _TAG_SOURCES[derived]
        return [
            (int(n), str(k))
            for n, k in self.query(
                f"{select} IN ({marks(keys)}){origin} AND note_id IN ({_ids(ids)})", keys
            )
        ]

    def nudge_rows(self, ids: list[int]) -> list[tuple[int, Any, Any]]:
        """(id, priority, date) of these notes."""
        return [
            (int(i), p, d)
            for i, p, d in self.query(
                f"SELECT id, priority, date FROM notes WHERE id IN ({_ids(ids)})"
            )
        ]


_TAG_SOURCES = {
    False: ("SELECT note_id, tag_key FROM tags WHERE tag_key", ""),
    True: ("SELECT note_id, tag_key FROM derived_tags WHERE tag_key", " AND origin = 'llm'"),
}
