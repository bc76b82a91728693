"""Baseline retrieval systems lore is measured against.

Every system has `name`, `langs` (the set languages it runs on by default), `prepare(docs)`
(untimed setup), `index(docs)` (timed), `search(query, k) -> list[doc_id]` (timed per query)
and `close()`. Baselines index title + text as one document (or as two FTS columns with equal
weight), so none of them gets information lore does not.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from bench.datasets import CJK_CLASS, Doc, has_cjk

WORD_RE = re.compile(r"\w+")
CJK_CHAR_RE = re.compile(f"([{CJK_CLASS}])")
Tokenizer = Callable[[str], list[str]]


class System(Protocol):
    name: str
    langs: frozenset[str]  # set languages ("zh", "en") it runs on when --systems is not given

    def prepare(self, docs: Sequence[Doc]) -> None: ...

    def index(self, docs: Sequence[Doc]) -> None: ...

    def search(self, query: str, k: int) -> list[str]: ...

    def close(self) -> None: ...


ALL_LANGS = frozenset({"zh", "en"})


# --- tokenizers ---------------------------------------------------------------------------

_jieba: Any = None


def _jieba_module() -> Any:
    # jieba builds (or loads a cached) prefix dictionary on first use, ~1 s. That is a
    # one-off process cost, not index cost, so it is paid here, before any timer starts.
    global _jieba
    if _jieba is None:
        import jieba

        jieba.setLogLevel(logging.WARNING)  # silence "Building prefix dict..." on stderr
        jieba.initialize()
        _jieba = jieba
    return _jieba


def words(text: str) -> list[str]:
    """Lowercased \\w+ runs: the plain whitespace/punctuation split for Latin-script text."""
    return WORD_RE.findall(text.lower())


def jieba_tokens(text: str) -> list[str]:
    """jieba search-mode segmentation (emits overlapping sub-words too, which helps recall),
    lowercased, with whitespace and punctuation tokens dropped."""
    return [t for t in _jieba_module().lcut_for_search(text.lower()) if WORD_RE.search(t)]


def mixed_tokens(text: str) -> list[str]:
    """The brief's rule: jieba for text that contains CJK, plain lowercased words otherwise."""
    return jieba_tokens(text) if has_cjk(text) else words(text)


_stem_cache: dict[str, str] = {}


def english_stem_tokens(text: str) -> list[str]:
    """Lowercased words through the Snowball English stemmer: a stronger English baseline
    than plain words (lore ships snowballstemmer, so this is the fair comparison)."""
    # snowballstemmer is pure Python (~10 µs a word); the vocabulary is small, so a memo
    # makes indexing ~20x faster and keeps the index time about BM25, not the stemmer.
    out: list[str] = []
    for word in words(text):
        stem = _stem_cache.get(word)
        if stem is None:
            stem = _stem_cache[word] = str(_snowball().stemWord(word))
        out.append(stem)
    return out


@functools.cache
def _snowball() -> Any:
    import snowballstemmer  # lazy: the other baselines don't need it

    return snowballstemmer.stemmer("english")


def cjk_chars_split(text: str) -> str:
    """Lowercase and put spaces around every CJK character, so unicode61 (which treats a CJK
    run as one long 'word') indexes each character as its own token; Latin words stay whole."""
    return CJK_CHAR_RE.sub(r" \1 ", text.lower())


# --- FTS5 query building ------------------------------------------------------------------


def fts_quote(term: str) -> str:
    """One FTS5 string literal: a double-quoted phrase with embedded quotes doubled, so no
    query text can be read as FTS5 syntax (AND/OR/NEAR, column filters, `*`, `^`)."""
    return '"' + term.replace('"', '""') + '"'


def fts_or(terms: Sequence[str]) -> str:
    # Dedupe (keeping order): repeated terms only make the query longer, bm25 is per term.
    return " OR ".join(fts_quote(t) for t in dict.fromkeys(terms))


def query_trigrams(text: str) -> list[str]:
    """Character 3-grams inside each word run of the lowercased query. Runs shorter than 3
    characters produce none: the trigram tokenizer cannot match them (expected, see README).
    Grams spanning a space or punctuation are skipped, they only add noise."""
    grams: list[str] = []
    for run in WORD_RE.findall(text.lower()):
        grams.extend(run[i : i + 3] for i in range(len(run) - 2))
    return grams


