"""The PostgreSQL read cache (lore.store.pg_cache) and the postings it keeps
(lore.store.pg_packs.Postings): what a search reads is served only from its own generation,
within a bound of memory, the least recently used let go. Pure Python: no server."""

from __future__ import annotations

import os
import platform
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lore.store import pg_cache
from lore.store.pg_cache import ReadCache
from lore.store.pg_packs import Postings
from lore.store.pg_records import block_dtype, row_dtype


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_cache, "MAX_BYTES", 100)
    monkeypatch.setattr(pg_cache, "MAX_ENTRIES", 8)


def test_a_value_of_another_generation_is_never_served() -> None:
    cache = ReadCache().at(1)
    cache.put("statistics", (10, 200), size=16)
    assert cache.at(1).get("statistics") == (10, 200)
    assert cache.at(2).get("statistics") is None
    assert cache.size == 0
    assert cache.at(1).get("statistics") is None  # gone for good, not put aside


@pytest.mark.usefixtures("small")
def test_the_least_recently_used_values_make_way() -> None:
    cache = ReadCache().at(1)
    for n in range(5):
        cache.put(n, f"postings {n}", size=20)
    for n in range(3):
        cache.put(("term", n), n)  # term ids weigh nothing: none has to go for them
    assert cache.size == 100 and cache.get(0) == "postings 0"  # 0 is now the most recent
    cache.put("common", "postings of 的", size=25)  # 125 > 100: 1 and 2 go
    assert [cache.get(n) for n in range(5)] == [
        "postings 0",
        None,
        None,
        "postings 3",
        "postings 4",
    ]
    assert cache.get("common") == "postings of 的" and cache.size == 85
    assert [cache.get(("term", n)) for n in range(3)] == [0, 1, 2]
    cache.put("common", "the same, read again", size=25)  # replaced, not counted twice
    assert cache.size == 85


@pytest.mark.usefixtures("small")
def test_a_value_over_a_quarter_of_the_bound_is_not_kept() -> None:
    cache = ReadCache().at(1)
    cache.put("small", 1, size=10)
    cache.put("huge", 2, size=26)
    assert cache.get("huge") is None
    assert cache.get("small") == 1


@pytest.mark.usefixtures("small")
def test_past_the_number_of_values_the_oldest_goes() -> None:
    cache = ReadCache().at(1)
    for n in range(9):
        cache.put(("term", n), n)
    assert cache.get(("term", 0)) is None
    assert [cache.get(("term", n)) for n in range(1, 9)] == list(range(1, 9))


def test_letting_go_of_many_bytes_gives_the_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(pg_cache, "_give_back_memory", lambda: calls.append(1))
    cache = ReadCache().at(1)
    cache.put("small", 1, size=pg_cache.TRIM_BYTES - 1)
    cache.at(2)  # another generation: let go, too little to ask the C library
    cache.put("large", np.ones(pg_cache.TRIM_BYTES // 8), size=pg_cache.TRIM_BYTES)
    assert calls == []
    cache.clear()
    assert calls == [1] and cache.size == 0


def _resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_the_memory_let_go_is_given_back_to_the_system() -> None:
    blocks = [bytes(1000) for _ in range(100_000)]  # ~100 MB in the C library's heap
    pinned = blocks[::100]  # one block in a hundred stays: the heap cannot shrink
    held = _resident_mb()
    blocks.clear()
    freed = _resident_mb()
    pg_cache._give_back_memory()
    after = _resident_mb()
    assert held - freed < 50  # free() alone kept most of it
    assert freed - after > 50  # the trim gave it back
    assert len(pinned) == 1000


operations = st.lists(
    st.tuples(
        st.sampled_from(["get", "put", "generation"]),
        st.integers(0, 40),  # the key (or the generation)
        st.integers(0, 40),  # the size of a value put
    ),
    max_size=200,
)


@settings(max_examples=300)
@given(operations)
def test_the_cache_serves_only_what_was_put_in_its_generation_within_its_bounds(
    ops: list[tuple[str, int, int]],
) -> None:
    cache = ReadCache().at(0)
    put: dict[int, tuple[int, int]] = {}  # key -> (generation, value) last put
    generation, serial = 0, 0
    limits = (100, 8)
    saved = (pg_cache.MAX_BYTES, pg_cache.MAX_ENTRIES)
    pg_cache.MAX_BYTES, pg_cache.MAX_ENTRIES = limits
    try:
        for op, key, size in ops:
            if op == "generation":
                generation = key
                cache.at(generation)
            elif op == "put":
                serial += 1
                cache.put(key, serial, size=size)
                put[key] = (generation, serial)
            else:
                found = cache.get(key)
                if found is not None:
                    assert put[key] == (generation, found)
            kept = list(cache._values.values())
            assert cache.size == sum(weight for _value, weight in kept) <= limits[0]
            assert len(kept) <= limits[1]
            # The values weighing something, in the order they were last used.
            order = [k for k, (_value, weight) in cache._values.items() if weight]
            assert list(cache._weighing) == order
    finally:
        pg_cache.MAX_BYTES, pg_cache.MAX_ENTRIES = saved


@pytest.mark.usefixtures("small")
def test_threads_sharing_the_cache_keep_its_count_of_bytes_right() -> None:
    cache = ReadCache().at(1)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(3000):
                key = int(rng.integers(0, 20))
                if cache.get(key) is None:
                    cache.put(key, key, size=int(rng.integers(0, 25)))
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cache.size == sum(weight for _value, weight in cache._values.values()) <= 100


block_records = st.lists(
    st.tuples(
        st.integers(0, 2**31 - 1) | st.integers(0, 3000),
        st.integers(0, 2**31 - 1) | st.integers(0, 3000),
        st.lists(st.integers(0, 255), min_size=4, max_size=4),
    ),
    max_size=40,
)
row_records = st.lists(
    st.tuples(
        st.integers(-(2**63), 2**63 - 1) | st.integers(0, 2**31 - 1),
        st.integers(0, 2**31 - 1) | st.integers(0, 3000),
        st.lists(st.integers(0, 2**31 - 1) | st.integers(0, 300), min_size=4, max_size=4),
    ),
    max_size=10,
)


@given(block_records, row_records)
def test_postings_decode_to_the_numbers_packed_in_fewer_bytes(
    blocks: list[tuple[int, int, list[int]]], rows: list[tuple[int, int, list[int]]]
) -> None:
    """A term's block records and row records (lore.store.pg_records) decode to their
    numbers, blocks first, in the fewest bytes that hold them."""
    p = Postings.decode(
        np.array(blocks, dtype=block_dtype(4)).tobytes(),
        np.array(rows, dtype=row_dtype(4)).tobytes(),
        4,
    )
    both = blocks + rows
    assert p.docs.tolist() == [doc for doc, _len, _tf in both]
    assert p.lengths.tolist() == [size for _doc, size, _tf in both]
    assert p.counts.reshape(-1, 4).tolist() == [tf for _doc, _len, tf in both]
    assert p.nbytes <= 28 * len(both)
    if both and max(max(tf) for _d, _l, tf in both) < 256:
        assert p.counts.itemsize == 1
