"""The provider contracts: one narrow Protocol per part, each with a single batch method
and an identity.

    EmbeddingProvider.embed(texts, kind) -> float32 matrix, one L2-normalised row per text
    ChatProvider.complete(system, user) -> the model's text answer

`identity` names what produced an output (provider + model, and for embeddings the input
convention), so stored outputs are keyed by it and never silently mixed with another's.
Failures raise ProviderError: one line naming the endpoint or model and what went wrong;
callers fall back to the next lower mode and tell the user once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

from ..errors import LoreError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

Kind = Literal["query", "passage"]


class ProviderError(LoreError):
    """A provider failed (endpoint down, timeout, bad answer, wrong dimension)."""


class PartialEmbedding(ProviderError):
    """Some requests of a call failed: `rows` (indexes into the call's texts) got `vectors`
    all the same, so the caller can keep them before it reports the failure."""

    def __init__(self, message: str, rows: list[int], vectors: Matrix) -> None:
        super().__init__(message)
        self.rows = rows
        self.vectors = vectors


class EmbeddingProvider(Protocol):
    name: str  # registry name: local | openai | ...
    identity: str  # provider:model[+convention]; recorded in the index
    max_tokens: int  # input size one text may have (passages are cut to fit)

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        """One L2-normalised float32 row per text, in order."""
        ...


class ChatProvider(Protocol):
    name: str
    identity: str  # provider:model

    def complete(self, system: str, user: str) -> str:
        """The model's answer to one system + user message."""
        ...


def normalise(matrix: Matrix) -> Matrix:
    """L2-normalise the rows (zero rows stay zero) as float32."""
    import numpy as np

    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        out = out.reshape(len(out), -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = (out / norms).astype(np.float32)
    return result
