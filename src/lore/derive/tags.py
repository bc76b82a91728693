"""Tags extracted from a note's text without any model, and the same keywords for queries.

- Chinese (and CJK-heavy mixed text): TF-IDF over jieba's segmentation with jieba's own IDF
  table (jieba/analyse/idf.txt), dictionary words only (no HMM guesses): deterministic and about
  1.5 ms a note. TextRank ranked the same words within one or two places in our trials at
  ten times the cost, so TF-IDF is the default.
- English and other Latin-script text: RAKE-style keyphrases (runs of content words between
  stop words and punctuation, scored by word degree / frequency) plus the strongest single
  words, with capitalised words (names) weighted up.

Every tag has a match key (`tag_key`): its tokens from the index's own token stream
(NFKC, case-folded, English stemmed), so "Churches" in a query meets "church" in a note.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from typing import NamedTuple

from .tokenize import cjk_count, has_cjk, segmenter, terms

TAGS_VERSION = "2"  # 2: no keyword from a named file's extension ("md")
MAX_NOTE_TAGS = 10
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’\-]*[A-Za-z0-9]|[A-Za-z]")
_SPLIT = re.compile(r"[^A-Za-z0-9'’\-\s]+")
EN_STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours
    yourself yourselves one two three many much may might must shall upon within without
    however although though since yet still even like well first last new used using use
    including include includes known called made make would could also later several
    become became becomes among around across along another every per via etc""".split()
)
# Question and function words a query or a note is full of, which say nothing about a topic.
_ZH_STOP = frozenset(
    """多少 什么 哪个 哪些 哪里 为什么 如何 怎么 怎样 怎么样 是否 可以 进行 一个 一种 这个 那个
    这些 那些 他们 我们 你们 以及 因为 所以 但是 而且 如果 就是 还是 不是 没有 已经 时候 之后
    之前 其中 通过 由于 成为 不得 其他 以上 以下 之一 自己 可能 需要 主要 当时 后来 开始""".split()
)


def tag_key(tag: str) -> str:
    """The match key of a tag or query keyword: its index tokens joined by spaces."""
    return " ".join(terms(tag))


# jieba.analyse's own stop words (KeywordExtractor.STOP_WORDS), which its TF-IDF leaves out.
JIEBA_STOP = frozenset(
    """the of is and to in that we for an are by be as on with can if from which you it this
    then at have all not one has or""".split()
)


class Idf(NamedTuple):
    """jieba's TF-IDF table: the IDF of each dictionary word, the median for the rest."""

    idf_freq: dict[str, float]
    median_idf: float
    stop_words: frozenset[str]


