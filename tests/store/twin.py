"""The same notes in an SQLite index (FTS5) and a PostgreSQL one, written through each
store's own write path (Store.upsert_note), to compare what the two backends rank."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lore.derive.fields import distinct_terms
from lore.store import pg_lexical, pg_phrases
from lore.store.note_rows import NoteRow
from lore.store.postgres import PostgresStore
from lore.store.query import Filters, TextQuery
from lore.store.sqlite import SqliteStore
from lore.store.sqlite_search import fts_match

WEIGHTS = [4.0, 3.0, 1.0, 1.0]
Fields = tuple[str, str, str, str]
Section = tuple[int, int, str]  # (start, end, token stream): lore.derive.sections


def note_row(path: str, fields: Fields, sections: list[Section] | None = None) -> NoteRow:
    return NoteRow(
        path=path,
        title=path,
        title_source="filename",
        date=None,
        date_source=None,
        mtime_ns=0,
        size=0,
        hash=path,
        frontmatter={},
        headings=[],
        summary="",
        body="",
        body_line=1,
        priority=None,
        status=None,
        truncated=False,
        tags=[],
        links=[],
        fts=fields,
        sections=sections or [],
    )


@dataclass
class Twin:
    sqlite: SqliteStore
    pg: PostgresStore
    paths: dict[int, str] = field(default_factory=dict)
    fields: dict[int, Fields] = field(default_factory=dict)

    def add(
        self, notes: Sequence[tuple[str, Fields]], sections: Sequence[list[Section]] = ()
    ) -> list[int]:
        """Write the notes (and each one's parts, when given) to both stores."""
        parts = list(sections) or [[] for _ in notes]
        ids = []
        df: Counter[str] = Counter()
        for _path, fields in notes:
            df.update(distinct_terms(fields))
        for store in (self.sqlite, self.pg):
            with store.transaction():
                ids = [
                    store.upsert_note(note_row(path, f, p), None)
                    for (path, f), p in zip(notes, parts, strict=True)
                ]
                store.apply_df(df)
        for note_id, (path, fields) in zip(ids, notes, strict=True):
            self.paths[note_id] = path
            self.fields[note_id] = fields
        return ids

    def delete(self, note_ids: Sequence[int]) -> None:
        df: Counter[str] = Counter()
        for note_id in note_ids:
            df.subtract(distinct_terms(self.fields.pop(note_id)))
            del self.paths[note_id]
        for store in (self.sqlite, self.pg):
            with store.transaction():
                for note_id in note_ids:
                    store.delete_note(note_id)
                store.apply_df(df)

    def fts5_scores(self, query: TextQuery, weights: Sequence[float] = WEIGHTS) -> dict[int, float]:
        """Every matching note's bm25 as FTS5 computes it (positive, unrounded)."""
        rows = self.sqlite.query(
            "SELECT rowid, bm25(fts, ?, ?, ?, ?) FROM fts WHERE fts MATCH ?",
            [*weights, fts_match(query, scored=True)],
        )
        return {int(r): -float(s) for r, s in rows}

    def pg_scores(
        self, query: TextQuery, ids: Sequence[int], weights: Sequence[float] = WEIGHTS
    ) -> dict[int, float]:
        lexical = pg_lexical.LexicalQuery.of(query)
        return pg_lexical.scores(self.pg.conn, lexical, weights, ids)

    def assert_same(self, query: TextQuery, limit: int = 10) -> list[tuple[int, float]]:
        """Both stores rank alike; PostgreSQL's scores are FTS5's bit for bit, and both are
        what bm25's definition gives."""
        expected = self.sqlite.rank(query, Filters(), limit, WEIGHTS)
        assert self.pg.rank(query, Filters(), limit, WEIGHTS) == expected, fts_match(query)
        assert self.pg.count_matches(query, Filters()) == self.sqlite.count_matches(
            query, Filters()
        )
        fts5 = self.fts5_scores(query)
        assert self.pg_scores(query, list(fts5)) == fts5, fts_match(query)
        reference = reference_scores(self.fields, pg_lexical.LexicalQuery.of(query), WEIGHTS)
        assert reference == fts5, fts_match(query)
        return expected


def make_twin(tmp_path: Path, url: str) -> Twin:
    sqlite = SqliteStore(tmp_path / "twin.sqlite", tmp_path, bound_to_vault=False)
    return Twin(sqlite, PostgresStore(url, tmp_path))


def reference_scores(
    notes: dict[int, Fields], query: pg_lexical.LexicalQuery, weights: Sequence[float]
) -> dict[int, float]:
    """bm25 from its definition (lore.store.pg_lexical's docstring), by brute force: the
    score of every note the query matches, positive, in FTS5's order of operations."""

    def occurrences(stream: str, phrase: tuple[str, ...]) -> int:
        tokens = stream.split()
        n = len(phrase)
        return sum(1 for i in range(len(tokens)) if tuple(tokens[i : i + n]) == phrase)

    def counts(fields: Fields, phrase: tuple[str, ...]) -> list[int]:
        return [
            occurrences(f, phrase) if query.columns is None or i in query.columns else 0
            for i, f in enumerate(fields)
        ]

    total = len(notes)
    avgdl = sum(len(" ".join(f).split()) for f in notes.values()) / total
    phrases = query.phrases()
    idfs = [
        pg_phrases.idf(total, sum(1 for f in notes.values() if any(counts(f, p)))) for p in phrases
    ]
    out: dict[int, float] = {}
    for note_id, fields in notes.items():
        if not any(any(counts(fields, p)) for p in query.generating):
            continue
        if any(any(counts(fields, p)) for p in query.excluded):
            continue
        size = len(" ".join(fields).split())
        score = 0.0
        for phrase, weight in zip(phrases, idfs, strict=True):
            freq = 0.0
            for w, n in zip(weights, counts(fields, phrase), strict=True):
                for _ in range(n):
                    freq += w
            score += weight * ((freq * 2.2) / (freq + 1.2 * (1 - 0.75 + 0.75 * size / avgdl)))
        out[note_id] = score
    return out
