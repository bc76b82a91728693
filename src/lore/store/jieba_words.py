"""jieba's dictionary file, and its three-character words: those a PostgreSQL index holds
as terms of their own (issue 15).

A phrase of more than two one-character tokens is not a term: it is counted in the token
streams of the notes holding all of its terms, some 13 us a note's body on the server. At
100k notes that was most of the slowest searches' time, and most of it went to words of
three characters (运动员, 出版社), which Chinese queries are full of. Every run of three
such tokens as a term would spare all of it, for 64% more postings (bench.scale's vault).
The three-character words of jieba's dictionary, the one queries are cut into words with,
spare most of it (72% of the notes counted for bench.scale's 100 queries at 100k notes)
for 2.5% more postings. The index records the digest of the words it was made with
(pg_schema.TRIGRAMS_META): with another dictionary installed, none of them is a term, so
a word is a term in every note or in none, and counting stays exact either way.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_THREE = re.compile(r"(?m)^(\S{3}) ")  # a dictionary line: word, frequency, part of speech


@dataclass(frozen=True)
class TrigramWords:
    """Three-character words (their characters, run together) and the digest naming them."""

    words: frozenset[str]
    digest: str


NO_WORDS = TrigramWords(frozenset(), "")


def dictionary_file() -> Path | None:
    """jieba's dictionary, the one rjieba embeds (found without importing jieba)."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "dict.txt"
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def installed_words() -> TrigramWords:
    """The installed dictionary's three-character words (NO_WORDS without one): read once
    a process, ~90 ms, and only by one that writes or reads such a phrase."""
    path = dictionary_file()
    if path is None:
        return NO_WORDS
    words = frozenset(_THREE.findall(path.read_text(encoding="utf-8")))
    return TrigramWords(words, _digest(words))


def _digest(words: frozenset[str]) -> str:
    import hashlib  # not on a search's path: derive.segment finds the dictionary here

    return hashlib.sha256("\n".join(sorted(words)).encode("utf-8")).hexdigest()[:16]


def words_for(digest: str | None) -> TrigramWords:
    """The words an index records by this digest (None: none), if they are installed."""
    installed = installed_words() if digest else NO_WORDS
    return installed if installed.digest == digest else NO_WORDS
