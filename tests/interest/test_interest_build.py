"""Interest maps built from real vaults on disk, lexical and with vectors written through
the real embed path: topics found, byte-identical rebuilds, stable ids, bad input, LLM
labels, the stored snapshot."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import copy_indexed_vault, isolated_module
from interest_support import (  # noqa: F401 - no_interest_env is a fixture
    TOPICS,
    ScriptedChat,
    WordEmbedder,
    cluster_of,
    embed_vault,
    no_interest_env,
    write_topic_vault,
)

import lore
from lore.errors import ConfigError
from lore.interest.model import InterestMap

pytestmark = pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL
EN = ["cooking", "astronomy", "finance", "gardening"]
TODAY = dt.date(2026, 6, 1)


def build(root: Path, **kwargs: object) -> InterestMap:
    with lore.open(root) as vault:
        vault.sync()
        return vault.build_clusters(today=TODAY, **kwargs)  # type: ignore[arg-type]


def shown(interest: InterestMap) -> str:
    return json.dumps([c.to_dict() for c in interest.clusters], ensure_ascii=False)


def purity(interest: InterestMap) -> float:
    """Share of notes whose cluster's majority topic is their own topic (folder)."""
    right = 0
    for c in interest.clusters:
        topics = Counter(m.path.split("/")[0] for m in c.members)
        right += topics.most_common(1)[0][1]
    return right / sum(c.size for c in interest.clusters)


@pytest.fixture(scope="module")
def indexed_topics(
    backend: str, backend_db: Any, tmp_path_factory: pytest.TempPathFactory, user_cache: Path
) -> tuple[Path, str | None]:
    """(vault, its PostgreSQL database or None: the file in .lore): 120 notes on six
    topics, indexed once for the module (indexing them was most of a test's cost)."""
    base = tmp_path_factory.mktemp("topics")
    root = base / "vault"
    write_topic_vault(root, list(TOPICS), 20)
    db = None if backend == "sqlite" else str(backend_db)
    with isolated_module(base, user_cache), lore.open(root, db=db) as vault:
        assert len(vault.sync().added) == 120
    return root, db


@pytest.fixture
def topic_vault(
    tmp_path: Path, indexed_topics: tuple[Path, str | None], request: pytest.FixtureRequest
) -> Path:
    """A copy of the indexed topic vault of its own (on this test's backend)."""
    source, db = indexed_topics
    server = request.getfixturevalue("pg_server") if db is not None else None
    return copy_indexed_vault(source, tmp_path / "vault", db, server)


def test_a_lexical_map_finds_the_topics(topic_vault: Path) -> None:
    interest = build(topic_vault)
    assert interest.lexical and interest.params["source"] == "lexical tf-idf"
    assert any("lexical map" in m for m in interest.messages)
    assert interest.notes == 120 and sum(c.size for c in interest.clusters) == 120
    assert purity(interest) >= 0.9
    assert 1 <= len(interest.clusters) <= 16 and min(c.size for c in interest.clusters) >= 5
    labels = [c.label for c in interest.clusters]
    assert len(set(labels)) == len(labels)
    assert any(c.label_source == "tags" and c.top_tags for c in interest.clusters)


def test_a_vector_map_uses_the_stored_vectors(topic_vault: Path) -> None:
    embed_vault(topic_vault)
    interest = build(topic_vault)
    assert not interest.lexical and interest.params["source"] == "vectors fake:words-48"
    assert purity(interest) >= 0.9
    for c in interest.clusters:
        sims = [m.similarity for m in c.members]
        assert sims == sorted(sims, reverse=True)  # most representative first
        assert all(-1.0 <= s <= 1.0 for s in sims)
    points = {(m.x, m.y) for c in interest.clusters for m in c.members}
    assert len(points) > 10  # a spread-out map, not one dot


