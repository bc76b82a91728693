"""Shared fixtures: an isolated environment, vault factories and a canonical index dump.

Every test runs with no LORE_* variable set and the current folder inside its own tmp_path,
so nothing leaks between tests or from the developer's shell.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import HealthCheck, settings
from pg_support import (  # noqa: F401
    PgServer,
    clone_database,
    drop_database,
    new_database,
    pg_server,
    pg_url,
    pytest_terminal_summary,
)

import lore
from lore.store.memory import MEMORY_TABLES

settings.register_profile(
    "lore",
    deadline=None,  # the first CJK query loads jieba's dictionary (~1 s)
    database=None,  # tests chdir into tmp dirs; keep no example database there
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("lore")

LORE_ENV = (
    "LORE_VAULT",
    "LORE_DB",
    "LORE_MAX_FILE_BYTES",
    "LORE_FIELD_WEIGHTS",
    "LORE_DEBUG",
    "LORE_TODAY",
    "LORE_HALF_LIFE_DAYS",
    "LORE_GITIGNORE",
    "LORE_INDEX_JOBS",
    "LORE_QUERY_BUDGET_MS",
)

Files = Mapping[str, str | bytes]

# The storage backends the modules that ask for `backend` run on (issue 15): SQLite and a
# real PostgreSQL from tests/pg_support.py. LORE_TEST_BACKENDS=sqlite runs SQLite alone.
BACKENDS = [
    name.strip()
    for name in os.environ.get("LORE_TEST_BACKENDS", "sqlite,postgresql").split(",")
    if name.strip()
]


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend this module's tests run on (module scope: module-scoped vaults too)."""
    return str(request.param)


@pytest.fixture(scope="module")
def backend_db(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: Any
) -> Iterator[Any]:
    """`db=` for a module-scoped vault on this backend: a file, or a database of its own."""
    if backend == "sqlite":
        yield tmp_path_factory.mktemp("index") / "index.sqlite"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = new_database(server)
    yield url
    drop_database(server, url)


