"""`lore migrate`: move a vault's index to another database — an index file to PostgreSQL
when a team outgrows a laptop, or back to a file — without embedding anything again or
paying for a model call twice.

The target is brought up to date from the vault's files by its own sync, after the model
answers and vectors are copied into it (lore.index.transfer), so the sync asks no model and
embeds nothing that the source had; the interest map is copied last, matched to the
target's notes. Then both answer the same sample of queries, and the migration is only
reported done when they answer alike. The source is only read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, LoreError
from .index.transfer import Copied, copy_answers, copy_map, copy_tokens, copy_vectors

if TYPE_CHECKING:
    from .vault import Vault

CHECKS = 20  # sample queries both indexes must answer alike


class MigrationMismatch(LoreError):
    """The target answers a sample query differently from the source."""


@dataclass
class MigrateReport:
    source: str
    target: str
    notes: int
    answers: Copied
    vectors: Copied
    clusters: int | None  # copied; None: the source has no interest map
    tokens: Copied  # lore serve's access tokens (their secrets' hashes)
    checked: int = 0
    differing: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "notes": self.notes,
            "answers": self.answers.to_dict(),
            "vectors": self.vectors.to_dict(),
            "clusters": self.clusters,
            "tokens": self.tokens.to_dict(),
            "checked": self.checked,
            "differing": self.differing,
            "notices": self.notices,
        }


def migrate(source: Vault, target: Vault, *, checks: int = CHECKS) -> MigrateReport:
    """Copy `source`'s index into `target` (the same vault, another database), then compare
    their answers on `checks` queries (the titles of notes spread over the vault, lexical
    ranking: no provider is called). Raises MigrationMismatch when any differs."""
    if source.root != target.root:
        raise ConfigError(f"{target.root} is another vault than {source.root}")
    if str(source.db_path) == str(target.db_path):
        raise ConfigError(f"{target.db_path} is the index being migrated: name another one")
    answers = copy_answers(source.store, target.store)
    vectors = copy_vectors(source.store, target.store)
    synced = target.sync()
    report = MigrateReport(
        source=str(source.db_path),
        target=str(target.db_path),
        notes=target.status().notes,
        answers=answers,
        vectors=vectors,
        clusters=copy_map(source.store, target.store),
        tokens=copy_tokens(source.store, target.store),
        notices=list(synced.notices),
    )
    for query in sample_queries(source, checks):
        report.checked += 1
        if _answers(source, query) != _answers(target, query):
            report.differing.append(query)
    if report.differing:
        raise MigrationMismatch(
            f"{report.target} answers {len(report.differing)} of {report.checked} sample"
            f" queries differently from {report.source}, e.g. {report.differing[0]!r}",
            hint="run `lore migrate` again (it resumes), or `lore doctor` on both indexes",
        )
    return report


def sample_queries(vault: Vault, count: int) -> list[str]:
    """The titles of `count` notes spread evenly over the vault's notes in path order."""
    titles = [note.title for note in vault.store.interest_notes() if note.title.strip()]
    if len(titles) <= count:
        return titles
    step = len(titles) / count
    return [titles[int(i * step)] for i in range(count)]


def _answers(vault: Vault, query: str) -> list[tuple[str, float]]:
    return [(hit.path, round(hit.score, 6)) for hit in vault.search(query, mode="mode4")]