@pytest.mark.parametrize("algo", ["kmeans++", "hierarchical"])
@pytest.mark.parametrize("vectors", [False, True])
def test_same_notes_and_settings_give_the_same_map_byte_for_byte(
    topic_vault: Path, tmp_path: Path, algo: str, vectors: bool
) -> None:
    if vectors:
        embed_vault(topic_vault)
    first = build(topic_vault, cluster_algo=algo)
    again = build(topic_vault, cluster_algo=algo)
    assert shown(first) == shown(again)
    assert first.fingerprint == again.fingerprint
    # A copy of the vault with a fresh index (other note ids, other order of writes).
    copy = tmp_path / "copy"
    shutil.copytree(topic_vault, copy, ignore=shutil.ignore_patterns(".lore"))
    if vectors:
        embed_vault(copy)
    assert shown(build(copy, cluster_algo=algo)) == shown(first)


@pytest.mark.parametrize("algo", ["kmeans++", "hierarchical"])
@pytest.mark.parametrize("vectors", [False, True])
def test_ids_stay_when_five_percent_more_notes_arrive(
    topic_vault: Path, vectors: bool, algo: str
) -> None:
    # As many clusters as topics: a well-posed map (with fewer clusters than topics which
    # topics share one is a near tie that new notes can tip; bench/results/interest.md).
    settings = {"max_clusters": 6, "cluster_algo": algo}
    if vectors:
        embed_vault(topic_vault)
    before = cluster_of(build(topic_vault, **settings))
    write_topic_vault(topic_vault, list(TOPICS)[:6], 1, seed=99, prefix="extra-")
    if vectors:
        embed_vault(topic_vault)
    after = build(topic_vault, **settings)
    now = cluster_of(after)
    assert after.notes == 126
    kept = sum(1 for path, cid in before.items() if now.get(path) == cid)
    assert kept / len(before) >= 0.9


def test_new_clusters_get_fresh_ids(topic_vault: Path) -> None:
    first = build(topic_vault, max_clusters=2)
    second = build(topic_vault)
    old_ids = {c.id for c in first.clusters}
    fresh = [c.id for c in second.clusters if c.id not in old_ids]
    assert fresh and min(fresh) > max(old_ids)


def test_the_stored_map_reads_back_as_built(topic_vault: Path) -> None:
    built = build(topic_vault)
    with lore.open(topic_vault) as vault:
        assert vault.clusters() == built
    (topic_vault / "cooking" / "n000.md").unlink()
    with lore.open(topic_vault) as vault:
        vault.sync()
        stale = vault.clusters()
        assert stale is not None and stale.clusters == built.clusters  # a snapshot
        assert "changed since this map was built" in stale.messages[-1]
        assert vault.doctor().ok  # members naming a deleted note are not damage


