"""The storage interface: everything lore asks of an index, typed, with no SQL.

lore.store.sqlite.SqliteStore is the default backend (one SQLite file: FTS5 over our own
token stream, sqlite-vec for vectors). A second backend (PostgreSQL: tsvector over the same
tokens, pgvector) implements this same Protocol; every layer above the store is written
against it, never against a database:

- lexical ranking is BM25 over the token stream with per-field weights (title, tags,
  summary, body) plus a per-term document-frequency table (`document_frequencies`);
- a query arrives as a TextQuery and filters as Filters (lore.store.query), which each
  backend compiles in its own language: no caller writes a fragment of SQL;
- vectors are found by KNN (`knn`) and read back by id; their identity and dimension are
  recorded in meta;
- writes happen inside `transaction()` (all or nothing), reads that must agree inside
  `snapshot()`; `generation()` changes whenever the index does (what caches key on);
- `Error` is the backend's database error: `lore doctor` reports it as a damaged index.

Rows come back as the plain models of lore.store.rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .query import Filters, TextQuery

if TYPE_CHECKING:  # annotations only: each row type is made where it is read
    from .interest_rows import ClusterRow, MemberRow, NoteInfo
    from .note_rows import NameSource, NoteRecord, NoteRow, NoteText, StoredNote, Unreadable
    from .rows import HitRow, NameRow, PinyinName
    from .search import PendingParts
    from .token_rows import StoredToken, TokenRow
    from .transfer_rows import CachedAnswer, VectorKey
    from .vector_rows import NoteSource, TextSpan

# (kind, seq, hash, start, end, heading) of one text to embed
PlannedText = tuple[str, int, str, int, int, str | None]


class Store(Protocol):
    Error: type[Exception]
    read_only: bool

    @property
    def db_path(self) -> Path | str:
        """Where the index is: its file, or its database URL without the password."""
        ...

    def close(self) -> None: ...

    # -- transactions, read snapshots, the generation counter, meta ----------------------
    def transaction(self) -> AbstractContextManager[None]:
        """BEGIN IMMEDIATE … COMMIT; any exception rolls everything back (once: SQLite may have
        rolled back already, e.g. when the disk filled up)."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """A read transaction: every query inside sees the same committed state."""
        ...

    @property
    def in_transaction(self) -> bool: ...
    def generation(self) -> tuple[int, int]:
        """Changes whenever the index does, by this connection or another: what caches of derived
        views (entity registry, link targets) are keyed by."""
        ...

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def delete_meta(self, *keys: str) -> None: ...
    def all_meta(self) -> dict[str, str]: ...

    # -- notes: what the sync writes, single notes, names, tags, dates -------------------
    def stored_notes(self) -> dict[str, StoredNote]: ...
    def note_stamps(self) -> Iterator[tuple[str, int, int]]:
        """(path, mtime_ns, size) of every note, read a page at a time."""
        ...

    def stored_notes_of(
        self, paths: Sequence[str], *, hashes: bool = True
    ) -> dict[str, StoredNote]: ...
    def unreadable(self) -> dict[str, Unreadable]: ...
    def mark_unreadable(self, path: str, mtime_ns: int, size: int, reason: str) -> None: ...
    def clear_unreadable(self, path: str) -> None: ...
    def reinsert_fts(self, note_id: int, fields: tuple[str, str, str, str]) -> None: ...
    def insert_sections(self, note_id: int, sections: list[tuple[int, int, str]]) -> None:
        """A note's body parts (start, end, token stream): lore.derive.sections."""
        ...

    def clear_search_index(self) -> None:
        """Empty the full-text index and the document frequencies (rebuild re-fills them), and drop
        tag and link rows that belong to no note (rebuild re-derives the rest)."""
        ...

    def update_stat(self, note_id: int, mtime_ns: int, size: int) -> None: ...
    def upsert_note(self, row: NoteRow, note_id: int | None) -> int: ...
    def delete_note(self, note_id: int) -> None: ...
    def note_fields(self, note_id: int) -> tuple[str, dict[str, Any], str, list[str], str, str]:
        """(title, front matter, path, tags, summary, body) as stored, to re-derive old terms
        (lore.derive.fields.note_fts_fields)."""
        ...

    def notes_fields(
        self, note_ids: Sequence[int]
    ) -> dict[int, tuple[str, dict[str, Any], str, list[str], str, str]]:
        """note_fields of each of these notes (those in the index): two statements."""
        ...

    def apply_df(self, delta: dict[str, int]) -> None: ...
    def has_notes(self) -> bool: ...
    def has_note(self, path: str) -> bool: ...
    def note_record(self, path: str) -> NoteRecord | None: ...
    def path_for_id(self, note_id: str) -> str | None:
        """The path of the note whose front matter says `id: <note_id>` (first by path)."""
        ...

    def notes_maybe_named(self, name: str) -> list[tuple[str, str, dict[str, Any]]]:
        """(path, title, front matter) of the notes whose title, file name or front matter may hold
        `name` (by path): the candidates the caller matches names against."""
        ...

    def all_paths(self) -> list[str]: ...
    def truncated_paths(self) -> list[str]: ...
    def tag_counts(self, allow: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """Every tag (as first written, by case-folded key) with how many notes carry it, most used
        first, ties by tag; only the notes `allow` lets through count (None: every note)."""
        ...

    def counts(self, allow: Sequence[str] | None = None) -> dict[str, int]:
        """notes, distinct tags and links of the notes `allow` lets through."""
        ...

    def indexed_hash(self, path: str) -> str | None:
        """The content hash the index holds for the note at `path` (None: not indexed)."""
        ...

    def dated_between(self, since: str, until: str) -> list[tuple[int, str, str, str]]:
        """(id, path, title, date) of notes dated in [since, until], newest first."""
        ...

    def newest_date(self, until: str) -> str | None: ...
    def undated_count(self) -> int: ...
    def tags_with_keys(self, note_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
        """note id → its (tag, tag_key) in order."""
        ...

    def frontmatter_texts(self) -> list[tuple[str, str]]:
        """(path, front matter as stored JSON) of every note, by path."""
        ...

    def bodies(self) -> list[tuple[str, str]]:
        """(path, body) of every note, by path."""
        ...

    # -- lexical ranking, filters, the rows of hits and channels -------------------------
    def describe(self, query: TextQuery) -> str:
        """The query as this backend runs it, for --explain (the every-note token spelled out)."""
        ...

    def note_count(self, allow: tuple[str, ...] | None = None) -> int: ...
    def document_frequencies(
        self, tokens: list[str], allow: tuple[str, ...] | None = None
    ) -> dict[str, int]:
        """token → notes holding it (any field); within `allow` when given."""
        ...

    def rank(
        self, query: TextQuery, filters: Filters, limit: int, weights: list[float]
    ) -> list[tuple[int, float]]:
        """(note id, BM25 score as a positive number) for the best `limit` notes, ties by path."""
        ...

    def rank_sections(
        self, query: TextQuery, filters: Filters, limit: int, ids: list[int] | None = None
    ) -> dict[int, tuple[float, int, int]]:
        """note id -> (BM25 of its best part as a positive number, the part's start and end
        in the body), over the best `limit` parts that pass the filters and every part of
        the `ids` notes, in one pass. The query's fields are ignored: a part is body text."""
        ...

    def start_sections(self, query: TextQuery, filters: Filters, limit: int) -> PendingParts:
        """rank_sections begun before the `ids` are known (the other channels' candidates):
        its `finish(ids)` gives the same, and a backend may rank meanwhile."""
        ...

    def count_matches(self, query: TextQuery, filters: Filters) -> int:
        """Notes the query matches that pass the filters."""
        ...

    def field_scores(
        self, query: TextQuery, ids: list[int], weights: list[float]
    ) -> dict[int, dict[str, float]]:
        """Each note's BM25 score with one field's weight alone, per field."""
        ...

    def holding(self, query: TextQuery) -> set[int]:
        """Ids of the notes that match the query (one pass over its phrases' notes)."""
        ...

    def keep_filtered(self, ids: list[int], filters: Filters) -> list[int]:
        """The ids (in order) that pass the filters."""
        ...

    def hit_rows(self, ids: list[int]) -> dict[int, HitRow]: ...
    def paths_of(self, ids: list[int]) -> dict[int, str]: ...
    def name_candidates(self, query: TextQuery, filters: Filters, pool: int) -> list[int]:
        """The best `pool` notes by BM25 of the query in their names (the title field)."""
        ...

    def name_rows(self, ids: list[int]) -> list[NameRow]: ...
    def tag_holders(
        self, keys: Sequence[str], *, derived: bool, limit: int
    ) -> dict[str, list[tuple[int, str]]]:
        """Per tag, (note id, tag key) of at most `limit` notes carrying it: the author's tags
        by case-folded text, or (`derived`) the LLM's tags by token key."""
        ...

    def tag_holders_among(
        self, keys: list[str], ids: list[int], *, derived: bool
    ) -> list[tuple[int, str]]:
        """(note id, tag key) of these notes carrying any of the tags."""
        ...

    def nudge_rows(self, ids: list[int]) -> list[tuple[int, Any, Any]]:
        """(id, priority, date) of these notes."""
        ...

    # -- pinyin of names and tags (lore.derive.pinyin; the sync writes, the name channel reads)
    def pinyin_sources(self, ids: Sequence[int] | None) -> Iterator[NameSource]:
        """The names of these notes (every note when None), by id, a chunk at a time."""
        ...

    def clear_pinyin(self, note_ids: Iterable[int] | None) -> None:
        """Drop the pinyin rows of these notes (of every note when None)."""
        ...

    def add_pinyin(self, note_id: int, names: Sequence[PinyinName], keys: Iterable[str]) -> None:
        """A note's names in order and its candidate keys (inside a transaction)."""
        ...

    def pinyin_candidates(self, words: Sequence[str], filters: Filters, limit: int) -> list[int]:
        """Up to `limit` notes per word with a key that starts with the word, that pass the
        filters."""
        ...

    def pinyin_names(self, ids: Sequence[int]) -> dict[int, list[PinyinName]]:
        """note id → its names with their units, in order."""
        ...

    def pinyin_name_count(self, allow: Sequence[str] | None = None) -> int:
        """Names and tags with pinyin of the notes `allow` lets through (None: every note)."""
        ...

    # -- vectors (KNN), the semantic layer, model answers --------------------------------
    def load_vec(self) -> None:
        """Load sqlite-vec into this connection (once); a clear error when it is missing."""
        ...

    def vectors_unavailable(self) -> str | None:
        """Why this index cannot hold vectors (None: it can), changing nothing: what
        `lore status` says before `lore embed` would fail."""
        ...

    def embed_identity(self) -> tuple[str | None, int | None]:
        """(provider identity, dimension) of the stored vectors, as recorded in meta."""
        ...

    def knn(self, vector: bytes, k: int, space: str) -> list[tuple[int, float]]:
        """(vector id, cosine distance) of the `k` nearest vectors in `space`."""
        ...

    def text_spans(self, vector_ids: Iterable[int], space: str) -> list[TextSpan]:
        """The note texts these vectors belong to, by note, kind (passages first), seq."""
        ...

    def vector_ids_of(self, note_ids: list[int], identity: str, space: str) -> list[int]: ...
    def vector(self, vector_id: int) -> bytes | None: ...
    def vectors(self, vector_ids: list[int]) -> dict[int, bytes]: ...
    def note_vectors(self, identity: str) -> list[tuple[int, str, int, str]]:
        """(note id, kind, vector id, text hash) of every summary and tag text with a vector of
        `identity`."""
        ...

    def has_vectors(self) -> bool: ...
    def vector_count(self) -> int: ...
    def drop_vectors(self) -> None:
        """Forget every vector and the recorded identity (in one transaction)."""
        ...

    def missing_vectors(self, identity: str) -> list[tuple[int, str]]:
        """(note id, path) of notes with a text that has no vector for `identity`."""
        ...

    def embedded_keys(self, identity: str, hashes: list[str]) -> set[tuple[str, str]]:
        """(hash, space) of these texts that have a vector of `identity`."""
        ...

    def planned_keys(self, note_id: int) -> set[tuple[str, str]]:
        """(hash, kind) of the texts planned for a note."""
        ...

    def ensure_vector_table(self, dim: int) -> None: ...
    def add_vector(self, text_hash: str, identity: str, space: str, blob: bytes) -> None:
        """Store one vector (inside a transaction)."""
        ...

    def has_unused_vectors(self) -> bool: ...
    def drop_unused_vectors(self) -> int:
        """Drop vectors whose text no note uses any more (inside a transaction)."""
        ...

    def note_sources(self, ids: list[int]) -> dict[int, NoteSource]:
        """The stored fields of these notes, with all their tags."""
        ...

    def author_tags(self, ids: list[int]) -> dict[int, list[str]]: ...
    def semantic_stale(self, version: str) -> list[tuple[int, str]]:
        """(id, hash) of notes whose derived rows are not of this hash and version."""
        ...

    def semantic_orphans(self) -> bool: ...
    def drop_semantic_orphans(self, *, everything: bool = False) -> None:
        """Drop derived rows of deleted notes (`everything`: forget every note's state)."""
        ...

    def replace_derived_tags(
        self, note_id: int, tags: list[tuple[str, str, int]], origin: str, *, drop: tuple[str, ...]
    ) -> None:
        """Drop the note's derived tags of the origins `drop`, then add `tags` ((tag, key, position)
        triples) with `origin`."""
        ...

    def write_texts(self, note_id: int, texts: list[PlannedText]) -> None: ...
    def mark_derived(self, note_id: int, note_hash: str, version: str) -> None: ...
    def notes_without_llm_tags(self) -> list[tuple[int, str, str]]:
        """(id, title, body) of notes the LLM has not tagged yet, by path."""
        ...

    def cached_answer(self, key: str) -> Any | None: ...
    def cache_answer(
        self, key: str, task: str, model: str, version: str, digest: str, answer: Any
    ) -> None: ...

    # -- agent memory: entities, mentions, edges, entries --------------------------------
    def delete_for(self, note_ids: Iterable[int]) -> None: ...
    def delete_all(self) -> None: ...
    def delete_mentions(self, note_ids: Iterable[int] | None) -> None: ...
    def insert_rows(self, table: str, rows: list[tuple[Any, ...]]) -> None: ...
    def note_ids(self, paths: Iterable[str] | None) -> Sequence[int]:
        """The ids of the notes at `paths` (every note when None), in path order."""
        ...

    def notes_matching(self, phrases: Iterable[str]) -> dict[str, set[int]]:
        """phrase → ids of the notes whose full text holds it (phrases are token streams, letters
        and digits only, so quoting is safe): the full-text index as a prefilter."""
        ...

    def note_texts_by_id(self, ids: Sequence[int]) -> Iterator[NoteText]:
        """The stored text of notes by id, in the order given, read a chunk at a time: a first sync
        of a large vault never holds every note's text at once."""
        ...

    def entity_rows(self) -> list[dict[str, Any]]:
        """Every entity definition with its note's path, date and priority, and its aliases."""
        ...

    def mentions_of(
        self, entity_key: str, allow: Sequence[str] | None
    ) -> list[tuple[str, str | None, int, int, str]]:
        """(path, date, count, line, title) of the notes mentioning an entity, newest first."""
        ...

    def latest_mentions(
        self, allow: Sequence[str] | None, until: str
    ) -> dict[str, tuple[str, str, int]]:
        """entity key → (latest date, path, line) over the notes that mention it and carry a date of
        their own (front matter or file name: a file's mtime is not a dated mention), up to
        `until`."""
        ...

    def mention_totals(self, allow: Sequence[str] | None) -> dict[str, tuple[int, int]]:
        """entity key → (notes mentioning it, mentions in all)."""
        ...

    def edges(self, allow: Sequence[str] | None) -> list[dict[str, Any]]: ...
    def note_keys(self, allow: Sequence[str] | None) -> list[tuple[str, str, str]]:
        """(path, title, date) of every note the rules allow: what a link may resolve to."""
        ...

    def entries(
        self,
        allow: Sequence[str] | None,
        *,
        kinds: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
        since: str | None = None,
    ) -> list[dict[str, Any]]:
        """Memory entries (daily-note sections and items, core-file lines), by path and order."""
        ...

    def dated_notes(
        self, allow: Sequence[str] | None, since: str, until: str
    ) -> list[tuple[str, str, str, int | None, bool]]:
        """(path, title, date, priority, pinned) of notes dated in [since, until], newest first."""
        ...

    def note_bodies(self, paths: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        """path → (body, body_line, headings JSON) for the given paths."""
        ...

    # -- the interest map ----------------------------------------------------------------
    def interest_notes(self) -> list[NoteInfo]:
        """Every note, by path, dated only by a date of its own."""
        ...

    def all_tags(self) -> list[tuple[int, str, str]]:
        """(note id, tag, origin) of every author and derived tag, by note, tag, origin."""
        ...

    def tag_sets(self) -> dict[int, set[str]]:
        """note id → every tag it carries (author and derived)."""
        ...

    def titles_and_summaries(self, ids: Sequence[int]) -> Iterator[tuple[int, str, str]]:
        """(id, title, summary) of these notes, a chunk at a time (in no set order)."""
        ...

    def notes_digest(self) -> str:
        """A digest of every indexed note's (path, content hash): changes when the index does."""
        ...

    def interest_meta(self) -> dict[str, str]: ...
    def next_cluster_id(self) -> int: ...
    def previous_members(self) -> dict[int, set[str]]:
        """cluster id → member paths of the stored map (empty before the first build)."""
        ...

    def write_map(
        self,
        clusters: Sequence[tuple[ClusterRow, Sequence[MemberRow]]],
        centroids: Mapping[int, bytes],
        meta: Mapping[str, str],
    ) -> None:
        """Replace the stored map (clusters in map order, members most representative first), in one
        transaction."""
        ...

    def stored_map(self) -> tuple[dict[str, str], list[ClusterRow], list[MemberRow]] | None:
        """(meta, clusters in map order, members in rank order), or None before the first `lore
        clusters build`."""
        ...

    # -- what `lore migrate` copies (lore.store.transfer) --------------------------------
    def cached_answers(self) -> list[CachedAnswer]:
        """Every cached model answer, by key."""
        ...

    def vector_keys(self) -> list[VectorKey]:
        """Every stored vector's key (text hash, identity, space), by id."""
        ...

    def map_centroids(self) -> dict[int, bytes]:
        """cluster id → its centroid (float32 bytes) in the stored interest map."""
        ...

    def stored_tokens(self) -> list[StoredToken]:
        """Every access token with the hash of its secret, by name."""
        ...

    # -- `lore serve`'s access tokens (lore.tokens; not derived: rebuild keeps them) -----
    def add_token_row(self, row: TokenRow, secret_hash: str) -> None: ...
    def token_by_name(self, name: str) -> TokenRow | None: ...
    def token_by_hash(self, secret_hash: str) -> TokenRow | None: ...
    def token_rows(self) -> list[TokenRow]:
        """Every token, by name."""
        ...

    def revoke_token_row(self, name: str, when: str) -> bool:
        """Mark `name` revoked; False when there is no such valid token."""
        ...

    def touch_token(self, name: str, when: str) -> None:
        """Record a use (`when` is to the minute: at most one write per token and minute)."""
        ...

    # -- integrity checks (lore doctor) --------------------------------------------------
    def engine(self) -> dict[str, str]:
        """The backend and the versions of its engine and extensions (status and doctor
        name them): {"backend": "sqlite", "sqlite": …, "sqlite-vec": …} or {"backend":
        "postgresql", "server": …, "pgvector": …}; an extension not there says so."""
        ...

    def reset_command(self) -> list[str]:
        """The command (argv) that deletes this index, for doctor to name when the index is
        beyond repair: the file and its side files, or the vault's schema on a server."""
        ...

    def migrations(self) -> list[str]:
        """The names of this backend's migrations, in order (schema_version counts them)."""
        ...

    def expected_tables(self) -> set[str]: ...
    def table_definitions(self) -> dict[str, str]:
        """table name → its CREATE statement."""
        ...

    def vector_dimension(self) -> str | None:
        """The dimension the vector table declares (None: no vector table)."""
        ...

    def row_count(self, table: str) -> int:
        """Rows of one of lore's tables (a name from table_definitions)."""
        ...

    def fts_check(self) -> str | None:
        """Run FTS5's integrity check; None when healthy, else the error text."""
        ...

    def df_drift(self) -> int:
        """Terms whose recorded document frequency differs from what the FTS index holds."""
        ...

    def orphan_rows(self, table: str) -> int:
        """Rows of a per-note table (or of the FTS index: "fts") whose note is gone."""
        ...

    def unkeyed_vectors(self) -> int:
        """Vector keys without a vector."""
        ...

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """PRAGMA integrity_check: ["ok"] when the file is sound."""
        ...
