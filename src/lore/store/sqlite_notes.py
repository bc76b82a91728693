"""The notes' SQLite side (lore.store.notes has the rest): a note's full text is a row of
the FTS5 table `fts`, its body parts rows of `fts_sections` (lore.derive.sections)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .notes import NotesSql
from .sqlite_base import SqliteBase, marks

# A write transaction that wrote the texts of at least 1/COMPACT_SHARE of the notes (a first
# index, a rebuild) leaves the full-text tables as one segment each. FTS5 writes a large
# sync as many segments, and a search reads every one: merged, bench.scale's 200 queries
# searched in one process on its 100k-note vault took 66 ms (median; mean 83) instead of
# 71 (99), with the same results; merging took 6 s of the 100 s first index.
COMPACT_SHARE = 4


class SqliteNotes(NotesSql, SqliteBase):
    FRONTMATTER_ID = "CAST(json_extract(frontmatter, '$.id') AS TEXT)"
    MAYBE_NAMED = (
        "lower(title) = lower(?) OR path LIKE ? ESCAPE '\\'"
        " OR instr(lower(frontmatter), lower(?)) > 0"
    )

    def _insert_id(self, table: str, columns: tuple[str, ...], values: Sequence[Any]) -> int:
        names = ", ".join(f'"{c}"' for c in columns)
        self.db.execute(f"INSERT INTO {table}({names}) VALUES ({marks(values)})", values)
        return int(self.db.last_insert_rowid())

    def _index_text(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        self._texts_written += 1
        self.db.execute(
            "INSERT INTO fts(rowid, title, tags, summary, body) VALUES (?,?,?,?,?)",
            (note_id, *fields),
        )

    def _unindex_text(self, note_id: int) -> None:
        self.db.execute("DELETE FROM fts WHERE rowid = ?", (note_id,))

    def reinsert_fts(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        self._index_text(note_id, fields)

    def _settle(self) -> None:
        super()._settle()
        written = self._texts_written
        if written and written * COMPACT_SHARE >= int(self._scalar("SELECT count(*) FROM notes")):
            self.db.execute(
                "INSERT INTO fts(fts) VALUES ('optimize');"
                " INSERT INTO fts_sections(fts_sections) VALUES ('optimize')"
            )

    def clear_search_index(self) -> None:
        self.db.execute(
            "DELETE FROM fts; DELETE FROM term_df; DELETE FROM fts_sections; DELETE FROM sections;"
            " DELETE FROM tags WHERE note_id NOT IN (SELECT id FROM notes);"
            " DELETE FROM links WHERE note_id NOT IN (SELECT id FROM notes);"
        )

    def insert_sections(self, note_id: int, sections: list[tuple[int, int, str]]) -> None:
        for start, end, tokens in sections:
            part = self._insert_id("sections", ("note_id", "start", "end"), (note_id, start, end))
            self.db.execute("INSERT INTO fts_sections(rowid, body) VALUES (?,?)", (part, tokens))

    def _delete_sections(self, note_id: int) -> None:
        self.db.execute(
            "DELETE FROM fts_sections WHERE rowid IN (SELECT id FROM sections WHERE note_id = ?)",
            (note_id,),
        )
        self.db.execute("DELETE FROM sections WHERE note_id = ?", (note_id,))
