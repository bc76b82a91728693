"""Lexical ranking in SQLite: FTS5's BM25 over our token stream with per-field weights
(the MATCH expression is lore.store.search.fts_match), and document frequencies within
access rules. lore.store.search has what both backends share.
"""

from __future__ import annotations

from typing import Any

from .query import Filters, TextQuery
from .schema import FTS_COLUMNS
from .search import SearchSql, fts_match, phrase_match
from .sqlite_base import SqliteBase, marks

__all__ = ["SqliteSearch", "fts_match"]

TIE_MARGIN = 20  # extra rows fetched so ties at the cut can be ordered by path


class SqliteSearch(SearchSql, SqliteBase):
    def _frequencies_within(self, tokens: list[str], allow: tuple[str, ...]) -> dict[str, int]:
        where, params = self.allow_sql(allow)
        df: dict[str, int] = {}
        for token in tokens:
            found = self._scalar(
                "SELECT count(*) FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?"
                f"{where}",
                [phrase_match((token,)), *params],
            )
            if found:
                df[token] = int(found)
        return df

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
        where, params = self.filter_sql(filters)
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
        one pass, where asking for the `ids` apart would match the whole query again. A
        part's note and span are looked up for those only (for every matching part when a
        filter needs its note): at 100k notes the lookups were a third of the statement."""
        match = fts_match(query._replace(fields=None), scored=True)
        where, params = self.filter_sql(filters)
        among, among_params = self.in_ids("note_id", ids or [])
        top = "SELECT id FROM matched ORDER BY b, id LIMIT ?"
        if where:
            top = (
                "SELECT matched.id FROM matched JOIN sections s ON s.id = matched.id JOIN notes n"
                f" ON n.id = s.note_id WHERE 1{where} ORDER BY matched.b, matched.id LIMIT ?"
            )
        rows = self.query(
            "WITH matched AS MATERIALIZED (SELECT rowid AS id, bm25(fts_sections) AS b"
            f" FROM fts_sections WHERE fts_sections MATCH ?), top AS ({top})"
            ' SELECT s.note_id, matched.b, s.start, s."end" FROM matched JOIN sections s'
            " ON s.id = matched.id WHERE matched.id IN (SELECT id FROM top)"
            f" OR matched.id IN (SELECT id FROM sections WHERE {among}) ORDER BY matched.id",
            [match, *params, limit, *among_params],
        )
        best: dict[int, tuple[float, int, int]] = {}
        for nid, score, start, end in rows:  # in part order: the first best part wins
            found = (round(-float(score), 6), int(start), int(end))
            if int(nid) not in best or found[0] > best[int(nid)][0]:
                best[int(nid)] = found
        return best

    def count_matches(self, query: TextQuery, filters: Filters) -> int:
        """Notes the query matches that pass the filters."""
        where, params = self.filter_sql(filters)
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

    def name_candidates(self, query: TextQuery, filters: Filters, pool: int) -> list[int]:
        """The best `pool` notes by BM25 of the query in their names (the title field)."""
        where, params = self.filter_sql(filters)
        rows = self.query(
            "SELECT n.id, bm25(fts, 1.0, 0.0, 0.0, 0.0) AS s FROM fts JOIN notes n"
            f" ON n.id = fts.rowid WHERE fts MATCH ?{where} ORDER BY s, n.path LIMIT ?",
            [fts_match(query), *params, pool],
        )
        return [int(r[0]) for r in rows]
