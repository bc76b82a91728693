"""k-means++ in numpy for the interest map: n_init restarts from one fixed random state,
the lowest inertia kept; on a rebuild over a stored map, one more run warm-started from the
stored clusters, and among the runs within `stability_tolerance` of the lowest inertia the
one that agrees most with the stored map wins, so cluster ids survive a few new notes
(lore.interest.cluster runs the rest of the pipeline)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Labels = npt.NDArray[np.int64]


def compact(labels: Labels) -> Labels:
    """Labels renumbered 0..k-1 in order of first appearance."""
    import numpy as np

    _values, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    out: Labels = rank[inverse].astype(np.int64)
    return out


def group_sums(x: Any, labels: Labels, k: int) -> Any:
    """(k, d) float64 sums of the rows of each label (zeros for a label with no row)."""
    import numpy as np

    sums = np.zeros((k, x.shape[1]), dtype=np.float64)
    if not len(labels):
        return sums
    # Sorted rows and one slice sum per label: no BLAS call, whose threads slow to a crawl
    # on a busy machine for this (k, n) @ (n, d) shape.
    order = np.argsort(labels, kind="stable")
    rows = x[order]
    bounds = np.searchsorted(labels[order], np.arange(k + 1))
    for label in range(k):
        lo, hi = bounds[label], bounds[label + 1]
        if hi > lo:
            sums[label] = rows[lo:hi].sum(axis=0, dtype=np.float64)
    return sums


def _sq_dist(x: Any, sq: Any, centers: Any) -> Any:
    import numpy as np

    d = sq[:, None] - 2.0 * (x @ centers.T) + np.einsum("ij,ij->i", centers, centers)[None, :]
    return np.maximum(d, 0.0)


def _seed_centers(x: Any, sq: Any, k: int, rng: Any, start: Any = None) -> Any:
    """Greedy k-means++ seeding (as scikit-learn): each next center is the best of
    2 + log(k) candidates drawn with probability ∝ squared distance to the nearest chosen
    one; stops early when every row sits on a center (fewer distinct rows than k). With
    `start` (centers already chosen), the seeding continues from those."""
    import math

    import numpy as np

    n = len(x)
    trials = 2 + int(math.log(max(k, 1)))
    if start is not None and len(start):
        closest = _sq_dist(x, sq, start).min(axis=1)
        chosen: list[int] = []
        count = len(start)
    else:
        start = None
        chosen = [int(rng.integers(n))]
        closest = _sq_dist(x, sq, x[chosen])[:, 0]
        count = 1
    while count < k:
        total = float(closest.sum())
        if total <= 1e-12:
            break
        draws = rng.random(trials) * total
        picks = np.minimum(np.searchsorted(np.cumsum(closest), draws, side="right"), n - 1)
        candidates = np.minimum(closest[:, None], _sq_dist(x, sq, x[picks]))  # (n, trials)
        best = int(np.argmin(candidates.sum(axis=0)))
        chosen.append(int(picks[best]))
        count += 1
        closest = candidates[:, best]
    picked = x[chosen].astype(np.float32)
    return picked if start is None else np.concatenate([start, picked.reshape(-1, x.shape[1])])


TOL = 1e-4  # k-means stops when the centers moved less than this x the mean variance


def _lloyd(xs: Any, sq: Any, centers: Any, max_iter: int, tol: float) -> tuple[float, Any]:
    """(inertia, labels) of Lloyd's iterations from `centers`."""
    import numpy as np

    n = len(xs)
    labels = np.full(n, -1, dtype=np.int64)
    for _step in range(max_iter):
        new = np.argmin(_sq_dist(xs, sq, centers), axis=1).astype(np.int64)
        if np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=len(centers))
        sums = group_sums(xs, labels, len(centers))
        empty = counts == 0
        means = (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)
        moved = np.where(empty[:, None], centers, means)
        shift = float(((moved - centers) ** 2).sum(dtype=np.float64))
        centers = moved
        if shift <= tol:
            break
    dist = _sq_dist(xs, sq, centers)
    labels = np.argmin(dist, axis=1).astype(np.int64)
    return float(dist[np.arange(n), labels].sum()), labels


