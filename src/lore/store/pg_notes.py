"""The notes' PostgreSQL side (lore.store.notes has the rest): new rows go out with the
batch (lore.store.pg_batch), a note's full text and its body parts are written by
lore.store.pg_postings from the token streams the sync gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import pg_postings
from .notes import NOTE_COLUMNS, NotesSql
from .pg_base import PgBase
from .pg_postings import DF_STAGE
from .pg_schema import NOTES, PARTS


class PgNotes(NotesSql, PgBase):
    FRONTMATTER_ID = "frontmatter::jsonb ->> 'id'"
    MAYBE_NAMED = (
        "lower(title) = lower(?) OR path ILIKE ? OR strpos(lower(frontmatter), lower(?)) > 0"
    )

    def _insert_id(self, table: str, columns: tuple[str, ...], values: Sequence[Any]) -> int:
        (new_id,) = self.new_ids(table, 1)
        self.append_rows(table, ("id", *columns), [(new_id, *values)])
        return new_id

    def _replace_note(self, note_id: int, values: Sequence[Any]) -> None:
        """With the batch: the old row and its derived rows go, the new row goes in."""
        self.drop_note(note_id, row=True)
        self.append_rows("notes", ("id", *NOTE_COLUMNS), [(note_id, *values)])

    def _delete_derived(self, note_id: int) -> None:
        self.drop_note(note_id, row=False)

    def delete_note(self, note_id: int) -> None:
        self.drop_note(note_id, row=True)

    def _index_text(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        self.append_documents(NOTES, [(note_id, fields)])

    def _unindex_text(self, note_id: int) -> None:
        pg_postings.delete_documents(self.staging(), [note_id], word_terms=self.write_words())

    def reinsert_fts(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        self._unindex_text(note_id)
        self._index_text(note_id, fields)

    def clear_search_index(self) -> None:
        # DELETE, not TRUNCATE: TRUNCATE locks the tables against every reader until the
        # rebuild commits; deleted rows stay visible to readers' snapshots until then.
        for sql in (
            "DELETE FROM lex_postings",
            "DELETE FROM lex_packs",
            "DELETE FROM lex_docs",
            "DELETE FROM lex_terms",
            "DELETE FROM term_df",
            "UPDATE lex_stats SET docs = 0, tokens = 0",
            "DELETE FROM part_postings",
            "DELETE FROM part_packs",
            "DELETE FROM part_docs",
            "DELETE FROM part_terms",
            "DELETE FROM sections",
            "UPDATE part_stats SET docs = 0, tokens = 0",
            "DELETE FROM tags WHERE note_id NOT IN (SELECT id FROM notes)",
            "DELETE FROM links WHERE note_id NOT IN (SELECT id FROM notes)",
        ):
            self.execute(sql)
        self.mark_empty_lexicons()

    def insert_sections(self, note_id: int, sections: list[tuple[int, int, str]]) -> None:
        """Indexed as PARTS documents. Part ids are taken in order, as SQLite's rowids are:
        ties between parts go by them."""
        if not sections:
            return
        ids = self.new_ids("sections", len(sections))
        self.append_rows(
            "sections",
            ("id", "note_id", "start", "end"),
            [
                (pid, note_id, start, end)
                for pid, (start, end, _t) in zip(ids, sections, strict=True)
            ],
        )
        self.append_documents(
            PARTS, [(pid, (tokens,)) for pid, (_s, _e, tokens) in zip(ids, sections, strict=True)]
        )

    def apply_df(self, delta: dict[str, int]) -> None:
        """Set-wise: the changes go in by COPY and change `term_df` in two statements. No
        batched write touches `term_df`, so the held batch and the deferred postings are
        not sent first (a sync applies its changes many times while it loads)."""
        changes = [(term, n) for term, n in delta.items() if n]
        if not changes:
            return
        self._sender.wait()
        self._stage()
        with self._connected(), self.conn.cursor() as cur:
            with cur.copy(f"COPY {DF_STAGE} FROM STDIN") as copy:
                for row in changes:
                    copy.write_row(row)
            cur.execute(
                f"UPDATE term_df t SET df = t.df + d.df FROM {DF_STAGE} d WHERE t.term = d.term;"
                f" INSERT INTO term_df (term, df) SELECT term, df FROM {DF_STAGE} d"
                " WHERE NOT EXISTS (SELECT 1 FROM term_df t WHERE t.term = d.term) ORDER BY term;"
                f" DELETE FROM term_df t USING {DF_STAGE} d WHERE t.term = d.term AND t.df <= 0;"
                f" TRUNCATE {DF_STAGE}"
            )
        self._statements += 1
