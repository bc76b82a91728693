"""`lore migrate` (issue 15): an index moves from its file to PostgreSQL and back with its
model answers, vectors and interest map — no model or embedding call is made on the way,
and both indexes answer alike, in every mode."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from conftest import isolated_module
from semantic_support import (  # noqa: F401 - fixtures
    Script,
    embed_env,
    llm_env,
    no_semantic_env,
    scripted,
    start_scripted,
)

import lore
from lore.errors import ConfigError
from lore.index.embed import IdentityMismatch
from lore.transfer import migrate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "vault"
TODAY = dt.date(2026, 6, 1)
QUERIES = ("客户去重", "meeting notes about the launch", "向量检索 embeddings")


@pytest.fixture
def providers(scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch) -> Iterator[Script]:
    url, script = scripted
    embed_env(monkeypatch, url)
    llm_env(monkeypatch, url)
    yield script


@pytest.fixture(scope="module")
def built_source(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> tuple[Path, Path]:
    """(vault, index file): the sample vault indexed into a file, embedded, tagged by the
    model, mapped — built once for the module (the embedding and the model's answers are
    most of a test's cost) by a scripted server of its own; each test gets a copy."""
    base = tmp_path_factory.mktemp("migrate-source")
    url, _script, server = start_scripted()
    try:
        with isolated_module(base, user_cache) as patch:
            embed_env(patch, url)
            llm_env(patch, url)
            root = base / "vault"
            shutil.copytree(EXAMPLES, root)
            with lore.open(root, db=base / "index.sqlite") as vault:
                vault.sync()
                vault.embed()
                vault.build_clusters(today=TODAY)
    finally:
        server.shutdown()
        server.server_close()
    return root, base / "index.sqlite"


@pytest.fixture
def source(
    tmp_path: Path, providers: Script, built_source: tuple[Path, Path]
) -> Iterator[lore.Vault]:
    """A copy of the built source: the files (with their mtimes, so nothing looks changed)
    and the index, which records the copy's folder as its vault."""
    root, db = tmp_path / "vault", tmp_path / "index.sqlite"
    shutil.copytree(built_source[0], root)
    shutil.copyfile(built_source[1], db)
    with apsw.Connection(str(db)) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'vault_root'", (str(root),))
    with lore.open(root, db=db) as vault:
        yield vault


def _answers(vault: lore.Vault, mode: str | None = None) -> list[list[tuple[str, float]]]:
    return [
        [(hit.path, round(hit.score, 6)) for hit in vault.search(query, mode=mode)]
        for query in QUERIES
    ]


def _map(vault: lore.Vault) -> list[tuple[int, str, list[str]]]:
    interest = vault.clusters()
    assert interest is not None
    return [(c.id, c.label, [m.path for m in c.members]) for c in interest.clusters]


def _moved_alike(source: lore.Vault, target: lore.Vault, script: Script) -> None:
    asked = len(script.requests)
    report = migrate(source, target)
    assert len(script.requests) == asked, "the migration called the model or the embedder"
    answers = source.store.cached_answers()
    assert answers and report.answers.copied == len(answers)
    assert target.store.cached_answers() == answers
    assert report.vectors.copied == source.store.vector_count() > 0
    assert target.store.vector_count() == source.store.vector_count()
    assert report.notes == source.status().notes
    assert report.clusters == len(_map(source)) and _map(target) == _map(source)
    assert report.checked > 0 and report.differing == []
    # With vectors (mode 1): the same notes in the same order; pgvector's cosine and
    # sqlite-vec's may differ in the last float32 digit.
    for got, wanted in zip(_answers(target), _answers(source), strict=True):
        assert [path for path, _ in got] == [path for path, _ in wanted]
        assert [score for _, score in got] == pytest.approx([s for _, s in wanted], abs=1e-5)
    assert _answers(target, "mode4") == _answers(source, "mode4")
    before = len(script.requests)
    assert target.embed().embedded == 0  # every vector is there
    target.sync()
    assert len(script.requests) == before  # nothing embedded, nothing asked
    again = migrate(source, target)  # resumes: nothing left to copy
    assert again.answers.copied == again.vectors.copied == 0
    # (the searches above cached their query plans on both sides)
    assert again.answers.present == len(source.store.cached_answers())


def _fields(vault: lore.Vault) -> dict[str, dict[str, object]]:
    """Every note as `lore show` gives it, with the model's summary, claims and category."""
    return {path: vault.note(path) for path in sorted(vault.store.all_paths())}


def test_to_postgresql_and_back_without_a_call(
    source: lore.Vault, providers: Script, pg_url: str, tmp_path: Path
) -> None:
    assert source.mode == "mode1"
    fields = _fields(source)
    assert source.llm_status()["notes"] > 0
    assert any(note["summary_source"] == "llm" and note["claims"] for note in fields.values())
    with lore.open(source.root, db=pg_url) as server:
        _moved_alike(source, server, providers)
        assert _fields(server) == fields
        assert server.status().categories == source.status().categories
        with lore.open(source.root, db=tmp_path / "back.sqlite") as back:
            _moved_alike(server, back, providers)
            assert _fields(back) == fields


def test_to_another_file_with_the_models_note_fields(
    source: lore.Vault, providers: Script, tmp_path: Path
) -> None:
    assert source.llm_status()["notes"] > 0
    with lore.open(source.root, db=tmp_path / "copy.sqlite") as copy:
        _moved_alike(source, copy, providers)
        assert copy.note("howto/用 uv 管理 Python 环境.md") == source.note(
            "howto/用 uv 管理 Python 环境.md"
        )


def test_the_same_index_or_another_vault_is_refused(source: lore.Vault, tmp_path: Path) -> None:
    with lore.open(source.root, db=source.db_path) as same:
        with pytest.raises(ConfigError, match="the index being migrated"):
            migrate(source, same)
    other = tmp_path / "other"
    other.mkdir()
    with lore.open(other, db=tmp_path / "other.sqlite") as elsewhere:
        with pytest.raises(ConfigError, match="another vault"):
            migrate(source, elsewhere)


def test_a_target_with_another_models_vectors_is_refused_and_kept(
    source: lore.Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target_db = tmp_path / "target.sqlite"
    monkeypatch.setenv("LORE_EMBED_MODEL", "another-model")
    with lore.open(source.root, db=target_db) as target:
        target.sync()
        target.embed()
        kept = target.store.vector_count()
        with pytest.raises(IdentityMismatch, match="another-model"):
            migrate(source, target)
        assert target.store.vector_count() == kept
        assert target.store.embed_identity()[0] != source.store.embed_identity()[0]


def test_the_cli_moves_the_index_and_says_what_it_copied(
    source: lore.Vault, providers: Script, pg_url: str, tmp_path: Path
) -> None:
    source.close()
    asked = len(providers.requests)
    command = [sys.executable, "-m", "lore", "migrate", "--vault", str(source.root)]
    command += ["--db", str(tmp_path / "index.sqlite"), "--to", pg_url]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("migrated ") and "notes indexed" in lines[0]
    assert any(line.startswith("vectors: ") and " copied" in line for line in lines)
    assert lines[-1].startswith("answers compared on ") and lines[-1].endswith("the same")
    again = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    data = json.loads(again.stdout)
    assert data["vectors"]["copied"] == 0 and data["vectors"]["present"] > 0
    assert data["differing"] == [] and data["checked"] > 0
    assert len(providers.requests) == asked
    bad = subprocess.run(
        [*command[:-1], str(tmp_path / "index.sqlite")], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("lore: error: ") and "being migrated" in bad.stderr
