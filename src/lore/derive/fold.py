"""Script folding: Traditional and Simplified Chinese as one token stream.

People keep notes in both scripts and type queries in whichever their keyboard is set to,
so a note that says 數據庫 must be found by 数据库 and the other way round. Folding happens
in the token stream (lore.derive.tokenize), the one stream every backend indexes and every
query is matched against, so SQLite and any other backend agree:

- Characters: every CJK character token is folded to its Simplified form (數 → 数, 為 →
  为, 裡 → 里), one character to one, so offsets still point at what the note says and the
  snippet is cut and highlighted from the original text. Folding is idempotent, and a text
  and its character conversion (OpenCC s2t, t2s) give the same stream.
- Words: Taiwan and Hong Kong write some things with other words (軟體 for 软件, 記憶體 for
  内存, 資訊 for 信息), which no character map can join. In a run of Traditional text each
  such word also yields its mainland form, with a few characters of context either side,
  as an *alternative*: extra tokens after the field's text (lore.derive.tokenize), so a
  phrase query for 软件 or 软件工程 matches 軟體工程, and the original spelling is still
  there for a query that uses it. A Traditional query gets the same alternatives, so 軟體
  finds the mainland 软件. Simplified text gets none: 执行 stays 执行, although Taiwan's 執行
  also yields 运行.
- Japanese: a run with kana is Japanese; its kanji are folded like any other (東京 → 东京,
  both sides alike) but never given Chinese words as alternatives.

The tables are generated from OpenCC's dictionaries by tools/fold_data.py (fold_data.py).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from functools import lru_cache
from typing import Any, NamedTuple

from . import fold_data

CONTEXT = 3  # characters of the run kept either side of a word's alternative
# Separates alternatives from the text and from each other in the token stream: a private-use
# character (never a word character to the tokenizer, a token to FTS5's ascii tokenizer), so
# no phrase runs from the text into an alternative or from one alternative into the next.
ALT_SEPARATOR = "\ue001"
FOLDING_VERSION = f"opencc-{fold_data.OPENCC_VERSION}"

_KANA = re.compile("[\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\uff66-\uff9f]")


def _pairs(table: str) -> dict[str, str]:
    return dict(item.split("=") for item in table.split("|") if item)


# What folds: "words" (characters, and Taiwan / Hong Kong words as alternatives), "chars"
# (characters only) or "off". lore always folds "words"; the others exist so that
# bench.folding can measure what each step buys (use()).
MODES = ("words", "chars", "off")
_mode = "words"


class _Tables(NamedTuple):
    chars: dict[int, int]
    words: dict[str, str]  # folded Traditional word → folded mainland word
    trad_only: frozenset[str]  # characters only Traditional text uses
    simp_only: frozenset[str]  # characters only Simplified text uses


@lru_cache(maxsize=1)
def _tables() -> _Tables:
    words = {**_pairs(fold_data.FIXES), **_pairs(fold_data.REGIONAL)} if _mode == "words" else {}
    chars = fold_data.CHARS_FROM if _mode != "off" else ""
    return _Tables(
        str.maketrans(chars, fold_data.CHARS_TO[: len(chars)]),
        words,
        frozenset(fold_data.TRAD_ONLY),
        frozenset(fold_data.SIMP_ONLY),
    )


def use(mode: str) -> None:
    """Fold as `mode` from now on, in this process: for measurements only (bench.folding,
    bench.pinyin). lore itself always folds "words"; an index's derivation version
    (TOKENIZER_VERSION) stands for that folding, so an index made otherwise is a scratch one."""
    global _mode, _python_scanned
    if mode not in MODES:
        raise ValueError(f"folding mode {mode!r} is not one of {', '.join(MODES)}")
    _mode = mode
    _python_scanned = 0
    _tables.cache_clear()
    _words_re.cache_clear()
    _longest_word.cache_clear()
    fold_char.cache_clear()


def char_table() -> dict[int, int]:
    """The character map fold_char applies after NFKC (a `str.translate` table): a text
    already NFKC-normalised folds character for character in one `translate` call."""
    return _tables().chars


@lru_cache(maxsize=100_000)
def fold_char(char: str) -> str:
    """One CJK character as the index stores it: NFKC, then its Simplified form."""
    return unicodedata.normalize("NFKC", char).translate(_tables().chars)


def fold(text: str) -> str:
    """`text` with every character folded, character for character: the same length, so
    offsets into it are offsets into `text` (a character NFKC would expand, such as ¼ or
    ゟ, is only mapped by the table)."""
    return "".join(map(_fold_one, text))


def _fold_one(char: str) -> str:
    folded = fold_char(char)
    return folded if len(folded) == 1 else char.translate(_tables().chars)


def has_traditional(text: str) -> bool:
    """Whether `text` holds a character only Traditional text uses (a fast test first:
    Simplified and non-Chinese text never takes alternatives). ASCII text holds none: the
    tables are not built for it (an English search need not)."""
    if text.isascii():
        return False
    t = _tables()
    return bool(t.words) and not t.trad_only.isdisjoint(text)


def script(text: str) -> str:
    """'trad', 'simp' or '' (cannot tell): which characters only one script uses win."""
    t = _tables()
    trad = sum(map(t.trad_only.__contains__, text))
    simp = sum(map(t.simp_only.__contains__, text))
    return "trad" if trad > simp else "simp" if simp > trad else ""


def is_japanese(run: str) -> bool:
    return _KANA.search(run) is not None


def takes_alternatives(run: str, run_script: str) -> bool:
    """Whether a CJK run of this script (its own, else its text's) takes alternatives: a
    Traditional run that is not Japanese."""
    return run_script == "trad" and not is_japanese(run)


class Alternative(NamedTuple):
    """The mainland spelling of a window of a text: `text` stands for text[start:end], and
    `spans` gives each of its characters the span of the text it stands for. (This module's
    records are NamedTuples: a search imports it, and a NamedTuple costs a cold process
    less to define than a dataclass.)"""

    text: str
    start: int
    end: int
    spans: tuple[tuple[int, int], ...]


def alternatives(
    text: str, runs: list[tuple[int, str]], context: str | None = None
) -> list[Alternative]:
    """The mainland alternatives of the Traditional runs of `text`: `runs` are its CJK runs
    as (offset, run), in order; offsets of the result are into `text`. A run that cannot
    tell its script takes `context` (by default the script of the whole text). One regex
    pass over the folded text finds the words (they are CJK only: each lies in one run)."""
    if not runs or not (has_traditional(text) or (context == "trad" and _tables().words)):
        return []
    folded = text.translate(_tables().chars)
    found = _words_in(folded, runs)
    if not found:
        return []
    starts = [start for start, _run in runs]
    verdicts: dict[int, bool] = {}

    def traditional(i: int) -> bool:
        nonlocal context
        if i not in verdicts:
            run = runs[i][1]
            own = script(run)
            if not own and context is None:
                context = script(text)
            verdicts[i] = takes_alternatives(run, own or context or "")
        return verdicts[i]

    windows: list[tuple[int, list[tuple[int, int]]]] = []  # (run index, word spans)
    for start, end in found:
        i = bisect_right(starts, start) - 1
        if not traditional(i):
            continue
        if windows and windows[-1][0] == i and start - windows[-1][1][-1][1] <= 2 * CONTEXT:
            windows[-1][1].append((start, end))
        else:
            windows.append((i, [(start, end)]))
    return [_window(folded, runs[i], group) for i, group in windows]


def mainland(text: str, runs: list[tuple[int, str]]) -> str | None:
    """`text` folded with its Traditional words in their mainland spelling (軟體工程 →
    软件工程), or None when it has none: a name's other spelling (lore.derive.pinyin)."""
    alts = alternatives(text, runs)
    if not alts:
        return None
    folded = text.translate(_tables().chars)
    out, cursor = [], 0
    for alt in alts:
        out += [folded[cursor : alt.start], alt.text]
        cursor = alt.end
    return "".join(out) + folded[cursor:]


def _window(folded: str, run: tuple[int, str], group: list[tuple[int, int]]) -> Alternative:
    """The alternative for words of one run close together: their mainland spellings with
    up to CONTEXT characters of the run either side."""
    words = _tables().words
    lo = max(run[0], group[0][0] - CONTEXT)
    hi = min(run[0] + len(run[1]), group[-1][1] + CONTEXT)
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    cursor = lo
    for start, end in group:
        text.append(folded[cursor:start])
        spans.extend((i, i + 1) for i in range(cursor, start))
        word = words[folded[start:end]]
        text.append(word)
        spans.extend(_spread(start, end, len(word)))
        cursor = end
    text.append(folded[cursor:hi])
    spans.extend((i, i + 1) for i in range(cursor, hi))
    return Alternative("".join(text), lo, hi, tuple(spans))


# Characters of CJK runs looked up word by word in Python before the regex is built: it costs
# about as much to build (~20 ms) as this many characters do to look up, so a process that
# folds a few notes (a search cutting its snippets) never builds it, and one that folds
# many (indexing) builds it once.
PYTHON_SCAN_CHARS = 40_000
_python_scanned = 0


def _words_in(folded: str, runs: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """Spans of the table's words in `folded` (`runs`: its CJK runs, where every word lies),
    leftmost longest, not overlapping: the regex's matches, or the same found in Python."""
    global _python_scanned
    size = sum(len(run) for _start, run in runs)
    if _words_re.cache_info().currsize == 0 and _python_scanned + size <= PYTHON_SCAN_CHARS:
        _python_scanned += size
        return [span for start, run in runs for span in _longest_words(folded, start, len(run))]
    pattern = _words_re()
    return [] if pattern is None else [m.span() for m in pattern.finditer(folded)]


def _longest_words(folded: str, start: int, size: int) -> list[tuple[int, int]]:
    """The words of folded[start:start + size] as the regex finds them: at each position the
    longest word that starts there, else the next position."""
    words = _tables().words
    longest = _longest_word()
    out: list[tuple[int, int]] = []
    i, end = start, start + size
    while i < end:
        for n in range(min(longest, end - i), 1, -1):
            if folded[i : i + n] in words:
                out.append((i, i + n))
                i += n
                break
        else:
            i += 1
    return out


@lru_cache(maxsize=1)
def _longest_word() -> int:
    return max(map(len, _tables().words), default=0)


@lru_cache(maxsize=1)
def _words_re() -> re.Pattern[str] | None:
    """The words as one regex shaped like a trie (一(?:坏|目瞭然)...): the engine tries one
    branch per character instead of every word at every position. Built (~20 ms) once
    PYTHON_SCAN_CHARS of Traditional text were folded, never for Simplified or non-Chinese
    text."""
    words = _tables().words
    if not words:
        return None
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + render(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        if len(branches) == 1 and "" not in node:
            return branches[0]
        group = "(?:" + "|".join(branches) + ")"
        return group + "?" if "" in node else group  # greedy: the longest word first

    return re.compile(render(root))


def _spread(start: int, end: int, n: int) -> list[tuple[int, int]]:
    """Spans of the original [start, end) for the n characters that replace it (記憶體 →
    内存: 内 = 記, 存 = 憶體), so a highlight covers the word the note wrote."""
    width = end - start
    spans = []
    for i in range(n):
        a = start + (i * width) // n
        b = max(a + 1, start + ((i + 1) * width) // n)
        spans.append((min(a, end - 1), min(b, end)))
    return spans


def describe() -> str:
    """What `lore status` says about the folding in force."""
    t = _tables()
    if _mode != "words":
        return f"folding: {_mode}"
    return (
        f"Traditional → Simplified: {len(t.chars):,} characters, {len(t.words):,} Taiwan /"
        f" Hong Kong words as alternatives (OpenCC {fold_data.OPENCC_VERSION} data)"
    )
