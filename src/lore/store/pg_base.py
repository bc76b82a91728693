"""The PostgreSQL connection every part of the PostgreSQL store shares ([postgres] extra,
issue 15): the database URL, the vault's namespace, transactions, read snapshots, meta and
the generation counter. The parts (notes, search, vectors, memory, interest, checks) are
mixins over this class; lore.store.postgres puts them together.

- A vault is a schema of its own in the database (the connection's `search_path`), so one
  database holds several vaults, each with its own notes and statistics. Its name is the
  URL's `vault=` parameter, else one made from the vault folder's name.
- Credentials come from the URL or the standard PG* variables (libpq reads them); the URL
  is shown in messages only with its password removed (lore.store.pg_names.redacted).
- A write transaction takes a transaction-scoped advisory lock on the vault's schema: two
  syncs of one vault are serialised (the second waits up to BUSY_TIMEOUT_MS, then says
  "busy"), syncs of different vaults run in parallel, readers never wait. Readers see
  only committed transactions: never a half-applied sync.
- A sync's new rows are held in a batch (lore.store.pg_batch) and sent before any other
  statement of the connection runs, before the commit, and (by a thread of its own) when
  the batch is full: every statement sees every write made before it.
- Statements may be written with `?` parameters, as the statements both backends share
  are (lore.store.sql_base): lore.store.pg_names.psycopg_sql turns each into `%s`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import ConfigError, IndexBusyError, IndexError_, install_hint
from .jieba_words import WordTerms, installed_words
from .pg_batch import Batch, Sender
from .pg_cache import ReadCache
from .pg_names import lock_key, psycopg_sql
from .pg_phrases import recorded_words
from .pg_postings import MAX_LOAD_CHARACTERS, flush_loaded, stage_tables
from .pg_schema import ANY_BLOCK, NOTES, RECORDS_META, WORDS_META
from .sql_base import SqlBase

if TYPE_CHECKING:
    import psycopg

    from .pg_schema import Lexicon

BUSY_TIMEOUT_MS = 5_000
SYNC_RANDOM_PAGE_COST = 1.1
# A write that changes this many notes, and this share of the vault's, refreshes the
# planner's statistics before it commits (PostgreSQL's own autoanalyze threshold: 50 rows
# and 10%) and vacuums the tables once committed: see PgBase._refresh_statistics, _vacuum.
ANALYZE_MIN_NOTES = 50
ANALYZE_SHARE = 0.1


class PgBase(SqlBase):
    """An open psycopg connection (autocommit outside `transaction()` and `snapshot()`)."""

    TRUE, FALSE = "true", "false"
    DRIVING_JOIN = "JOIN"  # PostgreSQL's planner picks the order itself
    CHUNK = 5000  # values per array parameter: a round trip each, no limit to stay under
    AUTHOR_CATEGORY = (
        "CASE WHEN jsonb_typeof(n.frontmatter::jsonb -> 'category') = 'string'"
        " THEN trim(n.frontmatter::jsonb ->> 'category') END"
    )
    CLAIM_LINES = (
        "coalesce((SELECT string_agg(chr(10) || (claim.value ->> 'text'), '' ORDER BY claim.i)"
        " FROM jsonb_array_elements(l.claims::jsonb) WITH ORDINALITY claim(value, i)), '')"
    )
    JSON_LENGTH = "jsonb_array_length({}::jsonb)"
    BYTE_LENGTH = "octet_length({})"
    CONTAINS = "strpos({}, ?) > 0"

    Error: type[Exception]
    conn: psycopg.Connection[Any]
    url: str  # redacted: safe to show
    namespace: str
    read_only: bool
    _statements: int = 0  # statements this connection ran (the generation's second half)
    busy_timeout_ms: int = BUSY_TIMEOUT_MS  # how long a write waits for another writer
    _batch: Batch  # new rows not sent yet (lore.store.pg_batch)
    _sender: Sender  # the thread sending the batch before it, if any
    _staged: bool = False  # this session has the stage tables (lore.store.pg_postings)
    _next_ids: dict[str, int]  # the next id of a table, counted in this transaction
    _notes_written: int = 0  # notes indexed or dropped (or their texts planned) in this transaction
    _vectors_unanalysed: int = 0  # vectors written since the tables were last analysed
    _vacuum_due: tuple[str, ...] = ()  # the tables this transaction analysed (quoted)
    read_cache: ReadCache  # what reads of one generation share (lore.store.pg_lexical)
    _word_terms: WordTerms | None = None  # the words written as terms (None: not read)
    _reading: ReadCache | None = None  # read_cache, inside a read snapshot

    def _connect(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise ConfigError(
                "a postgresql:// index needs the PostgreSQL client (psycopg)",
                hint=install_hint("postgres"),
            ) from None
        if importlib.util.find_spec("numpy") is None:  # its searches score with it (pg_bm25)
            raise ConfigError("a postgresql:// index needs numpy", hint=install_hint("postgres"))
        self.Error = psycopg.Error
        self._batch, self._next_ids, self._sender = Batch(), {}, Sender()
        self._loaded: set[Lexicon] = set()  # the full-text indexes with postings deferred
        self._loads = 0  # batches deferred so far (numbered for the load tables)
        self._load_characters = 0  # characters of the documents waiting in the load tables
        self.read_cache = ReadCache()
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise IndexError_(
                f"cannot connect to {self.url}: {self._without_secrets(why, url)}",
                hint="check that the server runs and the URL (or PG* variables) are right",
            ) from None

    def _without_secrets(self, text: str, url: str) -> str:
        password = urlsplit(url).password
        return text.replace(password, "***") if password else text

    # -- statements ----------------------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one SQL statement (PostgreSQL backend only: for lore.store and tests)."""
        self._send_batch()
        with self._connected():
            cur = self.conn.execute(psycopg_sql(sql), params)
            return list(cur.fetchall()) if cur.description is not None else []

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run one statement; the rows it changed."""
        self._statements += 1
        self._send_batch()
        with self._connected():
            return int(self.conn.execute(psycopg_sql(sql), params).rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._statements += 1
            self._send_batch()
            with self._connected(), self.conn.cursor() as cur:
                cur.executemany(psycopg_sql(sql), rows)

    @contextmanager
    def _connected(self) -> Iterator[None]:
        """A lost connection (the server stopped, restarted, or ended this session) is one
        line naming the database; the server rolls back whatever was not committed."""
        import psycopg

        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            if not (self.conn.closed or self.conn.broken):
                raise  # e.g. a lock timeout: the connection is still there
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise IndexError_(
                f"lost the connection to {self.url}: {why}; nothing uncommitted was kept",
                hint="check that the server runs, then run the command again",
            ) from None

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?)", [list(values)]

    def glob_match(self, column: str, pattern: str) -> tuple[str, Any]:
        from .pg_search import glob_regex

        return f"{column} ~ ?", glob_regex(pattern)

    def sub_tag_match(self, column: str, tag: str) -> tuple[str, Any]:
        return f"starts_with({column}, ?)", tag + "/"

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction under the vault's write lock; any exception rolls it all back."""
        import psycopg

        with self._connected(), self.conn.transaction():
            # Not counted as statements: taking the lock changes no generation (a sync keeps
            # what it compared before it unless a write landed).
            conn = self.conn
            try:
                conn.execute(f"SET LOCAL lock_timeout = {int(self.busy_timeout_ms)}")
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(self.namespace),))
                conn.execute("SET LOCAL lock_timeout = 0")
                # The index being written is in memory, mostly: a sync of a few notes looks
                # their rows up (the default, 4, is a disk's) rather than reading whole tables.
                conn.execute(f"SET LOCAL random_page_cost = {SYNC_RANDOM_PAGE_COST}")
            except psycopg.errors.LockNotAvailable:
                raise IndexBusyError(
                    f"index busy: another lore process is writing the vault {self.namespace}"
                    f" in {self.url}",
                    hint="wait for it to finish and try again",
                ) from None
            self._word_terms = None  # read under the lock: another process may have rebuilt
            self._vacuum_due = ()  # what this transaction analyses, once it has committed
            # What searches kept is of no use once this commits (the generation moves on):
            # let it go now, not at the next search, so the write has that memory.
            self.read_cache.clear()
            try:
                yield
                self._send_batch()  # everything written is in before the commit
                self._advance_sequences()
                self._refresh_statistics()
            except BaseException:
                self._staged = False  # stage tables this transaction made are rolled back
                self._loaded.clear()  # and the rows loaded into them
                self._load_characters = 0
                raise
            finally:
                # Sent, or rolled back with the rest: the sender's thread is done first, so
                # nothing it sends can land after the rollback, outside the transaction.
                self._sender.settle()
                self._batch, self._next_ids, self._sender = Batch(), {}, Sender()
                self._notes_written = 0
                self._word_terms = None
            self.execute("UPDATE generation SET n = n + 1")
        if not self.in_transaction:
            self._vacuum()

    def lexical(self) -> psycopg.Connection[Any]:
        """The connection, for lore.store.pg_lexical and pg_postings, with every write
        made so far sent."""
        self._send_batch()
        return self.conn

    def staging(self) -> psycopg.Connection[Any]:
        """`lexical()`, with the stage tables of lore.store.pg_postings made."""
        self._send_batch()
        self._stage()
        return self.conn

    def _stage(self) -> None:
        if not self._staged:
            with self._connected():
                self.conn.execute(stage_tables())
            self._staged = True

    # -- batched writes ----------------------------------------------------------------------

    def append_rows(
        self, table: str, columns: tuple[str, ...] | None, rows: list[tuple[Any, ...]]
    ) -> None:
        """New rows for a table, sent with the batch (columns None: all, in order)."""
        if rows:
            self._statements += 1
            self._batch.add_rows(table, columns, rows)
            self._batch_added()

    def append_documents(self, lx: Lexicon, documents: list[tuple[int, tuple[str, ...]]]) -> None:
        """Documents for a full-text index (lore.store.pg_postings), sent with the batch."""
        if documents:
            self._statements += 1
            if lx.docs == NOTES.docs:
                self._notes_written += len(documents)
            self._batch.add_documents(lx, documents)
            self._batch_added()

    def drop_note(self, note_id: int, *, row: bool) -> None:
        """Delete what is derived from a note (and, with `row`, its row) with the batch,
        before its rows (lore.store.pg_batch.Batch.drop)."""
        self._statements += 1
        self._notes_written += 1
        if note_id in self._batch.notes:
            self._send_batch()  # the note's new rows held go in first, then they go
        self._batch.drop(note_id, row=row)
        self._batch_added()

    def _batch_added(self) -> None:
        if not self.in_transaction:
            self._send_batch()
        elif self._batch.full:
            # A full batch is a large sync's: its postings are deferred (pg_postings).
            self._sender.start(self._batch, self._send_deferred)
            self._batch = Batch()

    def _send_batch(self) -> None:
        """Every write made so far is in: the batch being sent, then the one held, then
        the postings deferred."""
        self._sender.wait()
        if self._batch:
            self._send(self._batch)
        if self._loaded:
            with self._connected():
                self._flush_loaded()

    def _flush_loaded(self) -> None:
        """The deferred postings go in (their load tables emptied)."""
        if self._loaded:
            # An index made before block records, whose blocks are all to come: marked, in
            # the same round trip (a new index or a rebuild was marked as it began).
            mark = (
                f"INSERT INTO meta (key, value) SELECT '{RECORDS_META}', '12'"
                f" WHERE NOT {ANY_BLOCK} ON CONFLICT (key) DO NOTHING"
            )
            lexicons = sorted(self._loaded, key=lambda lx: lx.postings)
            self.conn.execute(f"{mark}; {flush_loaded(lexicons)}")
            self._loaded.clear()
        self._load_characters = 0

    def mark_empty_lexicons(self) -> None:
        """Record that the full-text indexes, empty now (a new index, a rebuild), get the
        installed dictionary's words of three and four characters as terms (none without a
        dictionary), and block records (lore.store.pg_records) in every block."""
        self.set_meta(RECORDS_META, "12")
        words = installed_words()
        if words.digest:
            self.set_meta(WORDS_META, words.digest)
        else:
            self.delete_meta(WORDS_META)
        self._word_terms = words

    def write_words(self) -> WordTerms:
        """The words the documents written now get terms for (lore.store.jieba_words):
        read once a transaction, under the write lock, on the connection alone (the batch's
        sending thread asks too). An index made with another dictionary than the one
        installed is marked as holding none from now on: a word is a term in every note
        or in none (its old terms stay, unread, until a rebuild)."""
        if self._word_terms is None:
            recorded, words = recorded_words(self.conn)
            if recorded and not words.digest:
                self.conn.execute("DELETE FROM meta WHERE key = %s", (WORDS_META,))
            if not self.in_transaction:
                return words
            self._word_terms = words
        return self._word_terms

    def _send_deferred(self, batch: Batch) -> None:
        self._send(batch, defer=True)

    def _send(self, batch: Batch, *, defer: bool = False) -> None:
        self._stage()
        with self._connected():
            if batch.dropped:
                # A dropped note's postings are looked up in the index: the load goes first.
                self._flush_loaded()
            # Once a load is pending, later batches join it: the postings go in together.
            load = None
            if defer or self._loaded:
                load = self._loads = self._loads + 1
            lexicons, characters = set(batch.documents), batch.characters
            batch.send(self.conn, load=load, word_terms=self.write_words())
            if load is not None:
                self._loaded |= lexicons
                self._load_characters += characters
                if self._load_characters >= MAX_LOAD_CHARACTERS:
                    self._flush_loaded()  # the load's disk is bounded, not the sync's

    def new_ids(self, table: str, n: int) -> list[int]:
        """`n` new ids for a table's `id` column (notes, sections), given as SQLite gives
        rowids: one past the largest, ascending. Inside a transaction (the vault's write
        lock) the largest is read once and the rest are counted here; the table's sequence
        is moved past them before the commit, for any insert that takes its default."""
        if not self.in_transaction:
            return sorted(
                int(r[0])
                for r in self.query(
                    "SELECT nextval(pg_get_serial_sequence(?, 'id')) FROM generate_series(1, ?)",
                    (table, n),
                )
            )
        first = self._next_ids.get(table)
        if first is None:
            first = int(self._scalar(f"SELECT coalesce(max(id), 0) + 1 FROM {table}"))
        self._next_ids[table] = first + n
        return list(range(first, first + n))

    def _refresh_statistics(self) -> None:
        """After a write that changed many of the vault's notes (a first index, a rebuild,
        a large sync), ANALYZE the vault's tables in the same transaction, so readers get
        the new rows and the statistics to plan for them at the same commit. Without them
        PostgreSQL planned for empty tables until autovacuum came by, a minute or so later:
        right after a first index of 10k notes, searches took up to 7 s (0.15 s once
        analysed). ANALYZE reads a sample of each table (30,000 rows by default).

        The vectors count across transactions (lore embed commits a batch at a time): not
        analysed, the tables that find a note's vectors were planned as empty and a search
        by meaning took 0.5 s at a thousand notes (0.15 s once analysed)."""
        changed = self._notes_written + self._vectors_unanalysed
        if changed < ANALYZE_MIN_NOTES:
            return
        if changed < ANALYZE_SHARE * int(self._scalar("SELECT count(*) FROM notes")):
            return
        tables = self.query(
            "SELECT c.relname FROM pg_class c WHERE c.relkind = 'r'"
            " AND c.relnamespace = current_schema()::regnamespace ORDER BY c.relname"
        )
        quoted = tuple('"' + str(name).replace('"', '""') + '"' for (name,) in tables)
        if quoted:
            self.execute(f"ANALYZE {', '.join(quoted)}")  # one statement, one round trip
            self._vacuum_due = quoted
        self._vectors_unanalysed = 0

    def _vacuum(self) -> None:
        """Once a write that analysed the tables has committed, VACUUM them (it cannot run
        inside a transaction). A first index rewrites each term's row as the batches add to
        its counts (3.7M dead rows at a million notes) and leaves no page marked all-visible;
        autovacuum came by later, throttled, and went through the 34 GB for tens of minutes,
        during which an edit of 10 notes synced in 92 s (16 s once vacuumed) and searches
        took 1.4x as long. VACUUM reads only the pages not yet all-visible: the ones the
        write touched. A table autovacuum has begun is taken from it (the server cancels an
        autovacuum in another's way after a second); one another sync holds (its ANALYZE,
        to its commit) is left after the write lock's wait: this write is done."""
        import psycopg

        tables, self._vacuum_due = self._vacuum_due, ()
        if not tables:
            return
        with self._connected():
            self.conn.execute(f"SET lock_timeout = {int(self.busy_timeout_ms)}")
            try:
                try:
                    self.conn.execute(f"VACUUM {', '.join(tables)}")  # one round trip
                except psycopg.errors.LockNotAvailable:
                    # The rest without waiting (those done are all-visible: cheap again).
                    self.conn.execute(f"VACUUM (SKIP_LOCKED) {', '.join(tables)}")
            finally:
                self.conn.execute("RESET lock_timeout")

    def _advance_sequences(self) -> None:
        for table, following in sorted(self._next_ids.items()):
            self.execute(
                "SELECT setval(s, greatest(?, coalesce(pg_sequence_last_value(s), 0)))"
                " FROM (SELECT pg_get_serial_sequence(?, 'id')::regclass AS s) q",
                (following - 1, table),
            )

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state."""
        if self.in_transaction:
            yield
            return
        self._send_batch()
        with self._connected():
            # Not counted as statements: a read changes no generation (what caches key on).
            self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            try:
                # The snapshot is taken here, not at BEGIN: what it sees is generation n.
                row = self.conn.execute("SELECT n FROM generation").fetchone()
                self._reading = self.read_cache.at(int(row[0]) if row else 0)
                yield
            finally:
                self._reading = None
                self.conn.execute("COMMIT")

    def snapshot_cache(self) -> ReadCache | None:
        """What the reads of this read snapshot's generation may share (None outside one,
        and in a write transaction: there the statistics change under the reader)."""
        return self._reading

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status != TransactionStatus.IDLE

    def generation(self) -> tuple[int, int]:
        """Changes whenever a write transaction of any connection commits, and whenever
        this connection runs a statement (as SQLite's total_changes does)."""
        return int(self._scalar("SELECT n FROM generation")), self._statements

    # -- meta ------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return None if not row else str(row[0][0])

    def set_meta(self, key: str, value: str) -> None:
        self.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def delete_meta(self, *keys: str) -> None:
        self.execute("DELETE FROM meta WHERE key = ANY(?)", (list(keys),))

    def all_meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.query("SELECT key, value FROM meta")}
