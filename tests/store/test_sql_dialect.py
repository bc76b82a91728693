"""The dialect both backends' shared statements are written in (lore.store.sql_base, issue 15):
`?` parameters that the PostgreSQL backend rewrites for psycopg, never inside a literal, a
quoted name or a comment; IN lists, access rules and the true literal, run on a real SQLite
file and a real PostgreSQL server."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lore.store.pg_names import psycopg_sql
from lore.store.postgres import PostgresStore
from lore.store.sql_base import SqlBase
from lore.store.sqlite import SqliteStore

# Pieces of a statement: text around the parameters (no quote, comment or `?` of its own),
# and what a `?` may stand inside without being a parameter.
_TEXT = st.text(alphabet="abc xyz,=()*:01\n", max_size=8)
_INSIDE = st.text(alphabet="ab?%$- \n*/\\", max_size=6)
_LITERALS = st.one_of(
    _INSIDE.map(lambda s: "'" + s.replace("'", "''") + "'"),
    _INSIDE.filter(lambda s: "\\" not in s).map(lambda s: "E'" + s + "'"),
    _INSIDE.map(lambda s: '"' + s.replace('"', '""') + '"'),
    _INSIDE.filter(lambda s: "$$" not in s and not s.endswith("$")).map(lambda s: f"$${s}$$"),
    _INSIDE.filter(lambda s: "\n" not in s).map(lambda s: f"--{s}\n"),
    _INSIDE.filter(lambda s: "*/" not in s and not s.endswith("*")).map(lambda s: f"/*{s}*/"),
)


@given(st.lists(st.tuples(_TEXT, st.one_of(st.just("?"), _LITERALS)), max_size=8))
def test_only_parameters_become_psycopg_placeholders(pieces: list[tuple[str, str]]) -> None:
    sql = "".join(f" {text} {piece}" for text, piece in pieces)
    expected = "".join(f" {text} {'%s' if piece == '?' else piece}" for text, piece in pieces)
    assert psycopg_sql(sql) == expected


def test_psycopg_placeholders_of_its_own_pass_through() -> None:
    assert psycopg_sql("SELECT %(v)s, ? WHERE a = %s") == "SELECT %(v)s, %s WHERE a = %s"
    assert psycopg_sql("x = ?::regclass AND j ->> 'a?'") == "x = %s::regclass AND j ->> 'a?'"


def _run_shared(store: SqlBase) -> list[tuple[object, ...]]:
    """One statement as the shared code writes it, run on a backend."""
    kinds, params = store.in_list("k", ["a?", "b"])
    none, none_params = store.in_ids("k", [])
    allowed, globs = store.allow_sql(["notes/*"], column="p")
    return store.query(
        "SELECT k, '?' AS q, \"p\" FROM (SELECT ? AS k, ? AS p UNION ALL SELECT ?, ?) t"
        f" WHERE ({kinds} OR {none}) AND {store.TRUE}{allowed} -- a ? in a comment\n"
        " ORDER BY k",
        ["a?", "notes/x.md", "c", "notes/y.md", *params, *none_params, *globs],
    )


def test_a_shared_statement_gives_the_same_rows_on_both_backends(
    tmp_path: Path, pg_url: str
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    sqlite = SqliteStore(tmp_path / "index.sqlite", vault, bound_to_vault=False)
    postgres = PostgresStore(pg_url, vault)
    try:
        expected = [("a?", "?", "notes/x.md")]
        assert [tuple(r) for r in _run_shared(sqlite)] == expected
        assert [tuple(r) for r in _run_shared(postgres)] == expected
        for store in (sqlite, postgres):  # no rules allow nothing
            where, params = store.allow_sql([])
            assert store.query(f"SELECT 1 WHERE {store.TRUE}{where}", params) == []
    finally:
        sqlite.close()
        postgres.close()
