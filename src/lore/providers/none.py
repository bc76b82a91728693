"""The explicit "absent" provider: what modes 2-4 run with. It says why it is absent."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Absent:
    """No provider for this part; `reason` is shown by `lore status` and in notices."""

    part: str  # "embeddings" | "llm"
    reason: str

    @property
    def name(self) -> str:
        return "none"
