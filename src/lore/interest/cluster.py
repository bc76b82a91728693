"""Clustering the interest rows (seed 000's pipeline), in numpy:

1. optional PCA (clustering only), dimension by explained variance;
2. k-means++ (lore.interest.kmeans: restarts from one fixed random state, warm start) or
   hierarchical (average/complete linkage, cosine distance threshold: lore.interest.hierarchy);
3. clusters under `min_size` notes: first (k-means++ only; the tree already joined
   near neighbours), a small cluster whose nearest cluster is small too is merged with it
   (smallest first), so fragments of one topic come back together; then each note of a
   cluster still too small moves to the nearest large cluster, by cosine to its centroid
   in the original space;
4. k-means++ only, when enabled: clusters whose centroids are within `merge_distance`
   (cosine, original space), and within `merge_alpha` × the median distance between the
   k-means centroids, are merged, closest pair first. This runs before step 3 as
   well as after it, so a topic k-means cut into fragments under `min_size` is put back
   together instead of being scattered over its neighbours;
5. while there are more than `max_clusters`, the two closest clusters are merged.

Labels come out canonical: 0 is the largest cluster, ties by the first note (in path
order). Every tie anywhere is broken by index, so the same rows and settings always give
the same clusters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .hierarchy import agglomerate
from .kmeans import compact, group_sums, kmeans
from .pca import fit, map_positions

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .settings import InterestSettings

    Matrix = npt.NDArray[np.float32]
    Labels = npt.NDArray[np.int64]


@dataclass
class Clustering:
    labels: Labels  # canonical cluster index per row
    positions: Matrix  # (n, 2) map positions
    info: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


def canonical(labels: Labels) -> Labels:
    """Labels renumbered by size (largest 0), ties by first row."""
    import numpy as np

    labels = compact(labels)
    sizes = np.bincount(labels)
    first = np.array([int(np.argmax(labels == k)) for k in range(len(sizes))])
    order = sorted(range(len(sizes)), key=lambda k: (-int(sizes[k]), int(first[k])))
    rank = np.empty(len(sizes), dtype=np.int64)
    rank[order] = np.arange(len(sizes))
    out: Labels = rank[labels]
    return out


def centroids(x: Matrix, labels: Labels) -> Matrix:
    """Unit-length mean row of each cluster (labels 0..k-1)."""
    import numpy as np

    from .vectors import l2

    k = int(labels.max()) + 1 if len(labels) else 0
    return l2(group_sums(x, labels, k).astype(np.float32))


# -- k-means++ ----------------------------------------------------------------------------


# -- post-processing (original space) -----------------------------------------------------


def combine_fragments(x: Matrix, labels: Labels, min_size: int) -> Labels:
    """Small clusters (under `min_size`) whose nearest cluster (cosine between centroids,
    original space) is small too are merged with it, smallest first, so a topic cut into
    fragments comes back together; small clusters whose nearest is large stay as they
    are (reassign_small dissolves them)."""
    import numpy as np

    k = int(labels.max()) + 1 if len(labels) else 0
    sizes = np.bincount(labels, minlength=k).astype(np.int64)
    if k < 2 or sizes.min() >= min_size:
        return labels
    sums = group_sums(x, labels, k)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    cents = sums / np.where(norms == 0, 1.0, norms)
    alive = np.ones(k, dtype=bool)
    settled = np.zeros(k, dtype=bool)  # small, but nearest to a large cluster
    mapping = np.arange(k)
    while True:
        open_small = np.flatnonzero(alive & ~settled & (sizes < min_size))
        if not len(open_small):
            break
        s = int(open_small[np.argmin(sizes[open_small])])
        sims = cents @ cents[s]
        sims[~alive] = -np.inf
        sims[s] = -np.inf
        t = int(np.argmax(sims))
        if not np.isfinite(sims[t]):
            break  # the last cluster standing
        if sizes[t] >= min_size:
            settled[s] = True
            continue
        keep, gone = min(s, t), max(s, t)
        sums[keep] += sums[gone]
        sizes[keep] += sizes[gone]
        cents[keep] = sums[keep] / (np.linalg.norm(sums[keep]) or 1.0)
        alive[gone] = False
        settled[keep] = False
        mapping[mapping == gone] = keep
    return compact(mapping[labels])


def reassign_small(x: Matrix, labels: Labels, min_size: int) -> Labels:
    """Notes of clusters under `min_size` move to the nearest large cluster's centroid;
    with no large cluster at all, every note ends in one cluster."""
    import numpy as np

    sizes = np.bincount(labels)
    large = np.flatnonzero(sizes >= min_size)
    if len(large) == 0:
        return np.zeros(len(labels), dtype=np.int64)
    if len(large) == len(sizes):
        return labels
    cents = centroids(x, labels)[large]
    out = labels.copy()
    small = ~np.isin(labels, large)
    out[small] = large[np.argmax(x[small] @ cents.T, axis=1)]
    return compact(out)


def merge_nearest(
    x: Matrix, labels: Labels, *, within: float | None = None, limit: int | None = None
) -> Labels:
    """Merge the two clusters with the closest centroids (cosine, original space), again and
    again: while they are within `within`, or while there are more than `limit` clusters.
    Ties go to the lower cluster indices."""
    import numpy as np

    k = int(labels.max()) + 1 if len(labels) else 0
    if k < 2:
        return labels
    sums = group_sums(x, labels, k)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    cents = sums / np.where(norms == 0, 1.0, norms)
    sims = cents @ cents.T
    np.fill_diagonal(sims, -np.inf)
    alive = np.ones(k, dtype=bool)
    mapping = np.arange(k)
    count = k
    while count > 1:
        a, b = divmod(int(np.argmax(sims)), k)
        a, b = min(a, b), max(a, b)
        over = limit is not None and count > limit
        close = within is not None and 1.0 - sims[a, b] <= within
        if not (over or close):
            break
        sums[a] += sums[b]
        cents[a] = sums[a] / (np.linalg.norm(sums[a]) or 1.0)
        alive[b] = False
        mapping[mapping == b] = a
        row = cents @ cents[a]
        row[~alive] = -np.inf
        row[a] = -np.inf
        sims[a], sims[:, a] = row, row
        sims[b], sims[:, b] = -np.inf, -np.inf
        count -= 1
    return compact(mapping[labels])


def merge_threshold(x: Matrix, labels: Labels, distance: float, alpha: float) -> float:
    """The merge distance: `distance`, capped at `alpha` × the median distance between the
    clusters' centroids (alpha 0: no cap). The cap keeps one absolute threshold from
    meaning "everything" for a model whose vectors all sit close together (e5: median
    centroid distance ~0.07, where bge-m3's is larger)."""
    import numpy as np

    k = int(labels.max()) + 1 if len(labels) else 0
    if alpha <= 0 or k < 2:
        return distance
    cents = centroids(x, labels).astype(np.float64)
    dist = 1.0 - cents @ cents.T
    median = float(np.median(dist[np.triu_indices(k, 1)]))
    return min(distance, alpha * median)


def merge_close(x: Matrix, labels: Labels, distance: float) -> Labels:
    return merge_nearest(x, labels, within=distance)


def cap(x: Matrix, labels: Labels, max_clusters: int) -> Labels:
    return merge_nearest(x, labels, limit=max_clusters)


# -- the pipeline -------------------------------------------------------------------------


def cluster_rows(
    x: Matrix,
    settings: InterestSettings,
    *,
    previous: Labels | None = None,
    unchanged: bool = False,
) -> Clustering:
    """Cluster unit rows `x` (n >= 1) following `settings`.

    `previous` (k-means++ only): the previous map's cluster of each row (-1: a new note),
    a warm start that keeps near-equal partitions from flipping between rebuilds (see
    `kmeans`). `unchanged`: the rows and settings are those of the previous map, whose
    clusters are kept as they are (a rebuild changes nothing)."""
    import numpy as np

    from .vectors import l2

    n, d = x.shape
    info: dict[str, Any] = {"dims": d}
    messages: list[str] = []
    space = x
    if not settings.use_pca:
        positions = map_positions(x)  # two axes only: no full eigen-decomposition
    else:
        basis = fit(x)
        positions = map_positions(x, basis)
        dims = basis.dims_for(settings.pca_explained_variance_threshold)
        if 0 < dims < d:
            space = basis.project(x, dims)
            info["pca_dims"] = dims
            info["pca_explained"] = round(basis.explained(dims), 4)
    if n < settings.min_size:
        messages.append(
            f"{n} note(s), fewer than the minimum cluster size {settings.min_size}: one cluster"
        )
        return Clustering(np.zeros(n, dtype=np.int64), positions, info, messages)
    if settings.cluster_algo == "hierarchical":
        threshold = settings.hierarchical_distance_threshold
        labels, facts = agglomerate(
            l2(space),
            linkage=settings.hierarchical_linkage,
            threshold=threshold,
            seed=settings.kmeans_random_state,
            min_size=settings.min_size,
        )
        info.update(facts)
        if facts["atoms"] < n:
            messages.append(
                f"hierarchical clustering over {int(facts['atoms'])} k-means micro-clusters"
                f" of the {n} notes"
            )
        if facts["cut_height"] != round(threshold, 6):
            messages.append(
                f"hierarchical: the cut at distance {threshold} left fewer than 2 clusters"
                f" of {settings.min_size}+ notes; cut at {facts['cut_height']:.3f} instead"
            )
    else:
        k = min(settings.max_clusters, max(1, n // settings.min_size))
        if unchanged and previous is not None and bool((previous >= 0).all()):
            info["k"] = k
            return Clustering(canonical(previous), positions, info, messages)
        labels = kmeans(
            space,
            k,
            n_init=settings.kmeans_n_init,
            seed=settings.kmeans_random_state,
            max_iter=settings.kmeans_max_iter,
            previous=previous,
            tolerance=settings.stability_tolerance,
        )
        info["k"] = k
    info["clusters_found"] = int(labels.max()) + 1
    merging = settings.cluster_algo == "kmeans++" and settings.enable_post_merge
    if merging:  # fragments of one topic first find each other, instead of being scattered
        within = merge_threshold(x, labels, settings.merge_distance, settings.merge_alpha)
        info["merge_distance_used"] = round(within, 6)
        labels = merge_close(x, labels, within)
    if settings.cluster_algo == "kmeans++":  # the tree already joined near neighbours
        labels = combine_fragments(x, labels, settings.min_size)
    labels = reassign_small(x, labels, settings.min_size)
    if merging:
        labels = merge_close(x, labels, within)
    labels = cap(x, labels, settings.max_clusters)
    return Clustering(canonical(labels), positions, info, messages)
