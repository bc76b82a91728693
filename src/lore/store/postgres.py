"""The PostgreSQL storage backend ([postgres] extra, issue 15): `--db postgresql://…`.

The same Store protocol as lore.store.sqlite.SqliteStore, over the same token stream, so
the same notes and the same query give the same ranking on either backend: full text is
FTS5's bm25 reproduced exactly (lore.store.pg_lexical), vectors are pgvector's (HNSW,
cosine). A vault is a schema of its own in the database (lore.store.pg_base), bound to the
vault folder it was made for, as an SQLite index outside its vault is. The SQL is split by
area into mixins over one connection: notes, search, pinyin, vectors, memory, interest,
checks; what both backends share is written once (lore.store.sql_base), what is
PostgreSQL's own is in the pg_* modules.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SchemaError, VaultMismatchError
from .interest import InterestSql
from .pg_checks import PgChecks
from .pg_memory import PgMemory
from .pg_names import namespace_for, redacted
from .pg_notes import PgNotes
from .pg_schema import MIGRATIONS, SCHEMA_VERSION
from .pg_search import PgSearch
from .pg_vectors import PgVectors
from .pinyin import PinyinSql
from .sqlite import TOKENIZER_VERSION
from .tokens import TokenSql
from .transfer import TransferSql

__all__ = ["PostgresStore"]


class PostgresStore(
    PgNotes,
    PgSearch,
    PinyinSql,
    PgVectors,
    PgMemory,
    InterestSql,
    PgChecks,
    TransferSql,
    TokenSql,
):
    """One vault's index in a PostgreSQL database. Not thread-safe: one store per thread."""

    def __init__(self, url: str, vault_root: Path) -> None:
        self.url = redacted(url)
        self.vault_root = vault_root
        self.read_only = False
        libpq_url, self.namespace = namespace_for(url, vault_root)
        self._connect(libpq_url)
        try:
            self._prepare()
        except BaseException:
            self.conn.close()
            raise

    def _prepare(self) -> None:
        from psycopg import sql

        schema = sql.Identifier(self.namespace)
        self.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema).as_string(self.conn))
        # public last: pgvector's type lives there. Each statement planned for its own
        # values: psycopg prepares a statement run often, and a generic plan knows neither
        # how long an id list is nor how common a term (a search took 30x longer).
        self.execute(
            sql.SQL("SET search_path = {}, public; SET plan_cache_mode = force_custom_plan")
            .format(schema)
            .as_string(self.conn)
        )
        if self._peek_version() != SCHEMA_VERSION:
            self._migrate()
        recorded = self.get_meta("vault_root")
        if recorded != str(self.vault_root):
            raise VaultMismatchError(
                f"the vault {self.namespace} in {self.url} belongs to {recorded},"
                f" not {self.vault_root}",
                hint="pass that vault, or name another with vault=NAME in the URL",
            )

    def _peek_version(self) -> int | None:
        """The schema version, read without the write lock (None: no lore index yet): a
        schema already up to date is opened without waiting for a sync in progress."""
        if not self._scalar("SELECT to_regclass('meta') IS NOT NULL"):
            return None
        value = self.get_meta("schema_version")
        return int(value) if value is not None and value.isdigit() else None

    def _migrate(self) -> None:
        """Make the schema, or bring it up to date, under the vault's write lock."""
        with self.transaction():
            version = self._schema_version()
            if version > SCHEMA_VERSION:
                raise SchemaError(
                    f"the vault {self.namespace} in {self.url} was written by a newer lore"
                    f" (schema {version}, this lore knows {SCHEMA_VERSION})",
                    hint="upgrade lore, or index the vault under another vault= name",
                )
            for _name, migrate in MIGRATIONS[version:]:
                migrate(self.execute)
            if version < SCHEMA_VERSION:
                self.set_meta("schema_version", str(SCHEMA_VERSION))
            if version == 0:
                self.set_meta("tokenizer_version", TOKENIZER_VERSION)
                self.set_meta("vault_root", str(self.vault_root))
                self.mark_empty_lexicons()

    def _schema_version(self) -> int:
        """How many migrations the vault's schema has had (0: a new, empty schema)."""
        if not self._scalar("SELECT to_regclass('meta') IS NOT NULL"):
            if self._scalar(
                "SELECT count(*) FROM pg_tables WHERE schemaname = ?", (self.namespace,)
            ):
                raise SchemaError(
                    f"the schema {self.namespace} in {self.url} holds tables but no lore index",
                    hint="name another with vault=NAME in the URL",
                )
            return 0
        value = self.get_meta("schema_version")
        if value is None or not value.isdigit():
            raise SchemaError(
                f"the vault {self.namespace} in {self.url} records no schema version",
                hint="drop the schema and run `lore index`: it is rebuilt from the files",
            )
        return int(value)

    @property
    def db_path(self) -> str:
        """The database URL without its password (what messages name)."""
        return self.url

    def close(self) -> None:
        self.conn.close()
