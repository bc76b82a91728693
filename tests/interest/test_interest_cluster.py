"""The clustering pieces on their own: k-means++, the linkage tree (checked against a
brute-force one), PCA, stable ids, trends, lexical terms and the settings."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from interest_support import no_interest_env  # noqa: F401 - a fixture

from lore.errors import ConfigError
from lore.interest import hierarchy
from lore.interest.cluster import canonical, cluster_rows
from lore.interest.kmeans import group_sums, kmeans
from lore.interest.pca import fit, top_axes
from lore.interest.settings import InterestSettings, load_interest_settings
from lore.interest.stable import assign_ids
from lore.interest.trends import trends, week_label
from lore.interest.vectors import l2, lexical_terms


def blobs(sizes: list[int], dim: int = 6, spread: float = 0.05, seed: int = 0) -> np.ndarray:
    """Unit rows around len(sizes) orthogonal directions."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, size in enumerate(sizes):
        center = np.zeros(dim)
        center[k % dim] = 1.0
        rows.append(center + spread * rng.standard_normal((size, dim)))
    return l2(np.vstack(rows).astype(np.float32))


def truth(sizes: list[int]) -> list[int]:
    return [k for k, size in enumerate(sizes) for _ in range(size)]


def same_partition(a: list[int], b: list[int]) -> bool:
    pairs = set(zip(a, b, strict=True))
    return len(pairs) == len(set(a)) == len(set(b))


# -- k-means++ and the pipeline -----------------------------------------------------------


def test_kmeans_finds_separated_blobs() -> None:
    sizes = [12, 9, 7]
    labels = kmeans(blobs(sizes), 3, n_init=4, seed=42, max_iter=100)
    assert same_partition(labels.tolist(), truth(sizes))


def test_kmeans_on_identical_rows_stops_at_one_center() -> None:
    x = l2(np.ones((10, 4), dtype=np.float32))
    assert kmeans(x, 5, n_init=3, seed=1, max_iter=50).tolist() == [0] * 10


@pytest.mark.parametrize("algo", ["kmeans++", "hierarchical"])
def test_pipeline_recovers_topics_and_is_deterministic(algo: str) -> None:
    sizes = [15, 12, 10, 8]
    x = blobs(sizes, dim=8)
    settings = InterestSettings(cluster_algo=algo)
    first = cluster_rows(x, settings)
    assert same_partition(first.labels.tolist(), truth(sizes))
    again = cluster_rows(x.copy(), settings)
    assert np.array_equal(first.labels, again.labels)
    assert np.array_equal(first.positions, again.positions)
    assert first.positions.shape == (len(x), 2) and np.all(np.isfinite(first.positions))


def test_small_clusters_are_reassigned_to_the_nearest_large_one() -> None:
    x = blobs([10, 10, 2], dim=6)
    result = cluster_rows(x, InterestSettings(min_size=5, enable_post_merge=False))
    sizes = np.bincount(result.labels)
    assert sorted(sizes.tolist()) == [10, 12] or sorted(sizes.tolist()) == [11, 11]
    assert sizes.sum() == 22


def test_close_centroids_merge_and_max_clusters_caps() -> None:
    x = blobs([10, 10, 10, 10], dim=6)
    merged = cluster_rows(x, InterestSettings(merge_distance=2.0, merge_alpha=0.0))
    assert int(merged.labels.max()) == 0  # everything is "close" at distance 2
    capped = cluster_rows(x, InterestSettings(max_clusters=2))
    assert int(capped.labels.max()) + 1 == 2
    relative = cluster_rows(x, InterestSettings(merge_distance=2.0))  # alpha caps it
    assert int(relative.labels.max()) + 1 == 4
    assert relative.info["merge_distance_used"] < 1.0


def test_fewer_rows_than_min_size_make_one_cluster() -> None:
    result = cluster_rows(blobs([3]), InterestSettings(min_size=5))
    assert result.labels.tolist() == [0, 0, 0]
    assert "fewer than the minimum cluster size 5" in result.messages[0]


