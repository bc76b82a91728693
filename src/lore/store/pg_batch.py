"""The sync's new rows on PostgreSQL, sent a batch at a time (issue 15): one COPY per table
and one set of statements per full-text index for many notes, instead of a few round trips
per note.

A `Batch` holds rows that only add to the index (new notes, their tags, links, parts,
pinyin, full-text documents). lore.store.pg_base sends it before any other statement of
the connection runs and before the transaction commits: every statement still sees every
write made before it, in order. A batch that grows past `MAX_DOCUMENTS` or
`MAX_CHARACTERS` is sent by a `Sender` thread while the sync derives the next one (the
server indexes one batch while the client reads and tokenizes the next: two cores at
work, not one after the other), so the client holds at most two batches of a large sync.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import pg_postings
from .jieba_words import NO_WORDS, WordTerms
from .pg_schema import NOTES, PARTS, Lexicon

if TYPE_CHECKING:
    import psycopg

    Connection = psycopg.Connection[Any]

MAX_DOCUMENTS = 4000  # notes and parts held before the batch is sent
MAX_CHARACTERS = 32_000_000  # characters of their token streams (about 100 MB of str)


@dataclass
class Batch:
    """Rows not sent yet: per (table, columns) in the order they came, and full-text
    documents (id, token streams) per index."""

    rows: dict[tuple[str, tuple[str, ...] | None], list[tuple[Any, ...]]] = field(
        default_factory=dict
    )
    documents: dict[Lexicon, list[tuple[int, tuple[str, ...]]]] = field(default_factory=dict)
    held: int = 0  # documents
    characters: int = 0
    notes: set[int] = field(default_factory=set)  # the notes whose rows are held
    dropped: dict[int, bool] = field(default_factory=dict)  # note id -> its own row too

    def __bool__(self) -> bool:
        return bool(self.rows or self.documents or self.dropped)

    @property
    def full(self) -> bool:
        return self.held >= MAX_DOCUMENTS or self.characters >= MAX_CHARACTERS

    def add_rows(
        self, table: str, columns: tuple[str, ...] | None, rows: list[tuple[Any, ...]]
    ) -> None:
        """Rows for `table` (columns None: all of them, in the table's order)."""
        self.rows.setdefault((table, columns), []).extend(rows)
        key = NOTE_KEYS.get(table)
        if key is not None and columns is not None and key in columns:
            at = columns.index(key)
            self.notes.update(int(row[at]) for row in rows)

    def drop(self, note_id: int, *, row: bool) -> None:
        """Delete what is derived from a note (tags, links, full text, parts) and, with
        `row`, its row, before any row held goes in. The caller sends the batch first if
        it holds rows of that note (`notes`): they would go with the old ones."""
        self.dropped[note_id] = self.dropped.get(note_id, False) or row

    def add_documents(self, lx: Lexicon, documents: list[tuple[int, tuple[str, ...]]]) -> None:
        self.documents.setdefault(lx, []).extend(documents)
        if lx == NOTES:  # a note's document id is its id
            self.notes.update(doc_id for doc_id, _fields in documents)
        self.held += len(documents)
        self.characters += sum(len(s) for _id, fields in documents for s in fields)

    def send(
        self, conn: Connection, *, load: int | None = None, word_terms: WordTerms = NO_WORDS
    ) -> None:
        """Write everything held (inside the caller's transaction), then forget it: the
        notes dropped first, then the new rows; with `load` (the batch's number in the
        sync), the full-text postings wait in the load tables (pg_postings.write_documents).
        `word_terms`: the words the index holds as terms of three or four one-character
        tokens."""
        if self.dropped:
            _drop_notes(conn, self.dropped, word_terms)
        with conn.cursor() as cur:
            for (table, columns), rows in self.rows.items():
                names = " (" + ", ".join(f'"{c}"' for c in columns) + ")" if columns else ""
                with cur.copy(f"COPY {table}{names} FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
        for lx, documents in self.documents.items():
            pg_postings.write_documents(conn, documents, lx, load=load, word_terms=word_terms)
        self.rows.clear()
        self.documents.clear()
        self.notes.clear()
        self.dropped.clear()
        self.held = self.characters = 0


# The column naming the note a table's rows belong to (the tables a batch holds rows of).
NOTE_KEYS = {"notes": "id", "tags": "note_id", "links": "note_id", "sections": "note_id"}


def _drop_notes(conn: Connection, dropped: dict[int, bool], word_terms: WordTerms) -> None:
    """Delete the rows derived from these notes (and the rows of those marked True), the
    full text and the parts of all: a few statements for them all, not a few per note."""
    ids = sorted(dropped)
    rows = sorted(n for n, row in dropped.items() if row)
    listed = pg_postings.id_array(ids)
    statements = [  # one round trip; the first statement's rows are the cursor's
        f"DELETE FROM sections WHERE note_id = ANY({listed}) RETURNING id",
        f"DELETE FROM tags WHERE note_id = ANY({listed})",
        f"DELETE FROM links WHERE note_id = ANY({listed})",
    ]
    if rows:
        statements.append(f"DELETE FROM notes WHERE id = ANY({pg_postings.id_array(rows)})")
    parts = [int(r[0]) for r in conn.execute("; ".join(statements)).fetchall()]
    pg_postings.delete_documents(conn, ids, NOTES, word_terms=word_terms)
    pg_postings.delete_documents(conn, parts, PARTS, word_terms=word_terms)


class Sender:
    """Sends one batch at a time on a thread of its own. The connection is the caller's:
    it must run nothing else until `wait` (or `settle`) returns."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self, batch: Batch, send: Callable[[Batch], None]) -> None:
        self.wait()

        def run() -> None:
            try:
                send(batch)
            except BaseException as exc:  # handed to the caller's thread by wait()
                self._error = exc

        self._thread = threading.Thread(target=run, name="lore-pg-batch", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Until the batch being sent is in; its error, if it failed, is raised here."""
        self.settle()
        error, self._error = self._error, None
        if error is not None:
            raise error

    def settle(self) -> None:
        """Until the batch being sent is in or failed (its error kept for `wait`)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
