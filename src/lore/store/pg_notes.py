"""The notes' PostgreSQL side (lore.store.notes has the rest): a note's full text and its
body parts are written by lore.store.pg_postings from the token streams the sync gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import pg_postings
from .notes import NotesSql
from .pg_base import PgBase
from .pg_schema import PARTS


class PgNotes(NotesSql, PgBase):
    FRONTMATTER_ID = "frontmatter::jsonb ->> 'id'"
    MAYBE_NAMED = (
        "lower(title) = lower(?) OR path ILIKE ? OR strpos(lower(frontmatter), lower(?)) > 0"
    )

    def _insert_id(self, sql: str, params: Sequence[Any]) -> int:
        self._statements += 1
        return int(self.query(f"{sql} RETURNING id", params)[0][0])

    def _index_text(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        pg_postings.write_notes(self.conn, [(note_id, fields)], self._pending)

    def _unindex_text(self, note_id: int) -> None:
        pg_postings.delete_notes(self.conn, [note_id], self._pending)

    def reinsert_fts(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        self._unindex_text(note_id)
        self._index_text(note_id, fields)
        self._statements += 1

    def clear_search_index(self) -> None:
        self._pending, self._part_pending = pg_postings.Pending(), pg_postings.Pending()
        for sql in (
            "TRUNCATE lex_postings, lex_docs, lex_terms, term_df",
            "UPDATE lex_stats SET docs = 0, tokens = 0",
            "TRUNCATE sections, part_postings, part_docs, part_terms",
            "UPDATE part_stats SET docs = 0, tokens = 0",
            "DELETE FROM tags WHERE note_id NOT IN (SELECT id FROM notes)",
            "DELETE FROM links WHERE note_id NOT IN (SELECT id FROM notes)",
        ):
            self.execute(sql)

    def insert_sections(self, note_id: int, sections: list[tuple[int, int, str]]) -> None:
        """Indexed as PARTS documents. Part ids are taken in order, as SQLite's rowids are:
        ties between parts go by them."""
        if not sections:
            return
        ids = sorted(
            int(r[0])
            for r in self.query(
                "SELECT nextval(pg_get_serial_sequence('sections', 'id'))"
                " FROM generate_series(1, ?)",
                (len(sections),),
            )
        )
        self.executemany(
            'INSERT INTO sections(id, note_id, start, "end") VALUES (?, ?, ?, ?)',
            [
                (pid, note_id, start, end)
                for pid, (start, end, _t) in zip(ids, sections, strict=True)
            ],
        )
        parts = [(pid, (tokens,)) for pid, (_s, _e, tokens) in zip(ids, sections, strict=True)]
        pg_postings.write_notes(self.conn, parts, self._part_pending, PARTS)

    def _delete_sections(self, note_id: int) -> None:
        ids = [
            int(r[0])
            for r in self.query("DELETE FROM sections WHERE note_id = ? RETURNING id", (note_id,))
        ]
        pg_postings.delete_notes(self.conn, ids, self._part_pending, PARTS)