@pytest.fixture
def on_backend(
    backend: str,
    isolated_env: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[str]:
    """Every vault this test opens without `db=` is indexed on this backend (LORE_DB)."""
    if backend == "sqlite":
        yield backend
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = new_database(server)
    monkeypatch.setenv("LORE_DB", url)
    yield backend
    drop_database(server, url)


@pytest.fixture
def on_module_backend(
    backend: str, backend_db: Any, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """For tests that read a module-scoped vault indexed with `db=None if backend ==
    "sqlite" else backend_db`: every vault this test opens without `db=` is indexed there
    (the vault's own file, or the module's database: LORE_DB)."""
    if backend != "sqlite":
        monkeypatch.setenv("LORE_DB", str(backend_db))
    return backend


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One user cache folder for the session: the segmenter's compiled dictionary
    (lore.derive.segment) is built once, not once per test."""
    return tmp_path_factory.mktemp("xdg-cache")


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, user_cache: Path) -> Path:
    for name in LORE_ENV:
        monkeypatch.delenv(name, raising=False)
    # The user's own config file (lore.config.user_config_path) is never the developer's,
    # nor is the user cache (lore.config.user_cache_dir).
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "lore-home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@contextmanager
def isolated_module(base: Path, user_cache: Path) -> Iterator[pytest.MonkeyPatch]:
    """Inside: the environment isolated_env gives a test (no LORE_* variable, the user's
    config folder under `base`, the session's user cache, the current folder `base`), for
    a module-scoped fixture, which is set up before any test's isolated_env."""
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n.startswith("LORE_")]:
            patch.delenv(name)
        patch.setenv("LORE_HOME", str(base / "lore-home"))
        patch.setenv("XDG_CACHE_HOME", str(user_cache))
        patch.chdir(base)
        yield patch


def write_files(root: Path, files: Files) -> None:
    """Write {relpath: text or bytes} under root; text is written as UTF-8, byte-exact."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def build_vault(root: Path, files: Files, *, index: bool = False) -> Path:
    """Write the files; with `index`, make the vault's first index (as `lore index` does:
    no other command makes one)."""
    root.mkdir(parents=True, exist_ok=True)
    write_files(root, files)
    return first_index(root) if index else root


def copy_indexed_vault(
    source: Path, target: Path, db: str | None = None, server: PgServer | None = None
) -> Path:
    """An indexed vault copied to `target`, so that a test starts from its index instead of
    deriving it again: the files with their mtimes (nothing looks changed) and the index,
    which records `target` as its vault. The index: the file in the .lore folder, or the
    PostgreSQL database `db` on `server`, cloned into the one LORE_DB names (the test's
    own, from `on_backend`); the copy keeps the folder's name, so the vault's schema in the
    database is the same."""
    shutil.copytree(source, target)
    if db is None:
        with apsw.Connection(str(target / ".lore" / "index.sqlite")) as conn:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'vault_root'", (str(target),))
        return target
    import psycopg

    assert server is not None and target.name == source.name
    clone_database(server, db, os.environ["LORE_DB"])
    with psycopg.connect(os.environ["LORE_DB"], autocommit=True) as conn:
        conn.execute(
            f'UPDATE "{lore_namespace(target)}".meta SET value = %s WHERE key = %s',
            (str(target), "vault_root"),
        )
    return target


def lore_namespace(root: Path) -> str:
    from lore.store.pg_names import namespace_for

    return namespace_for("postgresql://", root)[1]


def first_index(root: Path, **settings: Any) -> Path:
    """Index the vault once, as `lore index` does (no other command makes a first index)."""
    with lore.open(root, **settings) as vault:
        vault.sync()
    return root


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Path]:
    """make_vault({"a.md": "text", "b.md": b"bytes"}, name="vault", index=False) -> the
    vault folder (with `index`, already indexed once)."""
    counter = itertools.count()

    def make(files: Files | None = None, name: str | None = None, *, index: bool = False) -> Path:
        return build_vault(tmp_path / (name or f"vault{next(counter)}"), files or {}, index=index)

    return make


@pytest.fixture
def open_vault() -> Iterator[Callable[..., lore.Vault]]:
    """open_vault(path, **settings) -> an open lore.Vault, closed at teardown."""
    opened: list[lore.Vault] = []

    def _open(path: Path | str | None = None, **kwargs: Any) -> lore.Vault:
        vault = lore.open(path, **kwargs)
        opened.append(vault)
        return vault

    yield _open
    for vault in opened:
        vault.close()


def indexed_paths(vault: lore.Vault) -> list[str]:
    return [str(p) for (p,) in vault.store.query("SELECT path FROM notes ORDER BY path")]


def dump_index(db_path: Path) -> dict[str, Any]:
    """Everything an index holds that is derived from the files, keyed by note path (note
    ids and rowids may differ between two equivalent indexes). Read-only."""
    con = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        id_to_path = {int(i): str(p) for i, p in con.execute("SELECT id, path FROM notes")}
        notes = [
            list(row)
            for row in con.execute(
                "SELECT path, title, title_source, date, date_source, mtime_ns, size, hash,"
                " frontmatter, headings, summary, body, body_line, priority, status, truncated"
                " FROM notes ORDER BY path"
            )
        ]
        tags = sorted(
            (id_to_path[int(n)], t, k, o, int(p))
            for n, t, k, o, p in con.execute(
                "SELECT note_id, tag, tag_key, origin, position FROM tags"
            )
        )
        links = sorted(
            (id_to_path[int(n)], t, k)
            for n, t, k in con.execute("SELECT note_id, target, target_key FROM links")
        )
        con.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, fts, instance)")
        fts = sorted(
            (id_to_path[int(doc)], str(col), int(offset), str(term))
            for term, doc, col, offset in con.execute(
                "SELECT term, doc, col, offset FROM temp.vocab"
            )
        )
        fts_docs = sorted(id_to_path[int(r)] for (r,) in con.execute("SELECT rowid FROM fts"))
        # Derived statistics, when this version of the schema has them.
        term_df = (
            sorted((str(t), int(n)) for t, n in con.execute("SELECT term, df FROM term_df"))
            if con.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'term_df'"
            ).fetchone()
            else None
        )
        meta = {
            str(k): str(v)
            for k, v in con.execute("SELECT key, value FROM meta")
            if k not in ("last_sync", "vault_root", "commits")
        }
        # Agent memory tables (m002_memory): every row keyed by its note's path.
        memory: dict[str, list[tuple[Any, ...]]] = {}
        for table in MEMORY_TABLES:
            if con.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone():
                memory[table] = sorted(
                    (id_to_path[int(row[0])], *row[1:])
                    for row in con.execute(f"SELECT * FROM {table}")
                )
        note_llm = _note_llm_rows(con, id_to_path)
    finally:
        con.close()
    return {
        "memory": memory,
        "notes": notes,
        "tags": tags,
        "links": links,
        "fts": fts,
        "fts_docs": fts_docs,
        "term_df": term_df,
        "meta": meta,
        "note_llm": note_llm,
    }


def _note_llm_rows(con: apsw.Connection, id_to_path: dict[int, str]) -> list[tuple[Any, ...]]:
    """The notes' LLM fields (m007_note_llm), keyed by path, when the schema has them."""
    if not con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'note_llm'"
    ).fetchone():
        return []
    return sorted(
        (id_to_path.get(int(row[0]), f"<{row[0]}>"), *row[1:])
        for row in con.execute("SELECT * FROM note_llm")
    )