def test_no_map_before_the_first_build(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_topic_vault(root, list(TOPICS), 20)
    with lore.open(root) as vault:
        assert vault.clusters() is None


# -- bad input ----------------------------------------------------------------------------


def test_an_empty_vault(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    interest = build(root)
    assert interest.clusters == () and interest.notes == 0
    assert "no notes to cluster" in interest.messages[-1]


def test_fewer_notes_than_the_minimum_cluster_size(tmp_path: Path) -> None:
    root = tmp_path / "few"
    write_topic_vault(root, ["cooking"], 2)
    write_topic_vault(root, ["finance"], 1)
    interest = build(root)
    assert [c.size for c in interest.clusters] == [3]
    assert any("fewer than the minimum cluster size 5" in m for m in interest.messages)


@pytest.mark.parametrize("vectors", [False, True])
def test_identical_notes_make_one_cluster(tmp_path: Path, vectors: bool) -> None:
    root = tmp_path / "same"
    root.mkdir()
    for i in range(12):
        (root / f"copy{i:02d}.md").write_text("# Same\n\nexactly the same words here\n")
    if vectors:
        embed_vault(root)
    interest = build(root)
    assert [c.size for c in interest.clusters] == [12]
    assert interest.lexical is not vectors


def test_notes_without_vectors_are_listed_as_unclustered(topic_vault: Path) -> None:
    embed_vault(topic_vault)
    added = write_topic_vault(topic_vault, ["cooking", "finance"], 3, prefix="late-")
    interest = build(topic_vault)  # synced without a provider: the new notes have no vector
    assert not interest.lexical
    assert sorted(interest.unclustered) == sorted(added)
    assert interest.notes == 120
    assert any("6 note(s) have no vector yet" in m for m in interest.messages)


def test_mostly_unembedded_vaults_fall_back_to_lexical(tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    write_topic_vault(root, ["cooking"], 6)
    embed_vault(root)
    write_topic_vault(root, ["finance", "astronomy"], 10, prefix="late-")
    interest = build(root)
    assert interest.lexical and interest.notes == 26 and not interest.unclustered
    assert any("only 6 of 26 notes have vectors" in m for m in interest.messages)


def test_source_vectors_without_vectors_is_a_clear_error(topic_vault: Path) -> None:
    with pytest.raises(ConfigError, match="holds no vectors") as caught:
        build(topic_vault, source="vectors")
    assert "lore embed" in str(caught.value)


@pytest.mark.parametrize("vectors", [False, True])
def test_a_vault_in_one_language_only(tmp_path: Path, vectors: bool) -> None:
    root = tmp_path / "zh"
    write_topic_vault(root, ["数据库", "旅行"], 15)
    if vectors:
        embed_vault(root)
    interest = build(root)
    assert purity(interest) >= 0.9 and len(interest.clusters) >= 2
    assert all(c.label for c in interest.clusters)


def test_notes_that_share_no_word_are_unclustered(tmp_path: Path) -> None:
    root = tmp_path / "odd"
    write_topic_vault(root, ["cooking"], 8)
    (root / "blank.md").write_text("---\ntitle: x\n---\n\n!!! ??? ...\n")
    interest = build(root)
    assert interest.unclustered == ("blank.md",)
    assert any("share no word" in m for m in interest.messages)


# -- labels and trends --------------------------------------------------------------------


def test_llm_labels_are_cached_and_a_failing_llm_keeps_the_heuristic_ones(
    topic_vault: Path,
) -> None:
    with lore.open(topic_vault) as vault:
        vault.sync()
        chat = ScriptedChat()
        vault.capabilities.use(chat=chat)
        interest = vault.build_clusters(today=TODAY)
        assert {c.label_source for c in interest.clusters} == {"llm"}
        labels = [c.label for c in interest.clusters]
        assert any(label.startswith("Topic: ") for label in labels)
        assert len(set(labels)) == len(labels)  # a repeated proposal keeps the heuristic one
        calls = chat.calls
        assert calls == len(interest.clusters)
        vault.build_clusters(today=TODAY)
        assert chat.calls == calls  # answers come from the cache
        vault.capabilities.use(chat=ScriptedChat(fail=True))
        fallback = vault.build_clusters(today=TODAY, max_clusters=3)  # new inputs: not cached
        assert {c.label_source for c in fallback.clusters} <= {"tags", "titles"}
        assert any("LLM labels unavailable" in m for m in fallback.messages)
        off = vault.build_clusters(today=TODAY, llm_labels="off")
        assert "llm" not in {c.label_source for c in off.clusters}


def test_llm_labels_on_without_an_llm_is_refused(topic_vault: Path) -> None:
    with pytest.raises(ConfigError, match="no LLM configured"):
        build(topic_vault, llm_labels="on")


def test_trends_follow_the_note_dates(tmp_path: Path) -> None:
    root = tmp_path / "dated"
    # cooking all through the year, astronomy only lately, finance only long ago
    write_topic_vault(root, ["cooking"], 20, start=dt.date(2026, 1, 5))
    write_topic_vault(root, ["astronomy"], 8, start=dt.date(2026, 4, 13), seed=1)
    write_topic_vault(root, ["finance"], 8, start=dt.date(2025, 6, 2), seed=2)
    write_topic_vault(root, ["gardening"], 6, dated=False, seed=3)
    write_topic_vault(root, ["数据库"], 5, start=dt.date(2026, 5, 18), seed=4)
    interest = build(root)
    by_topic = {c.members[0].path.split("/")[0]: c for c in interest.clusters}
    assert by_topic["astronomy"].trend == "heating"
    assert by_topic["finance"].trend == "cooling"
    assert by_topic["数据库"].trend == "new"
    assert by_topic["gardening"].trend == "steady" and by_topic["gardening"].longrun_share == 0
    # Every series runs from the first note's week to the latest (数据库 runs into W25).
    assert {(c.weekly[0][0], c.weekly[-1][0]) for c in interest.clusters} == {
        ("2025-W23", "2026-W25")
    }
    assert sum(n for c in interest.clusters for _w, n in c.weekly) == 20 + 8 + 8 + 5
    assert any("6 note(s) without a date" in m for m in interest.messages)


def test_overrides_are_checked(topic_vault: Path) -> None:
    with pytest.raises(ConfigError, match="min_size"):
        build(topic_vault, min_size=0)
    with pytest.raises(ConfigError, match="unknown interest setting 'clusters'"):
        build(topic_vault, clusters=3)


def test_the_embedder_is_never_called_to_build(topic_vault: Path) -> None:
    embed_vault(topic_vault)
    with lore.open(topic_vault) as vault:
        embedder = WordEmbedder()
        vault.capabilities.use(embedder=embedder)
        vault.build_clusters(today=TODAY)
    assert embedder.calls == 0


def test_trends_of_an_old_vault_end_at_its_newest_note_not_today(tmp_path: Path) -> None:
    """A vault written 2015-2016, built in 2026: the weekly series covers its own dates,
    not ten years of empty weeks up to today."""
    root = tmp_path / "old"
    write_topic_vault(root, ["cooking"], 30, start=dt.date(2015, 3, 2))
    write_topic_vault(root, ["astronomy"], 30, start=dt.date(2015, 9, 7), seed=1)
    interest = build(root)
    assert {c.weekly[-1][0] for c in interest.clusters} == {"2016-W13"}  # 2016-03-28
    assert {c.weekly[0][0] for c in interest.clusters} == {"2015-W10"}
    assert sum(n for c in interest.clusters for _w, n in c.weekly) == 60


def test_a_tag_a_few_members_mention_in_passing_does_not_name_a_cluster() -> None:
    """3 notes of a 40-note cluster write `#include` in a sentence (an inline tag by
    Obsidian's rules): that tag does not name the cluster, one most of its notes carry does."""
    from lore.interest.labels import heuristic_labels

    members = list(range(40))
    passing = {nid: {"include": ("include", 1.0)} for nid in members[:3]}
    labels = heuristic_labels([members], {0: "Part 1: why"}, passing, [1])
    assert labels[0].source == "titles"  # keywords are computed for it next
    named = {**passing, **{nid: {"kernel": ("kernel", 0.5)} for nid in members[10:]}}
    labels = heuristic_labels([members], {0: "Part 1: why"}, named, [1])
    assert (labels[0].label, labels[0].source) == ("kernel", "tags")
    small = heuristic_labels([members[:8]], {0: "Part 1: why"}, passing, [1])
    assert small[0].label == "include"  # 3 of 8 notes: a tag of the cluster


def test_a_tagless_vault_is_labelled_by_its_notes_keywords(tmp_path: Path) -> None:
    """No tags, no keyword tags (mode 4): the labels still say what the notes are about,
    from their distinctive words, not one member's title."""
    root = tmp_path / "tagless"
    write_topic_vault(root, EN, 12)
    for note in root.rglob("*.md"):
        text = note.read_text(encoding="utf-8")
        note.write_text(
            "\n".join(line for line in text.split("\n") if not line.startswith("tags:"))
        )
    interest = build(root)
    assert interest.clusters
    for cluster in interest.clusters:
        topic = Counter(m.path.split("/")[0] for m in cluster.members).most_common(1)[0][0]
        words = set(TOPICS[topic][1])
        assert cluster.label_source == "tags", cluster.label
        assert {w.strip() for w in cluster.label.split("·")} & words, (topic, cluster.label)
        assert cluster.label not in {m.title for m in cluster.members}