def agreement(labels: Labels, previous: Labels) -> int:
    """Rows (those with previous >= 0) in clusters matched one to one with a previous
    cluster, greedily by shared rows (ties by the lower indices): how many notes would keep
    their cluster."""
    import numpy as np

    shared = previous >= 0
    a, b = labels[shared], previous[shared]
    if not len(a):
        return 0
    kb = int(b.max()) + 1
    counts = np.bincount(a * kb + b)
    cells = np.flatnonzero(counts)
    order = sorted(cells.tolist(), key=lambda c: (-int(counts[c]), c))
    used_a: set[int] = set()
    used_b: set[int] = set()
    total = 0
    for cell in order:
        i, j = divmod(cell, kb)
        if i not in used_a and j not in used_b:
            used_a.add(i)
            used_b.add(j)
            total += int(counts[cell])
    return total


def _warm_centers(xs: Any, sq: Any, previous: Labels, k: int, seed: int) -> Any:
    """The previous clusters' means over the current rows (the k largest), completed to k
    centers by k-means++ seeding from them."""
    import numpy as np

    present = previous >= 0
    kp = int(previous.max()) + 1
    sizes = np.bincount(previous[present], minlength=kp)
    keep = sorted(np.flatnonzero(sizes).tolist(), key=lambda c: (-int(sizes[c]), c))[:k]
    sums = group_sums(xs[present], previous[present], kp)
    centers = (sums[keep] / sizes[keep][:, None]).astype(np.float32)
    return _seed_centers(xs, sq, k, np.random.default_rng(seed), start=centers)


def kmeans(
    x: Matrix,
    k: int,
    *,
    n_init: int,
    seed: int,
    max_iter: int,
    previous: Labels | None = None,
    tolerance: float = 0.0,
) -> Labels:
    """Labels (0..k'-1, k' <= k, no empty cluster) of the best of `n_init` k-means++ runs.

    With `previous` (the previous map's cluster per row, -1 for a new note), one more run
    starts from the previous clusters' means, and of the runs whose inertia is within
    `tolerance` (relative) of the lowest, the one agreeing most with `previous` wins (ties:
    lower inertia, then the earlier run). Without it: the lowest inertia, as ever."""
    import numpy as np

    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    rng = np.random.default_rng(seed)
    sq = np.einsum("ij,ij->i", x, x, dtype=np.float64)
    xs = np.ascontiguousarray(x, dtype=np.float32)  # distances in float32: half the traffic
    mean = xs.mean(axis=0, dtype=np.float64)
    variance = max(float(sq.sum()) / n - float(mean @ mean), 0.0) / max(xs.shape[1], 1)
    tol = TOL * variance  # as scikit-learn: relative to the mean variance of a dimension
    runs: list[tuple[float, Any]] = []
    best: tuple[float, Any] | None = None
    for _run in range(n_init):
        inertia, labels = _lloyd(xs, sq, _seed_centers(xs, sq, min(k, n), rng), max_iter, tol)
        runs.append((inertia, labels))
        if best is None or inertia < best[0] - 1e-9 * max(1.0, abs(best[0])):
            best = (inertia, labels)
    assert best is not None
    if previous is None or not (previous >= 0).any():
        return compact(best[1])
    warm = _warm_centers(xs, sq, previous, min(k, n), seed)
    runs.append(_lloyd(xs, sq, warm, max_iter, tol))
    lowest = min(inertia for inertia, _labels in runs)
    near = [
        (-agreement(labels, previous), inertia, order)
        for order, (inertia, labels) in enumerate(runs)
        if inertia <= lowest * (1.0 + tolerance) + 1e-9 * max(1.0, abs(lowest))
    ]
    return compact(runs[min(near)[2]][1])
