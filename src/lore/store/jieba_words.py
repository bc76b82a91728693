"""jieba's dictionary file, and its words of three and four characters: those a PostgreSQL
index holds as terms of their own (issue 15).

A phrase of more than two one-character tokens is not a term: it is counted in the token
streams of the notes holding all of its terms, some 13 us a note's body on the server. At
100k notes that was most of the slowest searches' time, and most of it went to words of
three characters (运动员, 出版社), which Chinese queries are full of; then, at 300k, to
words of four (地理位置, 人工智能). Every run of three such tokens as a term would spare
it, for 64% more postings (bench.scale's vault); the words of jieba's dictionary, the one
queries are cut into words with, spare most of it for a few percent more (bench.pg_words).
Longer words are rare (3% of the dictionary's words of three characters or more) and stay
counted. The index records the digest of the words it was made with (pg_schema.WORDS_META):
with another dictionary installed, none of them is a term, so a word is a term in every
note or in none, and counting stays exact either way.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_WORD = re.compile(r"(?m)^(\S{3,4}) ")  # a dictionary line: word, frequency, part of speech


@dataclass(frozen=True)
class WordTerms:
    """Words of three and four characters (their characters run together), apart, and the
    digest naming them. Apart, so that tokens spelling one have one character each;
    `four_starts`, the first three characters of the words of four, spare looking most
    runs of four up (lore.store.pg_postings.postings_text)."""

    threes: frozenset[str]
    fours: frozenset[str]
    four_starts: frozenset[str]
    digest: str

    @classmethod
    def of(cls, words: frozenset[str], digest: str) -> WordTerms:
        """These words' of three and four characters, named by the digest."""
        fours = frozenset(w for w in words if len(w) == 4)
        threes = frozenset(w for w in words if len(w) == 3)
        return cls(threes, fours, frozenset(w[:3] for w in fours), digest)

    def __len__(self) -> int:
        return len(self.threes) + len(self.fours)

    def __contains__(self, chars: object) -> bool:
        return chars in self.threes or chars in self.fours


NO_WORDS = WordTerms.of(frozenset(), "")


def dictionary_file() -> Path | None:
    """jieba's dictionary, the one rjieba embeds (found without importing jieba)."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "dict.txt"
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def installed_words() -> WordTerms:
    """The installed dictionary's words of three and four characters (NO_WORDS without
    one): read once a process, ~0.1 s, and only by one that writes or reads such a phrase."""
    path = dictionary_file()
    if path is None:
        return NO_WORDS
    words = frozenset(_WORD.findall(path.read_text(encoding="utf-8")))
    return WordTerms.of(words, _digest(words))


def _digest(words: frozenset[str]) -> str:
    import hashlib  # not on a search's path: derive.segment finds the dictionary here

    return hashlib.sha256("\n".join(sorted(words)).encode("utf-8")).hexdigest()[:16]


def words_for(digest: str | None) -> WordTerms:
    """The words an index records by this digest (None: none), if they are installed."""
    installed = installed_words() if digest else NO_WORDS
    return installed if installed.digest == digest else NO_WORDS
