"""The PostgreSQL store as a place to keep indexes (issue 15): a vault per schema, bound to
its folder; transactions all or nothing; readers that never see half a sync; one writer per
vault; filters that let the same paths through as SQLite's; pgvector's nearest neighbours;
a URL's password never shown; the CLI end to end."""

from __future__ import annotations

import json
import math
import random
import struct
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from conftest import build_vault, one_line_naming
from hypothesis import given
from hypothesis import strategies as st

import lore
from lore.errors import IndexBusyError, IndexError_, VaultMismatchError
from lore.store.pg_base import ANALYZE_MIN_NOTES
from lore.store.pg_names import namespace_for, redacted
from lore.store.pg_search import glob_regex
from lore.store.postgres import PostgresStore

LORE = Path(sys.executable).with_name("lore")


def with_password(url: str, password: str) -> str:
    head, _, rest = url.partition("://")
    user, _, host = rest.partition("@")
    return f"{head}://{user.split(':')[0]}:{password}@{host}"


# -- the URL and the namespace ----------------------------------------------------------------


def test_a_password_is_never_shown() -> None:
    assert redacted("postgresql://ann:s3cret@db.example/lore") == "postgresql://ann@db.example/lore"
    shown = redacted("postgresql://db.example/lore?password=s3cret&sslmode=require")
    assert "s3cret" not in shown and "sslmode=require" in shown


def test_the_namespace_is_the_vault_parameter_or_the_folder_name(tmp_path: Path) -> None:
    url, name = namespace_for("postgresql://h/db?vault=team_notes&sslmode=require", tmp_path)
    assert name == "team_notes" and "vault=" not in url and "sslmode=require" in url
    assert namespace_for("postgresql://h/db", Path("/x/My Notes-2"))[1] == "vault_my_notes_2"
    with pytest.raises(lore.LoreError, match="not a namespace name"):
        namespace_for("postgresql://h/db?vault=Robert'); DROP", tmp_path)


def test_server_down_is_one_line_naming_the_url_without_its_password(tmp_path: Path) -> None:
    url = f"postgresql://ann:s3cret@/lore?host={tmp_path}"  # no server listens there
    with pytest.raises(IndexError_) as caught:
        lore.open(build_vault(tmp_path / "v", {"a.md": "a"}), db=url)
    message = str(caught.value)
    one_line_naming(message, "cannot connect to", "postgresql://ann@/lore")
    assert "s3cret" not in message


# -- namespaces: several vaults in one database -------------------------------------------------


def test_two_vaults_in_one_database_keep_their_own_notes(tmp_path: Path, pg_url: str) -> None:
    first = build_vault(tmp_path / "first", {"a.md": "# Alpha\n\nshared word 去重\n"})
    second = build_vault(tmp_path / "second", {"b.md": "# Beta\n\nshared word\n"})
    with lore.open(first, db=pg_url) as one, lore.open(second, db=pg_url) as two:
        one.sync()
        two.sync()
        assert [h.path for h in one.search("shared")] == ["a.md"]
        assert [h.path for h in two.search("shared")] == ["b.md"]
        assert one.status().notes == two.status().notes == 1
        assert not list(two.search("去重"))


def test_a_namespace_of_another_folder_is_refused(tmp_path: Path, pg_url: str) -> None:
    here = build_vault(tmp_path / "a" / "notes", {"a.md": "a"})
    there = build_vault(tmp_path / "b" / "notes", {"b.md": "b"})  # the same folder name
    lore.open(here, db=pg_url).close()
    with pytest.raises(VaultMismatchError) as caught:
        lore.open(there, db=pg_url)
    one_line_naming(str(caught.value), str(here), str(there), "vault_notes")
    lore.open(there, db=pg_url + "&vault=notes_b").close()  # a name of its own: fine


# -- transactions, snapshots, one writer per vault ---------------------------------------------


def _store(tmp_path: Path, url: str) -> PostgresStore:
    return PostgresStore(url, tmp_path)


def test_a_failed_transaction_leaves_nothing(tmp_path: Path, pg_url: str) -> None:
    store = _store(tmp_path, pg_url)
    before = store.generation()
    with pytest.raises(RuntimeError), store.transaction():
        store.set_meta("half", "done")
        raise RuntimeError("disk gone")
    assert store.get_meta("half") is None
    with store.transaction():
        store.set_meta("whole", "done")
    assert store.get_meta("whole") == "done" and store.generation() != before


def test_a_reader_sees_one_state_and_the_generation_moves(tmp_path: Path, pg_url: str) -> None:
    reader, writer = _store(tmp_path, pg_url), _store(tmp_path, pg_url)
    seen = reader.generation()
    with reader.snapshot():
        with writer.transaction():
            writer.set_meta("k", "v")
        assert reader.get_meta("k") is None  # the snapshot is older than the commit
    assert reader.get_meta("k") == "v"
    assert reader.generation()[0] > seen[0]  # another connection's commit moves it


def test_a_second_writer_of_one_vault_is_told_busy(tmp_path: Path, pg_url: str) -> None:
    first, second = _store(tmp_path, pg_url), _store(tmp_path, pg_url)
    second.busy_timeout_ms = 50
    other = PostgresStore(pg_url + "&vault=other", tmp_path / "elsewhere")
    with first.transaction():
        with pytest.raises(IndexBusyError) as caught, second.transaction():
            pass
        one_line_naming(str(caught.value), "index busy", first.namespace)
        with other.transaction():  # another vault's writer does not wait
            other.set_meta("k", "v")
        assert second.get_meta("schema_version") is not None  # readers never wait
    with second.transaction():
        second.set_meta("after", "1")