@pytest.fixture
def index_dump() -> Callable[[Path], dict[str, Any]]:
    return dump_index


def one_line_naming(text: str, *names: str) -> None:
    """Assert `text` is a single line that mentions every one of `names`."""
    assert "\n" not in text and "\r" not in text, f"not one line: {text!r}"
    assert text.strip(), "empty message"
    for name in names:
        assert name in text, f"{name!r} not named in {text!r}"


def json_strict(text: str) -> Any:
    """json.loads that refuses NaN/Infinity, as strict JSON parsers (jq, JS) do."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


# -- a scripted model's answers to lore's note prompts (lore.index.note_llm) ---------------

_NOTE_PROMPTS = ("You summarise one note", "You summarise one part", "You are given the summaries")
_SENTENCE = re.compile(r"(?<=[。！？!?])|(?<=[.])\s+")


def is_note_prompt(system: str) -> bool:
    return system.startswith(_NOTE_PROMPTS)


def _sentences(text: str) -> list[str]:
    """The sentences of a text, line by line (a quote never spans a line), headings left
    out."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return [
        s.strip()
        for line in lines
        for s in _SENTENCE.split(" ".join(line.split()))
        if len(s.strip()) > 3
    ]


def scripted_note_answer(system: str, user: str) -> str:
    """A valid, grounded answer to a note prompt, made from the text it was given: the
    first sentences as the summary (within the asked length), the first two as claims
    (quoted as evidence), the first configured category the text names."""
    limit = int(re.search(r"at most (\d+) characters", system).group(1))  # type: ignore[union-attr]
    if system.startswith("You are given the summaries"):
        text = " ".join(line.split("): ", 1)[-1] for line in user.splitlines()[2:])
    else:
        text = user.split("\n\n", 1)[-1]
    sentences = _sentences(text) or [" ".join(text.split())[:limit]]
    summary = ""
    for sentence in sentences:
        if len(summary) + len(sentence) + 1 > limit:
            break
        summary = f"{summary} {sentence}".strip()
    answer: dict[str, Any] = {"summary": summary or sentences[0][:limit]}
    if not system.startswith("You are given the summaries"):
        answer["claims"] = [{"text": s[:200], "evidence": s[:60]} for s in sentences[:2]]
    if not system.startswith("You summarise one part"):
        listed = re.search(r"exactly one of these, as written: (.*?); null when", system)
        names = listed.group(1).split("; ") if listed else []
        answer["category"] = next((n for n in names if n.casefold() in text.casefold()), None)
    return json.dumps(answer, ensure_ascii=False)
