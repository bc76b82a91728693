"""The explicit "absent" provider: what modes 2-4 run with. It says why it is absent."""

from __future__ import annotations

from typing import NamedTuple


class Absent(NamedTuple):
    """No provider for this part; `reason` is shown by `lore status` and in notices. (A
    NamedTuple: every search makes two, and it costs a cold process less than a dataclass.)"""

    part: str  # "embeddings" | "llm"
    reason: str

    @property
    def name(self) -> str:
        return "none"
