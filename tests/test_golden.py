"""The expected best note for 22 queries on the sample vault (Chinese, English, mixed).

The queries and their reasons live in golden_queries.json; a change that moves any expected
note off the top is a ranking regression, not noise.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import lore

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "tests" / "golden_queries.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sample_vault(backend_db: Any) -> Iterator[lore.Vault]:
    """The sample vault indexed on each backend (SQLite, PostgreSQL): the same answers."""
    vault = lore.open(ROOT / "examples" / "vault", db=backend_db)
    report = vault.sync()
    assert not report.skipped and not report.warnings
    yield vault
    vault.close()


def test_sample_vault_has_enough_notes(sample_vault: lore.Vault) -> None:
    status = sample_vault.status()
    assert status.notes >= 40
    # .loreignore keeps the private draft out.
    paths = {row[0] for row in sample_vault.store.query("SELECT path FROM notes")}
    assert "drafts/private-salary.md" not in paths
    assert "drafts/idea-backlog.md" in paths


@pytest.mark.parametrize("case", GOLDEN, ids=[c["query"] for c in GOLDEN])
def test_golden_top_hit(sample_vault: lore.Vault, case: dict[str, str]) -> None:
    hits = sample_vault.search(case["query"], limit=5)
    assert hits, f"no hits: {hits.reason}"
    assert hits[0].path == case["expected"], [h.path for h in hits]
    # The evidence is there: a snippet from the note and its date (None: undated).
    assert hits[0].snippet
    assert hits[0].date == sample_vault.note(hits[0].path)["date"]
