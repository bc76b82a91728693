"""The postings in blocks on PostgreSQL (lore.store.pg_packs) through any sequence of large
writes (packed), small ones (rows), edits of a note in place (same id) and deletions: the
index ranks exactly as FTS5 does after every step, and its statistics stay right."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pg_ranking import random_fields, text_queries
from twin import Twin, make_twin, note_row

from lore.derive.fields import distinct_terms
from lore.store import pg_batch, pg_packs
from lore.store.query import TextQuery

_examples = itertools.count()

steps = st.lists(
    st.tuples(st.sampled_from(["add", "edit", "delete"]), st.integers(1, 12), st.integers(0, 9)),
    min_size=1,
    max_size=6,
)


def edit(twin: Twin, rng: random.Random, k: int) -> None:
    """New text for up to k notes, each keeping its path and id."""
    chosen = rng.sample(sorted(twin.paths), min(k, len(twin.paths)))
    new = {note_id: random_fields(rng, rng.randint(0, 40)) for note_id in chosen}
    df: Counter[str] = Counter()
    for note_id, fields in new.items():
        df.update(distinct_terms(fields))
        df.subtract(distinct_terms(twin.fields[note_id]))
    for store in (twin.sqlite, twin.pg):
        with store.transaction():
            for note_id, fields in new.items():
                assert store.upsert_note(note_row(twin.paths[note_id], fields), note_id) == note_id
            store.apply_df(df)
    twin.fields.update(new)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=steps, query=text_queries())
def test_random_writes_keep_the_blocks_exact(
    tmp_path: Path,
    pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
    plan: list[tuple[str, int, int]],
    query: TextQuery,
) -> None:
    monkeypatch.setattr(pg_batch, "MAX_DOCUMENTS", 4)  # 4 notes or more: a large write
    monkeypatch.setattr(pg_packs, "PACK_SIZE", 3)  # a shared term fills several blocks
    folder = tmp_path / f"example{next(_examples)}"  # a namespace of its own
    folder.mkdir()
    twin = make_twin(folder, pg_url)
    try:
        added = itertools.count()
        for action, k, seed in plan:
            rng = random.Random(seed)
            if action == "add":
                twin.add(
                    [
                        (f"n/{next(added):03d}.md", random_fields(rng, rng.randint(0, 40)))
                        for _ in range(k)
                    ]
                )
            elif action == "edit":
                edit(twin, rng, k)
            else:
                twin.delete(rng.sample(sorted(twin.paths), min(k, len(twin.paths))))
            assert twin.pg.fts_check() is None
            assert twin.pg.df_drift() == 0
            if twin.paths:
                twin.assert_same(query, 10)
    finally:  # a failing example must not keep its connections open for the next
        twin.pg.close()
        twin.sqlite.close()
