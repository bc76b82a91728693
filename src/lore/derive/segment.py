"""Chinese word segmentation for queries: jieba's dictionary and algorithm, loaded fast.

Queries are segmented with it (the index holds one token per CJK character), and a one-shot
`lore search` process would spend most of its time loading the dictionary: rjieba builds
its 349,046-word trie when imported. Segmenting one text needs only the dictionary words
that occur in that text and the total frequency (jieba scores a cut by log(freq / total)),
so the dictionary is compiled once into a keyed SQLite file (store.wordfreq, in the user's
cache folder) and each text gets an rjieba engine holding just its own words plus one
placeholder word, absent from the text, that carries the rest of the total. Same engine,
same words, same total: the same cuts as the full dictionary, which is checked when the
file is compiled. Without rjieba, or when the cache cannot be written, the full dictionary
is loaded as before.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from ..store.jieba_words import dictionary_file as _dictionary_file

CACHE_NAME = "jieba-words.sqlite"  # with the installation's tag: see cache_name()
# Past this the lookups cost about as much as loading the whole dictionary (2,000
# characters: half of it; 4,000, the longest query: more).
MAX_TEXT = 2000
# Cut by the full dictionary and by a per-text engine when the cache is compiled: Chinese
# with Latin, digits, spaces, punctuation, kana and words the dictionary lacks.
PROBES = (
    "北京大学的历史",
    "怎么在 linux 下看哪个进程占了端口",
    "普通用户用 sudo 时不想每次都输密码该怎么设置",
    "程序崩溃了怎么让系统自动保存内存快照方便事后分析",
    "AI 编程 Python 教程，GitHub 开源项目 v2.0 与 C++、C# 的对比",
    "张三在2024年3月去了上海浦东新区，说「客户去重规则」要改。",
    "东京の天気とカタカナ表記、喵星人吐槽区块链",
)


class Segmenter(Protocol):
    """Dictionary word segmentation of Chinese text (jieba's dictionary and algorithm)."""

    def cut(self, text: str, hmm: bool = True) -> list[str]: ...

    def cut_for_search(self, text: str, hmm: bool = True) -> list[str]: ...


class Words(Protocol):
    """A dictionary read by word (store.wordfreq.WordFreq): frequencies and their total."""

    total: int
    max_len: int
    agrees: bool  # per-text engines over it cut as the whole dictionary does

    def lookup(self, words: Iterable[str]) -> dict[str, int]: ...


class _Jieba:
    def __init__(self, module: Any) -> None:
        self.module = module

    def cut(self, text: str, hmm: bool = True) -> list[str]:
        return list(self.module.cut(text, HMM=hmm))

    def cut_for_search(self, text: str, hmm: bool = True) -> list[str]:
        return list(self.module.cut_for_search(text, HMM=hmm))


class PerTextSegmenter:
    """rjieba's engine over the words of each text, read from the compiled dictionary."""

    def __init__(self, engine: Any, words: Words) -> None:
        self._engine = engine  # rjieba's Jieba class
        self._words = words

    def cut(self, text: str, hmm: bool = True) -> list[str]:
        return list(self._for(text).cut(text, hmm))

    def cut_for_search(self, text: str, hmm: bool = True) -> list[str]:
        return list(self._for(text).cut_for_search(text, hmm))

    def _for(self, text: str) -> Any:
        """An engine holding the dictionary words found in `text` (about a millisecond)."""
        if len(text) > MAX_TEXT:
            return full_segmenter()
        longest = self._words.max_len
        pieces = {
            text[i:j]
            for i in range(len(text))
            for j in range(i + 1, min(len(text), i + longest) + 1)
        }
        found = self._words.lookup(pieces)
        engine = self._engine.empty()
        for word, freq in sorted(found.items()):
            engine.add_word(word, freq, None)
        rest = self._words.total - sum(found.values())
        if rest <= 0:  # the text holds (nearly) the whole dictionary: nothing to save
            return full_segmenter()
        engine.add_word(_absent_char(text), rest, None)
        return engine


def _absent_char(text: str) -> str:
    """A private-use character that `text` does not contain: a word that never matches."""
    present = set(text)
    return next(c for c in map(chr, range(0xE000, 0xF900)) if c not in present)


@lru_cache(maxsize=1)
def full_segmenter() -> Segmenter:
    """rjieba with its whole dictionary (jieba's, in Rust), else jieba itself. On the 1,002
    cmrc2018_trial queries the two cut alike but for 12, where jieba splits a Latin token
    such as "T-92" that lore never hands to the segmenter."""
    try:
        import rjieba
    except ImportError:
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        return _Jieba(jieba)
    return rjieba


@lru_cache(maxsize=1)
def segmenter() -> Segmenter:
    """The segmenter for queries: per-text engines over the compiled dictionary when rjieba
    and jieba's dictionary file are installed, else the whole dictionary."""
    if "rjieba" in sys.modules:  # the whole dictionary is loaded already: use it
        return full_segmenter()
    from ..config import user_cache_dir

    return compiled_segmenter(user_cache_dir() / cache_name()) or full_segmenter()


def cache_name() -> str:
    """The compiled dictionary's file name, tagged by where jieba's dictionary is installed:
    two environments (a venv and a pipx install, two checkouts) each keep their own instead
    of recompiling one file in turn (their dictionaries' stamps differ)."""
    import zlib

    dictionary = _dictionary_file()
    if dictionary is None:
        return CACHE_NAME
    tag = zlib.crc32(str(dictionary).encode("utf-8", "surrogateescape"))
    return CACHE_NAME.replace(".sqlite", f"-{tag:08x}.sqlite")


def compiled_segmenter(path: Path) -> PerTextSegmenter | None:
    """Per-text engines over the dictionary compiled at `path` (compiled there first when
    missing or stale); None without rjieba's engine or jieba's dictionary file, when the
    file cannot be written, or when its cuts were found to differ."""
    from ..store.wordfreq import open_wordfreq

    engine, dictionary = _engine(), _dictionary_file()
    if engine is None or dictionary is None:
        return None
    engine_class, engine_file = engine
    stamp = f"{_file_stamp(dictionary)} {_file_stamp(engine_file)}"
    words = open_wordfreq(path, stamp) or _compile(path, stamp, dictionary, engine_class)
    if words is None or not words.agrees:
        return None
    return PerTextSegmenter(engine_class, words)


def _engine() -> tuple[Any, Path] | None:
    """rjieba's engine class and its file, loaded without the package's `__init__`, which
    builds the default engine (the whole dictionary) on import."""
    spec = importlib.util.find_spec("rjieba")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    name = "rjieba.rjieba"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"rjieba{suffix}"
        if path.is_file():
            break
    else:
        return None
    module = sys.modules.get(name)
    if module is None:
        loader = importlib.machinery.ExtensionFileLoader(name, str(path))
        ext_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        if ext_spec is None:
            return None
        module = importlib.util.module_from_spec(ext_spec)
        try:
            loader.exec_module(module)
        except ImportError:  # e.g. an engine that refuses a second load: use the package
            return None
        sys.modules[name] = module  # `import rjieba` later reuses it (its __init__ imports it)
    engine = getattr(module, "Jieba", None)
    return (engine, path) if hasattr(engine, "empty") else None


def _file_stamp(path: Path) -> str:
    st = path.stat()
    return f"{path.name}:{st.st_size}:{st.st_mtime_ns}"


class _MemoryWords:
    """The parsed dictionary, shaped like store.wordfreq.WordFreq (to check it)."""

    def __init__(self, freqs: dict[str, int], total: int) -> None:
        self.freqs = freqs
        self.total = total
        self.max_len = max(map(len, freqs), default=0)
        self.agrees = True

    def lookup(self, words: Iterable[str]) -> dict[str, int]:
        return {w: self.freqs[w] for w in words if w in self.freqs}


def parse_dictionary(text: str) -> dict[str, int]:
    """jieba's dict.txt: `word freq [tag]` per line; a word listed twice keeps its last."""
    freqs: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split(" ")
        if len(parts) >= 2 and parts[0] and parts[1].isdigit():
            freqs[parts[0]] = int(parts[1])
    return freqs


def _compile(path: Path, stamp: str, dictionary: Path, engine: Any) -> Words | None:
    """Compile the dictionary into the cache, after checking on PROBES that per-text engines
    cut as the whole dictionary does (it is loaded for that, once). None when the cache
    cannot be written: the whole dictionary is used then."""
    from ..store.wordfreq import open_wordfreq, write_wordfreq

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if not os.access(path.parent, os.W_OK):  # not worth parsing 349,046 lines for nothing
        return None
    freqs = parse_dictionary(dictionary.read_text(encoding="utf-8"))
    words = _MemoryWords(freqs, sum(freqs.values()))
    agrees = agree(PerTextSegmenter(engine, words), full_segmenter())
    try:
        write_wordfreq(path, stamp, freqs, words.total, agrees=agrees)
        return open_wordfreq(path, stamp)
    except OSError:
        return None


def agree(a: Segmenter, b: Segmenter, texts: Iterable[str] = PROBES) -> bool:
    """Whether two segmenters cut every text alike, in every mode."""
    return all(
        a.cut(t, hmm) == b.cut(t, hmm) and a.cut_for_search(t, hmm) == b.cut_for_search(t, hmm)
        for t in texts
        for hmm in (True, False)
    )
