"""What `Vault.status` and `Vault.retry_llm_fields` return (lore.vault.status): plain
frozen dataclasses, made where they are used, so a `lore search` process does not make
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.sync import SyncReport


@dataclass(frozen=True)
class Status:
    vault: str
    db: str
    notes: int
    tags: int
    links: int
    last_sync: str | None
    schema_version: int
    mode: str
    capabilities: dict[str, str]
    # Issue 19: notes by category (the author's, else the LLM's) and the notes' LLM fields.
    categories: dict[str, int] = field(default_factory=dict)
    llm_fields: dict[str, int] = field(default_factory=dict)
    # Issue 15: the backend and its versions (Store.engine), for the owner only.
    engine: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class LlmRetry:
    """What `lore llm retry` did: the notes whose failure was forgotten, the state of
    their fields after the sync ("llm", "failed", "pending"), and that sync's report."""

    retried: list[str]
    states: dict[str, str]
    sync: SyncReport | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "retried": self.retried,
            "states": self.states,
            "sync": self.sync.to_dict() if self.sync is not None else None,
        }