# --- systems ------------------------------------------------------------------------------


class Bm25sSystem:
    """bm25s (Lucene BM25 variant, k1=1.5, b=0.75) over a pluggable tokenizer."""

    def __init__(self, name: str, tokenizer: Tokenizer, langs: frozenset[str] = ALL_LANGS):
        self.name = name
        self.langs = langs
        self.tokenizer = tokenizer
        self._model: Any = None
        self._ids: list[str] = []

    def prepare(self, docs: Sequence[Doc]) -> None:
        # Warm the tokenizer (jieba dictionary, stemmer) outside the timed index step.
        self.tokenizer("预热 warm-up")

    def index(self, docs: Sequence[Doc]) -> None:
        import bm25s

        self._ids = [d.id for d in docs]
        corpus = [self.tokenizer(f"{d.title}\n{d.text}") for d in docs]
        self._model = bm25s.BM25()
        self._model.index(corpus, show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        import numpy as np

        tokens = self.tokenizer(query)
        if not tokens:
            return []
        # get_scores scores every doc for one query; it is faster per query than retrieve()
        # (no batching/threading set-up) and lets us drop zero-score docs, which bm25s would
        # otherwise return as filler when fewer than k docs match.
        scores = self._model.get_scores(tokens)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [self._ids[i] for i in top if scores[i] > 0]

    def close(self) -> None:
        self._model = None


class Fts5System:
    """SQLite FTS5 in an in-memory apsw database, ranked by FTS5's built-in bm25()."""

    def __init__(
        self,
        name: str,
        tokenize: str,
        to_index: Callable[[str], str],
        to_query: Callable[[str], str],
    ):
        self.name = name
        self.langs = ALL_LANGS
        self.tokenize = tokenize
        self.to_index = to_index
        self.to_query = to_query
        self._db: Any = None

    def prepare(self, docs: Sequence[Doc]) -> None:
        pass

    def index(self, docs: Sequence[Doc]) -> None:
        import apsw

        self._db = apsw.Connection(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, title, body, "
            f"tokenize='{self.tokenize}')"  # a constant from BASELINES, never user input
        )
        with self._db:  # one transaction: per-row commits would dominate the timing
            self._db.executemany(
                "INSERT INTO docs(doc_id, title, body) VALUES (?, ?, ?)",
                ((d.id, self.to_index(d.title), self.to_index(d.text)) for d in docs),
            )
        # Merge the segments once, as a real indexer would after a bulk load.
        self._db.execute("INSERT INTO docs(docs) VALUES ('optimize')")

    def search(self, query: str, k: int) -> list[str]:
        match = self.to_query(query)
        if not match:
            return []
        # `rank` is bm25(docs) by default; ORDER BY rank lets FTS5 use its fast top-k path.
        rows = self._db.execute(
            "SELECT doc_id FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (match, k)
        )
        return [row[0] for row in rows]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _trigram_query(text: str) -> str:
    return fts_or(query_trigrams(text))


def _cjk_char_query(text: str) -> str:
    return fts_or(WORD_RE.findall(cjk_chars_split(text)))


def _identity(text: str) -> str:
    return text


EN = frozenset({"en"})

# name -> factory. Factories so every (set, system) run starts from a fresh object.
BASELINES: dict[str, Callable[[], System]] = {
    "bm25s": lambda: Bm25sSystem("bm25s", mixed_tokens),
    # On CJK sets these two equal (or lose badly to) "bm25s", so by default they run on
    # English sets only: jieba applied to English, and English with a Snowball stemmer.
    "bm25s-jieba": lambda: Bm25sSystem("bm25s-jieba", jieba_tokens, EN),
    "bm25s-stem": lambda: Bm25sSystem("bm25s-stem", english_stem_tokens, EN),
    "fts5-trigram": lambda: Fts5System("fts5-trigram", "trigram", _identity, _trigram_query),
    "fts5-cjkchar": lambda: Fts5System(
        "fts5-cjkchar", "unicode61", cjk_chars_split, _cjk_char_query
    ),
}