@lru_cache(maxsize=1)
def _tfidf() -> Idf:
    """jieba's IDF table (jieba/analyse/idf.txt) read as jieba.analyse.TFIDF reads it, but
    without importing jieba.analyse: that also builds jieba.posseg's tagger and TextRank
    (about 1.5 s of CPU in every process that tags a Chinese note), which keywords never use."""
    import logging
    from importlib.resources import files

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    text = files("jieba").joinpath("analyse", "idf.txt").read_bytes().decode("utf-8")
    idf: dict[str, float] = {}
    for line in text.splitlines():
        word, freq = line.strip().split(" ")
        idf[word] = float(freq)
    return Idf(idf, sorted(idf.values())[len(idf) // 2], JIEBA_STOP)


_LETTER = re.compile(r"[^\W\d_]")


def _cjk_share(text: str) -> float:
    sample = text[:4000]
    letters = len(_LETTER.findall(sample))
    return cjk_count(sample) / letters if letters else 0.0


def _zh_keywords(text: str, k: int) -> list[str]:
    import jieba

    tfidf = _tfidf()
    idf, median = tfidf.idf_freq, tfidf.median_idf
    cut = jieba.cut(text, HMM=False)
    counts: Counter[str] = Counter()
    for word in cut:
        word = word.strip()
        if len(word) < 2 or word.isdigit() or word.lower() in tfidf.stop_words:
            continue
        if not has_cjk(word) and (word.lower() in EN_STOP or not word[0].isalpha()):
            continue
        if word in _ZH_STOP:
            continue
        counts[word] += 1
    scored = sorted(counts.items(), key=lambda kv: (-kv[1] * idf.get(kv[0], median), kv[0]))
    return [w for w, _ in scored[:k]]


def _en_keywords(text: str, k: int) -> list[str]:
    phrases: list[list[str]] = []
    for chunk in _SPLIT.split(text):
        current: list[str] = []
        for word in _WORD.findall(chunk):
            if word.lower() in EN_STOP or len(word) < 2:
                if current:
                    phrases.append(current)
                current = []
            else:
                current.append(word)
        if current:
            phrases.append(current)
    freq: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    caps: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for phrase in phrases:
        for word in phrase:
            key = word.lower()
            freq[key] += 1
            degree[key] += min(len(phrase), 3) - 1
            if word[0].isupper():
                caps[key] += 1
            surface.setdefault(key, key)
    if not freq:
        return []

    def word_score(key: str) -> float:
        capital = 1.0 + caps[key] / freq[key]  # names and terms written with a capital
        return capital * (freq[key] + 0.5 * degree[key]) * math.log(2 + min(len(key), 12))

    scores = {w: word_score(w) for w in freq}
    words = sorted(freq, key=lambda w: (-scores[w], w))
    multi = Counter(  # pairs of two different words ("budget budget" is no phrase)
        f"{p[i].lower()} {p[i + 1].lower()}"
        for p in phrases
        for i in range(len(p) - 1)
        if p[i].lower() != p[i + 1].lower()
    )
    bigrams = sorted(
        (b for b, n in multi.items() if n >= 2 or len(phrases) < 20),
        key=lambda b: (-(multi[b] * sum(scores[w] for w in b.split())), b),
    )
    picked = words[: max(1, k - k // 3)] + bigrams[: k // 3]
    return picked[:k]


def heuristic_tags(title: str, text: str, k: int = MAX_NOTE_TAGS) -> list[str]:
    """Up to `k` keywords of a note (title counted twice), strongest first, deterministic.
    Only prose counts: `#include` in code or `pdf` in a link's URL says nothing of what a
    note is about."""
    from ..ingest.markdown import prose  # the whole reader: indexing needs it, a search not

    sample = f"{title}\n{title}\n{prose(text[:6000])[:3000]}"
    if _cjk_share(sample) >= 0.3:
        found = _zh_keywords(sample, k)
    else:
        found = _en_keywords(sample, k)
    out: list[str] = []
    keys: set[str] = set()
    for tag in found:
        key = tag_key(tag)
        if key and key not in keys:
            keys.add(key)
            out.append(tag)
    return out


def _zh_query_words(text: str) -> list[str]:
    """The content words of a Chinese query, longest (most specific) first, then in the
    order written. No IDF table: a search must not load jieba's keyword extractor."""
    words: list[tuple[int, int, str]] = []
    for position, word in enumerate(segmenter().cut_for_search(text, False)):
        word = word.strip()
        if len(word) < 2 or word.isdigit() or word in _ZH_STOP:
            continue
        if not has_cjk(word) and (word.lower() in EN_STOP or not word[0].isalpha()):
            continue
        words.append((-len(word), position, word))
    return [word for _, _, word in sorted(words)]


def query_keywords(text: str, k: int) -> list[str]:
    """Keywords of a query (filler already removed): every content word, phrases of two,
    longest first for Chinese; at most `k`."""
    if _cjk_share(text) >= 0.3:
        return _dedupe(_zh_query_words(text), k)
    words = [w for w in _WORD.findall(text) if w.lower() not in EN_STOP and len(w) > 1]
    lowered = [w.lower() for w in words]
    pairs = [f"{a} {b}" for a, b in zip(lowered, lowered[1:], strict=False)]
    ranked = sorted(dict.fromkeys(lowered), key=lambda w: (-(w in _caps(words)), -len(w), w))
    return _dedupe(ranked + pairs, k)


def _caps(words: list[str]) -> set[str]:
    return {w.lower() for w in words if w[0].isupper()}


def _dedupe(items: list[str], k: int) -> list[str]:
    out: list[str] = []
    keys: set[str] = set()
    for item in items:
        key = tag_key(item)
        if key and key not in keys:
            keys.add(key)
            out.append(item)
        if len(out) >= k:
            break
    return out
