"""`local-fast`: a static embedding table distilled from the bundled e5 model over the
vault's own vocabulary (model2vec-style), for when the full model is too slow to wait for.

Every distinct word of the texts embedded is run through the model once, on its own (the
"passage: " convention), and its vector is kept in the index (store.vocab); a text's vector
is then the SIF-weighted sum of its words' vectors, L2-normalised: milliseconds a note once
its words are known, and new notes only pay for the words the vault has not seen yet.
Weights are a / (a + p(word)), p from the e5 tokenizer's own unigram model
(providers.e5_pieces): a fixed prior, not the vault's statistics, so a text's vector is a
pure function of the text: the same vault and settings give the same vectors, and an
incremental embed ends where a rebuild does.

Words: runs of CJK characters are cut by jieba's dictionary (no HMM guessing, so the cut
is the same in every vault); other runs of letters and digits are NFKC-casefolded words.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..derive.tokenize import _CJK_CLASS
from .base import Kind, ProviderError, normalise
from .local import MODEL_NAME, LocalE5, model_path

if TYPE_CHECKING:
    from ..store.sqlite import SqliteStore
    from ..store.vocab import TokenVectors
    from .base import Matrix
    from .e5_pieces import PiecePrior

Progress = Callable[[int, int, str], None]
STATIC_VERSION = "1"
SIF_A = 1e-5  # p(word) scale of e5's unigram model (▁the ≈ 7e-4, ▁history ≈ 4e-6)
RECENT_WORDS = 4096
WORD_BATCH = 256  # words per model call: short texts, so large batches
_RUN = re.compile(f"[{_CJK_CLASS}]+|[^\\W_{_CJK_CLASS}]+")
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_MAX_WORD = 40


@functools.cache
def _bundled_prior() -> PiecePrior:
    """The bundled model's prior, read once per process: a file that never changes, and
    a quarter of a million pieces to parse for every StaticE5 that weighs a word."""
    from .e5_pieces import PiecePrior

    return PiecePrior.from_model_file(model_path())


def words(text: str) -> list[str]:
    """The words of `text` the static table is keyed by, in order."""
    import jieba

    out: list[str] = []
    for match in _RUN.finditer(unicodedata.normalize("NFKC", text)):
        run = match.group()
        if _CJK_RUN.fullmatch(run):
            out.extend(w for w in jieba.cut(run, HMM=False) if w.strip())
        else:
            out.append(run.casefold()[:_MAX_WORD])
    return out


class StaticE5:
    name = "local-fast"
    identity = f"local-fast:{MODEL_NAME}+static-v{STATIC_VERSION}"
    max_tokens = 512  # plan the same passages as `local`
    batch_size = 64  # texts per commit: each costs milliseconds once its words are known

    def __init__(self, model: LocalE5 | Any, *, sif_a: float = SIF_A, center: bool = True) -> None:
        self.model = model  # embeds the words the table lacks
        self.dim = int(getattr(model, "dim", 384))
        self.sif_a = sif_a
        self.center = center
        self._center: Any = None
        # The word table is keyed by what made the word vectors (the model alone): every
        # weighting of them shares it.
        self.word_identity = f"{getattr(model, 'identity', 'model')}+word-v{STATIC_VERSION}"
        if (sif_a, center) != (SIF_A, True):  # a variant measured by the bench
            self.identity = f"{StaticE5.identity}+a{sif_a:g}{'' if center else '+raw'}"
        self.table: TokenVectors | None = None
        self._prior: PiecePrior | None = None
        self._weights: dict[str, float] = {}
        self._recent: dict[str, Any] = {}  # word vectors computed for queries
        self.words_embedded = 0  # words sent to the model by this object (for the bench)

    def attach(self, store: SqliteStore) -> None:
        """Keep the word vectors in this index (without, they live only for this object)."""
        from ..store.vocab import TokenVectors

        self.table = TokenVectors(store, self.word_identity)

    def weight(self, word: str) -> float:
        found = self._weights.get(word)
        if found is None:
            if self._prior is None:
                self._prior = _bundled_prior()
            found = self.sif_a / (self.sif_a + self._prior.probability(word))
            self._weights[word] = found
        return found

    def prepare(self, texts: Iterable[str], progress: Progress | None = None) -> int:
        """Embed every word of `texts` the table lacks, in large batches, each committed on
        its own (an interrupted run keeps them); progress counts words. Returns the words
        embedded."""
        if self.table is None:
            return 0
        vocab: set[str] = set()
        for text in texts:
            vocab.update(words(text))
        ordered = sorted(vocab)
        known: set[str] = set()
        for start in range(0, len(ordered), 5000):
            known.update(self.table.get(ordered[start : start + 5000]))
        missing = [w for w in ordered if w not in known]
        step = WORD_BATCH * int(getattr(self.model, "workers", 1))
        if progress is not None and missing:
            progress(0, len(missing), "vocabulary")  # the stage's clock starts here
        for start in range(0, len(missing), step):
            self._word_vectors(missing[start : start + step], store=True)
            if progress is not None:
                progress(min(start + step, len(missing)), len(missing), "vocabulary")
        return len(missing)

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        import numpy as np

        counts = [Counter(words(text)) for text in texts]
        vocab = sorted({w for c in counts for w in c})
        vectors = self._word_vectors(vocab, store=kind == "passage")
        table = np.stack([vectors[w] for w in vocab]) if vocab else np.zeros((0, self.dim))
        if self.center:
            if self._center is None:
                self._center = self.model.embed([""], "passage")[0]
            table = table - self._center
        position = {w: i for i, w in enumerate(vocab)}
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        empty: list[int] = []
        for row, count in enumerate(counts):
            if not count:
                empty.append(row)
                continue
            # Summed over the text's own words in sorted order, never over the batch's
            # vocabulary: the result must not depend on which texts share the batch.
            own = sorted(count)
            coefficients = np.asarray([count[w] * self.weight(w) for w in own], np.float32)
            out[row] = coefficients @ table[[position[w] for w in own]]
        if empty:  # no word at all (only symbols): the model reads the text itself
            out[empty] = self.model.embed([texts[i] for i in empty], kind)
        return normalise(out)

    def _word_vectors(self, vocab: list[str], *, store: bool) -> dict[str, Any]:
        import numpy as np

        found = {w: self._recent[w] for w in vocab if w in self._recent}
        wanted = [w for w in vocab if w not in found]
        stored = self.table.get(wanted) if self.table is not None else {}
        found.update((w, np.frombuffer(v, dtype=np.float32)) for w, v in stored.items())
        missing = [w for w in vocab if w not in found]
        fresh: list[tuple[str, bytes]] = []
        for start in range(0, len(missing), WORD_BATCH):
            chunk = missing[start : start + WORD_BATCH]
            matrix = self.model.embed(chunk, "passage")
            if matrix.shape != (len(chunk), self.dim):
                raise ProviderError(f"{self.identity}: the model returned {matrix.shape} vectors")
            for word, vector in zip(chunk, matrix, strict=True):
                found[word] = vector
                fresh.append((word, np.asarray(vector, dtype=np.float32).tobytes()))
        self.words_embedded += len(missing)
        if store and fresh and self.table is not None and self.table.writable():
            self.table.put(fresh)
        elif fresh:  # a query's new words: kept for this process, never written by a search
            if len(self._recent) + len(fresh) > RECENT_WORDS:
                self._recent.clear()
            self._recent.update((w, found[w]) for w, _bytes in fresh)
        return found

    def close(self) -> None:
        closer = getattr(self.model, "close", None)
        if closer is not None:
            closer()
