"""Lexical ranking in SQLite: FTS5's BM25 over our token stream with per-field weights
(the MATCH expression is lore.store.search.fts_match), and document frequencies within
access rules. lore.store.search has what both backends share.
"""

from __future__ import annotations

from typing import Any

import apsw

from .query import Filters, TextQuery
from .schema import FTS_COLUMNS
from .search import PendingParts, SearchSql, fts_match, phrase_match
from .sqlite_base import SqliteBase, marks
from .sqlite_parts import PartReader, best_parts, commits_seen, match_parts

__all__ = ["SqliteSearch", "fts_match"]

TIE_MARGIN = 20  # extra rows fetched so ties at the cut can be ordered by path


def _part_match(query: TextQuery) -> str:
    return fts_match(query._replace(fields=None), scored=True)  # a part is body text


class SqliteSearch(SearchSql, SqliteBase):
    _reader_at: tuple[str, int] | None = None  # (name, flags) to open the second connection
    part_reader: PartReader | None = None  # opened by the first search that ranks parts
    _counted: tuple[object, int] | None = None  # ((generation, allow), notes) last counted

    def note_count(self, allow: tuple[str, ...] | None = None) -> int:
        """Notes in the index (that the access rule allows), counted again only when the
        index changed: every search asks, and counting is a pass over the notes (12 ms a
        search at a million notes)."""
        key = (self.generation(), allow)
        if self._counted is None or self._counted[0] != key:
            self._counted = (key, super().note_count(allow))
        return self._counted[1]

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
        path."""
        rows = self._best_by_bm25(fts_match(query, scored=True), weights, filters, limit)
        return [(nid, round(-score, 6)) for nid, score in rows]

    def _best_by_bm25(
        self, match: str, weights: list[float], filters: Filters, limit: int
    ) -> list[tuple[int, float]]:
        """(note id, FTS5's bm25, lower is better) of the best `limit` notes matching
        `match` that pass the filters, ties by path.

        Without filters the FTS table is ranked alone (joining `notes` for every matching
        row doubles the cost at 100k notes); a few extra rows are fetched so ties at the
        cut can be ordered by path, and the join is used only when a tie runs past them."""
        where, params = self.filter_sql(filters)
        if not where:
            fetch = limit + TIE_MARGIN
            rows = self.query(
                "SELECT rowid, bm25(fts, ?, ?, ?, ?) AS s FROM fts WHERE fts MATCH ?"
                " ORDER BY s LIMIT ?",
                [*weights, match, fetch],
            )
            if not rows:
                return []
            if len(rows) < fetch or rows[-1][1] != rows[limit - 1][1]:
                ids = [int(r[0]) for r in rows]
                paths = dict(
                    self.query(f"SELECT id, path FROM notes WHERE id IN ({marks(ids)})", ids)
                )
                ordered = sorted(rows, key=lambda r: (r[1], paths[r[0]]))[:limit]
                return [(int(nid), float(score)) for nid, score in ordered]
        sql = (
            "SELECT n.id, bm25(fts, ?, ?, ?, ?) AS s FROM fts JOIN notes n ON n.id = fts.rowid"
            f" WHERE fts MATCH ?{where} ORDER BY s, n.path LIMIT ?"
        )
        rows = self.query(sql, [*weights, match, *params, limit])
        return [(int(nid), float(score)) for nid, score in rows]

    def rank_sections(
        self, query: TextQuery, filters: Filters, limit: int, ids: list[int] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        """note id -> (BM25 of its best part, the part's span), over the best `limit` parts
        that pass the filters (ties by part id) and every part of the `ids` notes (the
        other channels' candidates, filtered already): FTS5 scores every matching part
        once, and both sets are read from that one pass (lore.store.sqlite_parts)."""
        match_parts(self.db, _part_match(query))
        among = self.in_ids("note_id", ids or [])
        return best_parts(self.db, self.filter_sql(filters), limit, among)

    def start_sections(self, query: TextQuery, filters: Filters, limit: int) -> PendingParts:
        """rank_sections' first step begun on the second connection (lore.store.
        sqlite_parts), which runs while this one ranks the whole notes. Not inside a write
        transaction: the second connection would not see what it wrote."""
        reader = None if self.writing else self._reader()
        if reader is None:
            return super().start_sections(query, filters, limit)
        reader.match(_part_match(query))

        def finish(ids: list[int]) -> dict[int, tuple[float, int, int]]:
            try:
                found = reader.best(
                    commits_seen(self.db),  # the state this connection's snapshot sees
                    self.filter_sql(filters),
                    limit,
                    self.in_ids("note_id", ids),
                )
                if found is not None:
                    return found
            except apsw.Error:
                pass  # ranked here instead, which reports what still fails
            return self.rank_sections(query, filters, limit, ids)

        return PendingParts(finish)

    def _reader(self) -> PartReader | None:
        """The second connection, opened on first use (None: the index has no file to
        open twice, or opening it failed)."""
        if self.part_reader is None and self._reader_at is not None:
            try:
                self.part_reader = PartReader(*self._reader_at)
            except apsw.Error:
                self._reader_at = None
        return self.part_reader

    def close_reader(self) -> None:
        if self.part_reader is not None:
            self.part_reader.close()
            self.part_reader = None

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
        title_only = [1.0] + [0.0] * (len(FTS_COLUMNS) - 1)
        return [nid for nid, _s in self._best_by_bm25(fts_match(query), title_only, filters, pool)]
