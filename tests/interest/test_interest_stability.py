"""Cluster ids across rebuilds with the default settings on a vault with more topics than
`max_clusters` (16): which topics share a cluster is then a near tie, and the previous map
is what breaks it (lore.interest.kmeans.kmeans)."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from pathlib import Path

import numpy as np
from interest_support import cluster_of, no_interest_env  # noqa: F401 - a fixture

import lore
from lore.interest.kmeans import kmeans
from lore.interest.model import InterestMap

TODAY = dt.date(2026, 6, 1)
TOPICS = 24  # more than the default max_clusters


def write_notes(root: Path, per_topic: int, *, seed: int, prefix: str = "") -> None:
    """`t<NN>/<prefix>nNNN.md`: words drawn from the topic's own 12 and a shared pool."""
    rng = random.Random(seed)
    shared = [f"common{i}" for i in range(30)]
    for topic in range(TOPICS):
        own = [f"topic{topic}word{i}" for i in range(12)]
        for i in range(per_topic):
            words = [rng.choice(own) for _ in range(10)] + [rng.choice(shared) for _ in range(6)]
            path = root / f"t{topic:02d}" / f"{prefix}n{i:03d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# note {i}\n\n{' '.join(words)}.\n", encoding="utf-8")


def build(root: Path) -> InterestMap:
    with lore.open(root) as vault:
        vault.sync()
        return vault.build_clusters(today=TODAY)


def shown(interest: InterestMap) -> str:
    return json.dumps(
        [[c.to_dict() for c in interest.clusters], interest.params], ensure_ascii=False
    )


def test_most_notes_keep_their_id_when_five_percent_more_arrive(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_notes(root, 10, seed=1)
    first = build(root)
    assert len(first.clusters) <= 16 < TOPICS
    before = cluster_of(first)
    write_notes(root, 1, seed=2, prefix="extra-")  # one more per topic: 24
    for extra in sorted(root.glob("t*/extra-n000.md"))[::2]:
        extra.unlink()  # 12 new notes: 5%
    after = build(root)
    assert after.notes == 252
    now = cluster_of(after)
    kept = sum(1 for path, cid in before.items() if now.get(path) == cid)
    assert kept / len(before) >= 0.8


def test_a_rebuild_of_unchanged_notes_is_the_previous_map(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_notes(root, 10, seed=1)
    build(root)
    write_notes(root, 1, seed=2, prefix="extra-")
    warm = build(root)  # started from the first map
    assert shown(build(root)) == shown(warm)
    assert shown(build(root)) == shown(warm)


def test_a_fresh_index_of_the_same_notes_is_the_fresh_map(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write_notes(root, 10, seed=1)
    fresh = build(root)
    write_notes(root, 1, seed=2, prefix="extra-")
    build(root)
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".lore", "extra-*"))
    assert [c.to_dict() for c in build(copy).clusters] == [c.to_dict() for c in fresh.clusters]


def test_kmeans_prefers_the_previous_partition_among_near_equal_ones() -> None:
    # Four equal blobs at the corners of a square, two clusters: splitting left/right and
    # top/bottom cost the same; the previous partition decides, ties or not.
    rng = np.random.default_rng(0)
    corners = np.array([[0, 0], [0, 10], [10, 0], [10, 10]], dtype=np.float32)
    blob = rng.normal(0, 0.5, (25, 2))  # the same in every corner: exact ties
    x = np.concatenate([c + blob for c in corners]).astype(np.float32)
    top = (x[:, 1] > 5).astype(np.int64)
    right = (x[:, 0] > 5).astype(np.int64)
    for previous in (top, right):
        labels = kmeans(x, 2, n_init=5, seed=42, max_iter=100, previous=previous, tolerance=0.01)
        assert len(set(zip(labels.tolist(), previous.tolist(), strict=True))) == 2
    fresh = kmeans(x, 2, n_init=5, seed=42, max_iter=100)
    unknown = np.full(len(x), -1, dtype=np.int64)
    same = kmeans(x, 2, n_init=5, seed=42, max_iter=100, previous=unknown, tolerance=0.01)
    assert np.array_equal(fresh, same)
