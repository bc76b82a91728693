"""Query segmentation over the compiled dictionary cuts exactly as the whole dictionary does."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import apsw
import pytest
import rjieba
from hypothesis import given
from hypothesis import strategies as st

from lore.derive import segment
from lore.derive.segment import CACHE_NAME, PROBES, cache_name, compiled_segmenter
from lore.store.wordfreq import open_wordfreq, write_wordfreq

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def every_97th_word() -> list[str]:
    """Every 97th dictionary word (Chinese words, and entries such as "AT&T" or "c#"), for
    the generated texts: the cuts depend on which words sit next to which. Read when the
    test first draws (not at import: every pytest worker imports this module)."""
    dictionary = segment._dictionary_file()
    assert dictionary is not None, "jieba's dictionary file is part of every install"
    return sorted(segment.parse_dictionary(dictionary.read_text(encoding="utf-8")))[::97]


OTHER = list(" \t\n,.!?，。！？、「」()[]-+#&%_/abcXYZ019カナひら😀\ue000")


@pytest.fixture(scope="module")
def compiled(user_cache: Path) -> segment.PerTextSegmenter:
    seg = compiled_segmenter(user_cache / "lore" / cache_name())
    assert seg is not None
    return seg


def _same_cuts(seg: segment.Segmenter, text: str) -> None:
    for hmm in (True, False):
        assert seg.cut(text, hmm) == rjieba.cut(text, hmm), (text, hmm)
        assert seg.cut_for_search(text, hmm) == rjieba.cut_for_search(text, hmm), (text, hmm)


@given(
    st.lists(
        st.one_of(
            st.deferred(lambda: st.sampled_from(every_97th_word())),
            st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
            st.sampled_from(OTHER),
        ),
        max_size=40,
    ).map("".join)
)
def test_cuts_of_generated_text_equal_the_whole_dictionary(
    compiled: segment.PerTextSegmenter, text: str
) -> None:
    _same_cuts(compiled, text)


def test_cuts_of_every_benchmark_and_golden_query(compiled: segment.PerTextSegmenter) -> None:
    queries = list(PROBES)
    for path in sorted((ROOT / "bench" / "realvault_queries").glob("*.jsonl")):
        queries += [json.loads(line)["query"] for line in path.read_text("utf-8").splitlines()]
    golden = json.loads((ROOT / "tests" / "golden_queries.json").read_text("utf-8"))
    queries += [q["query"] for q in golden]
    assert len(queries) > 150
    for text in queries:
        _same_cuts(compiled, text)


def test_a_damaged_cache_is_compiled_again(tmp_path: Path) -> None:
    path = tmp_path / CACHE_NAME
    path.write_bytes(b"not a database")
    seg = compiled_segmenter(path)
    assert seg is not None
    _same_cuts(seg, "北京大学的历史")
    with apsw.Connection(str(path)) as conn:
        (count,) = conn.execute("SELECT count(*) FROM words").fetchone() or (0,)
    assert count > 300_000


def test_a_cache_whose_cuts_differed_is_not_used(compiled_path: Path) -> None:
    with apsw.Connection(str(compiled_path)) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'agrees'")
    assert compiled_segmenter(compiled_path) is None


@pytest.fixture
def compiled_path(tmp_path: Path, user_cache: Path) -> Path:
    """A private copy of the session's compiled dictionary, free to spoil."""
    source = user_cache / "lore" / cache_name()
    assert compiled_segmenter(source) is not None
    copy = tmp_path / CACHE_NAME
    copy.write_bytes(source.read_bytes())
    return copy


def test_an_unwritable_cache_folder_means_the_whole_dictionary(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    assert compiled_segmenter(blocker / "lore" / CACHE_NAME) is None


def test_a_cache_of_another_dictionary_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "words.sqlite"
    write_wordfreq(path, "dict.txt:1:1", {"北京": 3, "大学": 2}, 10, agrees=True)
    assert open_wordfreq(path, "dict.txt:2:2") is None
    words = open_wordfreq(path, "dict.txt:1:1")
    assert words is not None
    assert (words.total, words.max_len, words.agrees) == (10, 2, True)
    # Looked up in chunks: more words than one statement binds.
    assert words.lookup(["北京", "历史", *map(str, range(2000))]) == {"北京": 3}
    words.close()


def test_each_installation_keeps_its_own_compiled_dictionary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two environments with their own jieba (a venv, a pipx install) must not rewrite one
    cache file in turn: the name follows where the dictionary is installed."""
    here = cache_name()
    assert here.startswith("jieba-words-") and here.endswith(".sqlite") and here != CACHE_NAME
    other = tmp_path / "other-env" / "jieba" / "dict.txt"
    monkeypatch.setattr(segment, "_dictionary_file", lambda: other)
    assert cache_name() != here and cache_name() == cache_name()
    monkeypatch.setattr(segment, "_dictionary_file", lambda: None)
    assert cache_name() == CACHE_NAME
