"""`lore serve`'s access tokens on both backends (issue 15): made, listed, used, revoked and
kept by a rebuild; a real `lore serve` that asks for a token answers a valid one as its
principal and refuses the rest; `lore migrate` moves them, so every client keeps its token."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_support import PUBLIC, make_vault, running

import lore
from lore.serve.api import PREFIX
from lore.transfer import migrate

pytestmark = pytest.mark.usefixtures("on_backend")  # every vault opened here, both backends


def test_tokens_are_kept_checked_and_served_on_this_backend(tmp_path: Path, backend: str) -> None:
    root = make_vault(tmp_path / "vault", clusters=False)
    with lore.open(root) as vault:
        assert vault.store.engine()["backend"] == backend
        guest = vault.add_token("guest", principal="guest")
        owner = vault.add_token("owner", principal=None, can_write=True)
        gone = vault.add_token("gone", principal="guest")
        assert [t.name for t in vault.tokens()] == ["gone", "guest", "owner"]
        assert vault.verify_token(guest.secret) == guest.info
        assert vault.verify_token(guest.secret[:-1]) is None
        vault.record_token_use("guest")
        used = {t.name: t.last_used for t in vault.tokens()}
        assert used["guest"] is not None and used["owner"] is None
        assert vault.revoke_token("gone").revoked is not None
        vault.rebuild()  # not derived from the files: kept
        assert [(t.name, t.revoked is None) for t in vault.tokens()] == [
            ("gone", False), ("guest", True), ("owner", True),
        ]  # fmt: skip
    with running(root, require_token=True, rate=0) as server:
        query = {"q": "客户", "limit": 100}
        with server.client() as anonymous:
            assert anonymous.get(f"{PREFIX}/search", params=query).status_code == 401
        with server.client(gone.secret) as revoked:
            assert revoked.get(f"{PREFIX}/search", params=query).status_code == 401
        with server.client(guest.secret) as client:
            found = client.get(f"{PREFIX}/search", params=query).json()
            assert {h["path"] for h in found["hits"]} == set(PUBLIC)
        with server.client(owner.secret) as client:
            found = client.get(f"{PREFIX}/search", params=query).json()
            assert set(PUBLIC) < {h["path"] for h in found["hits"]}  # the private notes too


def test_migrate_moves_the_tokens(tmp_path: Path, backend: str) -> None:
    root = make_vault(tmp_path / "vault", clusters=False)
    source_db = tmp_path / "source.sqlite"
    with lore.open(root, db=source_db) as source:
        made = source.add_token("agent", principal="guest")
        source.revoke_token(source.add_token("old", principal=None).info.name)
        target_db = str(tmp_path / "target.sqlite") if backend == "sqlite" else None
        with lore.open(root, db=target_db) as target:  # else LORE_DB: this test's database
            report = migrate(source, target)
            assert (report.tokens.copied, report.tokens.present) == (2, 0)
            assert target.verify_token(made.secret) == made.info
            assert [(t.name, t.revoked is None) for t in target.tokens()] == [
                ("agent", True), ("old", False),
            ]  # fmt: skip
            again = migrate(source, target)  # once more: nothing new to copy
            assert (again.tokens.copied, again.tokens.present) == (0, 2)