@st.composite
def problems(draw: st.DrawFn) -> tuple[np.ndarray, InterestSettings]:
    n = draw(st.integers(1, 45))
    dim = draw(st.integers(1, 7))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((draw(st.integers(1, 5)), dim))
    rows = base[rng.integers(0, len(base), n)] + draw(st.sampled_from([0.0, 0.01, 0.5])) * (
        rng.standard_normal((n, dim))
    )
    if draw(st.booleans()):
        rows[: n // 2] = rows[0]  # many identical rows
    settings = InterestSettings(
        cluster_algo=draw(st.sampled_from(["kmeans++", "hierarchical"])),
        use_pca=draw(st.booleans()),
        min_size=draw(st.integers(1, 8)),
        max_clusters=draw(st.integers(1, 6)),
        kmeans_n_init=draw(st.integers(1, 3)),
        hierarchical_linkage=draw(st.sampled_from(["average", "complete"])),
        hierarchical_distance_threshold=draw(st.sampled_from([0.0, 0.2, 0.8])),
        merge_distance=draw(st.sampled_from([0.0, 0.07, 0.5])),
    )
    return l2(rows.astype(np.float32)), settings


@given(problems())
def test_clustering_properties(problem: tuple[np.ndarray, InterestSettings]) -> None:
    x, settings = problem
    result = cluster_rows(x, settings)
    labels = result.labels
    assert labels.shape == (len(x),)  # every note assigned exactly once
    k = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=k)
    assert sizes.sum() == len(x) and np.all(sizes > 0)  # labels 0..k-1, none empty
    assert k <= settings.max_clusters
    if k > 1:
        assert sizes.min() >= settings.min_size
    assert list(sizes) == sorted(sizes, reverse=True)  # canonical: largest first
    assert np.array_equal(cluster_rows(x, settings).labels, labels)


# -- the linkage tree ---------------------------------------------------------------------


def brute_force_heights(x: np.ndarray, linkage: str) -> list[float]:
    """Merge heights of naive agglomerative clustering (cosine distance)."""
    groups = [[i] for i in range(len(x))]
    dist = 1.0 - x.astype(np.float64) @ x.astype(np.float64).T
    heights = []
    while len(groups) > 1:
        best = None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                block = dist[np.ix_(groups[a], groups[b])]
                d = block.mean() if linkage == "average" else block.max()
                if best is None or d < best[0]:
                    best = (d, a, b)
        assert best is not None
        d, a, b = best
        heights.append(float(d))
        groups[a] = groups[a] + groups[b]
        del groups[b]
    return sorted(heights)


