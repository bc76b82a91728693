"""A PostgreSQL database without pgvector (issue 15): its owner may not create the
extension (it is not a trusted one) and nobody did. Indexing and full-text search work as
ever; vectors fail with one line saying why, and `lore status` says it too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from pg_support import PgServer
from semantic_support import (  # noqa: F401 - fixtures
    NOTES,
    Script,
    embed_env,
    scripted,
)

import lore
from lore.cli import main
from lore.errors import LoreError

ROLE = "lore_plain"


@pytest.fixture
def plain_url(pg_server: PgServer) -> Iterator[str]:
    """A database owned by a role that is no superuser, made without the vector extension."""
    name = pg_server.new_database_name()
    with psycopg.connect(pg_server.base_url, autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone():
            admin.execute(f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER")
        admin.execute(f"CREATE DATABASE {name} OWNER {ROLE} TEMPLATE template0")
    head, _, query = pg_server.url(name).partition("?")
    scheme, _, rest = head.partition("://")
    url = f"{scheme}://{ROLE}:pw-not-shown@{rest.split('@', 1)[1]}?{query}"
    yield url
    with psycopg.connect(pg_server.base_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def make(root: Path) -> Path:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_full_text_works_and_vectors_say_why_not(
    tmp_path: Path, plain_url: str, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, script = scripted
    embed_env(monkeypatch, url)
    root = make(tmp_path / "vault")
    with lore.open(root, db=plain_url) as vault:
        report = vault.sync()
        assert len(report.added) == len(NOTES)
        hits = vault.search("客户去重", mode="mode4")
        assert hits and hits[0].path == "rules/dedup.md"
        with pytest.raises(LoreError) as failed:
            vault.embed()
        status = vault.status()
    message = str(failed.value)
    assert "\n" not in message and "pw-not-shown" not in message
    assert message.startswith(f"vectors need the pgvector extension in postgresql://{ROLE}@")
    assert 'permission denied to create extension "vector"' in message
    # The sync said so once, and went on lexical.
    assert [n for n in report.notices if "pgvector" in n] == [
        f"embeddings unavailable, working in mode4: {message}"
    ]
    assert status.mode == "mode4"
    why = status.capabilities["embeddings"]
    assert why.startswith("openai:fake-embed configured, but pgvector is not installed in")
    assert f"and {ROLE} may not install it" in why and "run `lore embed`" not in why
    assert script.count("/v1/embeddings") == 0  # nothing embedded to be thrown away
    runner = CliRunner()
    embedded = runner.invoke(main, ["embed", "--vault", str(root), "--db", plain_url])
    assert embedded.exit_code == 1
    assert embedded.stderr.startswith("lore: error: vectors need the pgvector extension in")
    assert "pw-not-shown" not in embedded.stderr
    status_out = runner.invoke(main, ["status", "--vault", str(root), "--db", plain_url])
    assert status_out.exit_code == 0
    assert f"{ROLE} may not install it" in status_out.stdout
    assert "pgvector: not installed in this database" in status_out.stdout
    found = runner.invoke(main, ["search", "Eiffel", "--vault", str(root), "--db", plain_url])
    assert found.exit_code == 0 and "travel/paris.md" in found.stdout