# -- filters: SQLite's GLOB, as a regular expression --------------------------------------------

_GLOB_CHARS = st.sampled_from(list("ab/.*?[]^-") + ["c", "去", "\\", "+", "("])
_TEXT_CHARS = st.sampled_from(list("ab/.-^[]") + ["c", "去", "\\", "+", "("])


@given(pattern=st.text(_GLOB_CHARS, max_size=8), text=st.text(_TEXT_CHARS, max_size=8))
def test_glob_regex_lets_through_what_sqlite_glob_does(pattern: str, text: str) -> None:
    import re

    db = apsw.Connection(":memory:")
    expected = bool(db.execute("SELECT ? GLOB ?", (text, pattern)).fetchone()[0])  # type: ignore[index]
    regex = glob_regex(pattern).replace("(?!)", "(?!x)x")  # PostgreSQL's never-match, in re
    assert bool(re.fullmatch(regex.removeprefix("^").removesuffix("$"), text)) == expected


def test_glob_regexes_run_in_postgresql(tmp_path: Path, pg_url: str) -> None:
    store = _store(tmp_path, pg_url)
    for pattern, text, expected in [
        ("rules/*", "rules/客户 v2.md", True),
        ("[^r]*", "rules/a.md", False),
        ("a[]b]c", "a]c", True),
        ("a[", "a[", False),
        ("x+(y)", "x+(y)", True),
        ("[?-/]", "?", True),  # a reversed range holds its first character only
        ("[?-/]", "/", False),
        ("[]-a]", "-", True),
    ]:
        assert store.query("SELECT %s ~ %s", (text, glob_regex(pattern))) == [(expected,)]


# -- vectors: pgvector, cosine, HNSW ------------------------------------------------------------


def _unit(rng: random.Random, dim: int) -> bytes:
    values = [rng.gauss(0, 1) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in values))
    return struct.pack(f"<{dim}f", *(v / norm for v in values))


def test_knn_finds_the_nearest_vectors_of_a_space(tmp_path: Path, pg_url: str) -> None:
    rng = random.Random(15)
    store = _store(tmp_path, pg_url)
    vectors = {f"h{i}": _unit(rng, 8) for i in range(60)}
    with store.transaction():
        store.ensure_vector_table(8)
        for text_hash, blob in vectors.items():
            store.add_vector(text_hash, "fake:8", "doc", blob)
        store.add_vector("t0", "fake:8", "tags", vectors["h0"])
    query = _unit(rng, 8)
    q = struct.unpack("<8f", query)

    def distance(blob: bytes) -> float:
        return 1 - sum(a * b for a, b in zip(q, struct.unpack("<8f", blob), strict=True))

    ids = {int(i): str(h) for i, h in store.query("SELECT id, hash FROM vec_texts")}
    got = store.knn(query, 5, "doc")
    expected = sorted(vectors, key=lambda h: distance(vectors[h]))[:5]
    assert [ids[i] for i, _d in got] == expected
    assert all(abs(d - distance(vectors[ids[i]])) < 1e-5 for i, d in got)
    assert [ids[i] for i, _d in store.knn(query, 5, "tags")] == ["t0"]  # its own space only
    assert store.vector(got[0][0]) == vectors[ids[got[0][0]]]  # float32 round trip
    assert store.vector_dimension() == "8" and store.unkeyed_vectors() == 0


def test_vectors_written_batch_by_batch_get_the_tables_analysed(
    tmp_path: Path, pg_url: str
) -> None:
    """lore embed commits a batch at a time: once the vectors written since the tables were
    last analysed reach ANALYZE_MIN_NOTES (and a tenth of the notes), a commit analyses
    them, so a search by meaning is planned for them, not for empty tables."""
    rng = random.Random(18)
    store = _store(tmp_path, pg_url)

    def analysed() -> bool:
        store.query("SELECT pg_stat_clear_snapshot()")
        row = store.query(
            "SELECT last_analyze FROM pg_stat_user_tables"
            " WHERE relname = 'vec_texts' AND schemaname = current_schema()"
        )
        return row[0][0] is not None

    step = 10
    for batch in range(ANALYZE_MIN_NOTES // step):
        assert not analysed(), batch
        with store.transaction():
            store.ensure_vector_table(8)
            for i in range(step):
                store.add_vector(f"h{batch}-{i}", "fake:8", "doc", _unit(rng, 8))
    assert analysed()


# -- the command line -------------------------------------------------------------------------


def test_the_cli_indexes_and_searches_in_postgresql(tmp_path: Path, pg_url: str) -> None:
    vault = build_vault(
        tmp_path / "vault",
        {"rules/客户去重规则 v2.md": "# 客户去重规则 v2\n\n手机号加邮箱。JIRA-1234\n", "b.md": "x"},
    )
    url = with_password(pg_url, "pw-not-shown")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LORE_DB": url}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(LORE), *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )

    done = run("index", str(vault))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("added 2,")
    found = run("search", "去重", "--vault", str(vault), "--json")
    assert found.returncode == 0, found.stderr
    assert [h["path"] for h in json.loads(found.stdout)["hits"]] == ["rules/客户去重规则 v2.md"]
    status = run("status", "--vault", str(vault), "--json")
    assert json.loads(status.stdout)["db"].startswith("postgresql://")
    for out in (done, found, status):
        assert "pw-not-shown" not in out.stdout + out.stderr