@pytest.mark.parametrize("linkage", ["average", "complete"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nn_chain_builds_the_same_tree_as_brute_force(linkage: str, seed: int) -> None:
    x = l2(np.random.default_rng(seed).standard_normal((14, 5)).astype(np.float32))
    dist = hierarchy._atom_distances(x, np.arange(14), 14, linkage)
    merges = hierarchy._nn_chain(dist, np.ones(14), linkage)
    got = sorted(h for _a, _b, h in merges)
    assert np.allclose(got, brute_force_heights(x, linkage), atol=1e-6)


@pytest.mark.parametrize("linkage", ["average", "complete"])
def test_micro_clusters_above_the_exact_limit(
    linkage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = [30, 25, 20]
    x = blobs(sizes, dim=6, spread=0.03)
    monkeypatch.setattr(hierarchy, "EXACT_MAX", 20)
    labels, facts = hierarchy.agglomerate(
        x, linkage=linkage, threshold=0.3, seed=42, min_size=5, micro=12
    )
    assert facts["atoms"] <= 12
    assert same_partition(canonical(labels).tolist(), canonical(np.array(truth(sizes))).tolist())


def test_a_useless_threshold_falls_back_to_the_height_with_most_large_clusters() -> None:
    x = blobs([10, 10, 10], dim=6, spread=0.3)
    labels, facts = hierarchy.agglomerate(x, linkage="average", threshold=0.0, seed=1, min_size=5)
    assert facts["cut_height"] > 0.0
    assert np.sum(np.bincount(labels) >= 5) >= 2


def test_choose_height() -> None:
    levels = [(-1.0, 0), (0.1, 3), (0.3, 5), (0.5, 2), (0.9, 1)]
    assert hierarchy.choose_height(levels, 0.3) == 0.3  # 5 large: fine
    assert hierarchy.choose_height(levels, 0.6) == 0.6  # 2 large: fine
    assert hierarchy.choose_height(levels, 0.0) == 0.3  # none yet: the most
    assert hierarchy.choose_height(levels, 0.95) == 0.3  # one: the most, lowest height


def test_group_sums_match_a_plain_loop() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((200, 5)).astype(np.float32)
    labels = rng.integers(0, 9, 200)
    labels[labels == 4] = 0  # an empty label
    expected = np.zeros((9, 5))
    np.add.at(expected, labels, x.astype(np.float64))
    assert np.allclose(group_sums(x, labels, 9), expected, atol=1e-5)


# -- PCA ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(40, 6), (5, 30)])
def test_pca_matches_svd_and_is_sign_stable(shape: tuple[int, int]) -> None:
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    basis = fit(x)
    centered = x - x.mean(axis=0)
    singular = np.linalg.svd(centered.astype(np.float64), compute_uv=False)
    expected = singular**2 / (shape[0] - 1)
    r = basis.components.shape[1]
    assert np.allclose(basis.variances, expected[:r], rtol=1e-3)
    gram = basis.components.T @ basis.components
    assert np.allclose(gram, np.eye(r), atol=1e-4)
    dims = basis.dims_for(0.95)
    assert basis.explained(dims) >= 0.95 - 1e-6 and (dims == 1 or basis.explained(dims - 1) < 0.95)
    again = fit(x.copy())
    assert np.array_equal(basis.project(x, 2), again.project(x, 2))


@pytest.mark.parametrize("shape", [(60, 12), (8, 40)])
def test_the_two_map_axes_by_subspace_iteration_match_the_full_pca(
    shape: tuple[int, int],
) -> None:
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(shape) * np.linspace(3, 0.1, shape[1])).astype(np.float32)
    full, quick = fit(x), top_axes(x, 2)
    assert np.allclose(quick.variances, full.variances[:2], rtol=1e-4)
    assert np.allclose(quick.project(x, 2), full.project(x, 2), atol=1e-3)
    assert abs(quick.total - full.total) < 1e-6 * full.total


def test_pca_of_identical_rows_has_no_axis() -> None:
    basis = fit(np.ones((6, 3), dtype=np.float32))
    assert basis.components.shape == (3, 0) and basis.dims_for(0.95) == 0


# -- stable ids ---------------------------------------------------------------------------


def test_ids_follow_the_overlap_and_are_never_reused() -> None:
    old = {3: {"a", "b", "c", "d"}, 7: {"e", "f", "g"}, 9: {"z"}}
    new = [{"e", "f", "g", "h"}, {"a", "b", "c"}, {"x", "y"}]
    ids, next_id = assign_ids(new, old, next_id=12)
    assert ids == [7, 3, 12] and next_id == 13
    again, after = assign_ids([{"x", "y"}], {}, next_id=next_id)
    assert again == [13] and after == 14  # 9 and 12 are gone but never handed out again


def test_a_cluster_that_changed_too_much_gets_a_new_id() -> None:
    ids, _ = assign_ids([{"a", "x", "y", "z"}], {1: {"a", "b", "c", "d"}}, next_id=2)
    assert ids == [2]


def test_ties_go_to_the_lower_old_id() -> None:
    ids, _ = assign_ids([{"a", "b"}], {5: {"a", "b"}, 4: {"a", "b"}}, next_id=6)
    assert ids == [4]


# -- trends -------------------------------------------------------------------------------


def test_iso_weeks_across_the_year_end() -> None:
    assert week_label(dt.date(2026, 12, 28)) == "2026-W53"
    assert week_label(dt.date(2021, 1, 4)) == "2021-W01"


def test_heating_cooling_new_and_steady() -> None:
    today = dt.date(2026, 11, 30)
    old = [(today - dt.timedelta(weeks=w)).isoformat() for w in range(10, 30)]
    recent = [(today - dt.timedelta(days=d)).isoformat() for d in range(0, 20, 2)]
    clusters = [
        old[:4] + recent[:8],  # mostly recent: heating
        old[10:],  # nothing recent: cooling
        recent[8:],  # only recent, while the vault has older notes: new
        [None, None],  # no dated note: steady
    ]
    series, messages = trends(clusters, today=today, recent_weeks=4, ratio=1.5)
    assert [s.trend for s in series] == ["heating", "cooling", "new", "steady"]
    assert "2 note(s) without a date" in messages[0]
    assert series[0].weekly[-1][0] == "2026-W49" and len(series[0].weekly) == len(series[1].weekly)
    assert sum(n for _w, n in series[0].weekly) == 12
    assert abs(sum(s.recent_share for s in series) - 1.0) < 1e-9


def test_no_recent_notes_means_steady_everywhere() -> None:
    series, messages = trends(
        [["2020-01-06"], ["2020-02-03"]], today=dt.date(2026, 1, 1), recent_weeks=4, ratio=1.5
    )
    assert {s.trend for s in series} == {"steady"} and "no dated note" in messages[-1]


# -- lexical terms and settings -----------------------------------------------------------


def test_lexical_terms_turn_cjk_runs_into_bigrams() -> None:
    assert lexical_terms("客户去重规则 v2") == ["客户", "户去", "去重", "重规", "规则", "v2"]
    assert lexical_terms("猫 and dogs, a 1") == ["猫", "and", "dog"]


def test_settings_defaults_are_seed_000s() -> None:
    s = InterestSettings()
    assert (s.cluster_algo, s.tag_weight, s.use_pca, s.pca_explained_variance_threshold) == (
        "kmeans++",
        0.75,
        True,
        0.95,
    )
    assert (s.min_size, s.max_clusters, s.kmeans_random_state, s.kmeans_n_init) == (5, 16, 42, 10)
    assert (s.kmeans_max_iter, s.enable_post_merge, s.merge_distance) == (300, True, 0.07)
    assert (s.hierarchical_linkage, s.hierarchical_distance_threshold) == ("average", 0.20)


def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".lore").mkdir()
    (tmp_path / ".lore" / "config.toml").write_text(
        '[interest]\nmin_size = 3\nmax_clusters = 9\ncluster_algo = "hierarchical"\n'
    )
    monkeypatch.setenv("LORE_INTEREST_MAX_CLUSTERS", "7")
    monkeypatch.setenv("LORE_INTEREST_USE_PCA", "false")
    s = load_interest_settings(tmp_path, max_clusters=None, merge_distance=0.1)
    assert (s.min_size, s.max_clusters, s.cluster_algo, s.use_pca) == (3, 7, "hierarchical", False)
    assert s.merge_distance == 0.1
    assert load_interest_settings(tmp_path, max_clusters=2).max_clusters == 2


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("min_size", "0"),
        ("max_clusters", "many"),
        ("tag_weight", "1.5"),
        ("cluster_algo", "dbscan"),
        ("use_pca", "maybe"),
        ("pca_explained_variance_threshold", "0"),
    ],
)
def test_bad_env_values_name_the_variable(
    name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    variable = f"LORE_INTEREST_{name.upper()}"
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_interest_settings(tmp_path)
    message = str(caught.value)
    assert variable in message and "\n" not in message


def test_an_unknown_config_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".lore").mkdir()
    (tmp_path / ".lore" / "config.toml").write_text("[interest]\nclusters = 3\n")
    with pytest.raises(ConfigError, match="unknown interest setting 'clusters'"):
        load_interest_settings(tmp_path)
