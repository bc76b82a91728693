"""Query words against the pinyin of a note's names (lore.derive.pinyin): how much of a
name the query spells, scored like the name channel's exact match, a step below it.

A query word spells a stretch of a name's characters in one of two ways:
- full pinyin, the syllables one after another, the last one possibly cut short as people
  type it ("zhangsan", "zhang" + "san", "zhangs", "shujuku");
- initials, one letter per character (or zh / ch / sh): "zs", "sjk", "zhs".
Tones are dropped ("zhāng", "zhang1"), ü may be v or u. A word of one letter spells
nothing on its own.

    pinyin  (characters of the name spelled or matched / characters of the name)
            × (query words that spell or match something / query words)
            × PINYIN_WEIGHT (names) or TAG_PINYIN_WEIGHT (tags)

so a note whose name the query writes out in characters always beats one whose name it
only spells (1.0 against 0.9), and a tag spelled in pinyin counts for less than a name.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from ..derive.pinyin import MAX_KEY, SYLLABLES, Unit, decode_units
from ..store.rows import PinyinName

PINYIN_WEIGHT = 0.9
TAG_PINYIN_WEIGHT = 0.5
_WORD = re.compile(r"[^\W_]+")
_TONE = re.compile(r"(?<=[a-z])[1-5](?=[a-z]|$)")
_DIGRAPHS = ("zh", "ch", "sh")


def pinyin_words(text: str) -> list[str]:
    """The query's Latin words as pinyin: lower case, no tone marks or numbers, ü as v."""
    out = []
    for raw in _WORD.findall(text):
        word = unicodedata.normalize("NFKC", raw).casefold().replace("ü", "v")
        word = "".join(
            c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)
        )
        word = _TONE.sub("", word)
        if word.isascii() and word.isalpha():
            out.append(word)
    return out


@lru_cache(maxsize=1)
def _syllable_heads() -> tuple[frozenset[str], frozenset[str], int]:
    """(every non-empty beginning of a syllable, every letter a syllable starts with, the
    longest syllable's length)."""
    heads = frozenset(s[:k] for s in SYLLABLES for k in range(1, len(s) + 1))
    return heads, frozenset(s[0] for s in SYLLABLES), max(map(len, SYLLABLES))


def may_spell(word: str) -> bool:
    """Whether `word` can spell anything at all (see match): as initials, every letter
    starts a syllable (zh, ch, sh too: h starts one); as full pinyin, it is syllables one
    after another, the last one possibly cut short. False for most English words
    ("history", "university"): the query's names need not be read for them. Exact: a
    reading is one of SYLLABLES, so a word this refuses spells no unit, and is the
    beginning of no key."""
    heads, letters, longest = _syllable_heads()
    if letters.issuperset(word):
        return True
    starts = {0}  # where a run of whole syllables from the word's start ends
    for at in range(len(word)):
        if at in starts:
            if word[at:] in heads:
                return True
            starts.update(at + n for n in range(1, longest + 1) if word[at : at + n] in SYLLABLES)
    return False


def lookup_words(words: list[str]) -> list[str]:
    """The words worth a key lookup: two letters or more, not longer than a key."""
    return list(dict.fromkeys(w for w in words if 2 <= len(w) <= MAX_KEY))


def _full(word: str, units: list[Unit], i: int) -> int:
    """The end of the longest stretch of units from i that `word` spells as full pinyin
    (the last syllable may be cut short); -1 when none."""
    best = -1

    def walk(pos: int, at: int) -> None:
        nonlocal best
        if pos == len(word):
            best = max(best, at)
            return
        if at == len(units) or not units[at].readings:
            return
        rest = word[pos:]
        for reading in units[at].readings:
            if rest.startswith(reading):
                walk(pos + len(reading), at + 1)
            elif reading.startswith(rest):
                best = max(best, at + 1)

    walk(0, i)
    return best


def _initials(word: str, units: list[Unit], i: int) -> int:
    """The end of the stretch of units from i that `word` spells as initials; -1 when none
    (two characters at least)."""
    best = -1

    def walk(pos: int, at: int) -> None:
        nonlocal best
        if pos == len(word):
            if at - i >= 2:
                best = max(best, at)
            return
        if at == len(units) or not units[at].readings:
            return
        heads = {r[0] for r in units[at].readings}
        heads |= {r[:2] for r in units[at].readings if r[:2] in _DIGRAPHS}
        for head in heads:
            if word.startswith(head, pos):
                walk(pos + len(head), at + 1)

    walk(0, i)
    return best


class PinyinMatch(NamedTuple):  # a tuple: cheaper for a cold process than a dataclass
    score: float
    name: str
    words: tuple[str, ...]  # the query words that spelled it


def match(
    words: list[str], literal: set[str], total: int, units: list[Unit], filler: frozenset[str]
) -> tuple[float, tuple[str, ...]]:
    """(share-by-share score without the weight, the words that spelled something) for
    one name: `words` the query's pinyin words, `literal` its tokens as the index writes
    them (they match a unit outright), `total` how many words the query has, `filler` the
    tokens that say nothing about a name (的, the: they may be spelled, but never count). 0
    when no word spells anything: an exact match alone is the name channel's own."""
    counted = sum(1 for u in units if u.literal not in filler)
    if not counted or not total:
        return 0.0, ()
    covered: set[int] = set()
    spelled: list[str] = []
    # A stretch a word spells starts at a unit one of whose readings begins with the
    # word's first letter (as full pinyin and as initials alike): the others are skipped.
    letters = [{r[:1] for r in u.readings} for u in units]
    for word in words:
        if word in literal and any(u.literal == word for u in units):
            continue  # written as it is in the name: an exact match, not a spelling
        # The stretch that covers the most characters not yet covered, then the longest:
        # a word typed twice ("bi ji ... bi ji" for 笔记…笔记) covers both places.
        best, gain = (0, 0), (0, 0)
        for i in range(len(units)):
            if word[0] not in letters[i]:
                continue
            end = max(_full(word, units, i), _initials(word, units, i))
            new = (sum(1 for j in range(i, end) if j not in covered), end - i)
            if new > gain:
                best, gain = (i, end), new
        if best[1] > best[0]:
            covered.update(range(*best))
            spelled.append(word)
    if not spelled:
        return 0.0, ()
    exact = {u.literal for u in units if u.literal in literal}
    covered.update(i for i, u in enumerate(units) if u.literal in exact)
    share = sum(1 for i in covered if units[i].literal not in filler) / counted
    return round(share * min(1.0, (len(spelled) + len(exact)) / total), 6), tuple(spelled)


def best_match(
    words: list[str],
    literal: set[str],
    total: int,
    names: list[PinyinName],
    filler: frozenset[str],
) -> PinyinMatch | None:
    """The best of a note's names and tags, weighted by kind."""
    best: PinyinMatch | None = None
    for row in names:
        weight = TAG_PINYIN_WEIGHT if row.kind == "tag" else PINYIN_WEIGHT
        share, spelled = match(words, literal, total, decode_units(row.units), filler)
        score = round(weight * share, 6)
        if score > 0 and (best is None or score > best.score):
            best = PinyinMatch(score, row.name, spelled)
    return best
