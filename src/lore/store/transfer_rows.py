"""The rows `lore migrate` reads (lore.store.transfer): made when an index is copied, never
by a search."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CachedAnswer:
    """One row of the model-answer cache: `output` is the validated answer as JSON text."""

    key: str
    task: str
    model: str
    prompt_version: str
    input_hash: str
    output: str


@dataclass(frozen=True)
class VectorKey:
    """What a stored vector is of: a text (by hash), a model identity, a space."""

    id: int
    text_hash: str
    identity: str
    space: str
