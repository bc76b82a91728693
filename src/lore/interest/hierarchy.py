"""Agglomerative clustering (average or complete linkage, cosine distance) in numpy, cut at
a distance threshold.

The tree is built with the nearest-neighbour-chain algorithm (exact for these two
linkages, O(m²) time and one m × m float64 matrix for m atoms). Up to EXACT_MAX notes every
note is an atom. Above that, so memory stays bounded (10,000 notes would need 800 MB),
the notes are first grouped into MICRO k-means micro-clusters and the tree is built over
those: average linkage between micro-clusters is still exact (for unit vectors the mean
pairwise cosine distance of two groups is 1 − mean(A)·mean(B)), complete linkage uses the
exact largest pairwise distance between the groups; only the split inside a
micro-cluster comes from k-means instead of the tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Labels = npt.NDArray[np.int64]

EXACT_MAX = 3000
MICRO = 600


def _atom_distances(x: Matrix, atoms: Labels, m: int, linkage: str) -> npt.NDArray[np.float64]:
    """Cosine distances between the atoms (groups of unit rows of x) under `linkage`."""
    import numpy as np

    if m == len(x):  # one note per atom
        order = np.argsort(atoms, kind="stable")
        unit = x[order].astype(np.float64)
        dist = 1.0 - unit @ unit.T
    elif linkage == "average":
        from .kmeans import group_sums

        sums = group_sums(x, atoms, m)
        counts = np.bincount(atoms, minlength=m).astype(np.float64)
        means = sums / counts[:, None]
        dist = 1.0 - means @ means.T
    else:  # complete: the largest pairwise distance = 1 - the smallest dot product
        order = np.argsort(atoms, kind="stable")
        grouped = x[order]
        bounds = np.searchsorted(atoms[order], np.arange(m))
        dist = np.zeros((m, m), dtype=np.float64)
        for a in range(m):
            lo = bounds[a]
            hi = bounds[a + 1] if a + 1 < m else len(grouped)
            dots = grouped[lo:hi] @ grouped.T  # (|a|, n)
            smallest = np.minimum.reduceat(dots.min(axis=0), bounds)
            dist[a] = 1.0 - smallest.astype(np.float64)
        dist = np.maximum(dist, dist.T)
    np.clip(dist, 0.0, 2.0, out=dist)
    return dist


def _nn_chain(
    dist: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], linkage: str
) -> list[tuple[int, int, float]]:
    """Every merge (kept index, absorbed index, height) of the full tree."""
    import numpy as np

    m = len(dist)
    np.fill_diagonal(dist, np.inf)
    active = np.ones(m, dtype=bool)
    merges: list[tuple[int, int, float]] = []
    chain: list[int] = []
    remaining = m
    while remaining > 1:
        if not chain:
            chain.append(int(np.argmax(active)))  # the first active atom
        a = chain[-1]
        row = dist[a]
        b = int(np.argmin(row))
        if len(chain) > 1 and row[chain[-2]] <= row[b]:
            b = chain[-2]  # ties go back down the chain: no cycles
        if len(chain) > 1 and b == chain[-2]:
            chain.pop()
            chain.pop()
            keep, gone = min(a, b), max(a, b)
            height = float(row[b])
            if linkage == "average":
                merged = (weights[a] * dist[a] + weights[b] * dist[b]) / (weights[a] + weights[b])
            else:
                merged = np.maximum(dist[a], dist[b])
            weights[keep] += weights[gone]
            dist[keep] = merged
            dist[:, keep] = merged
            dist[gone] = np.inf
            dist[:, gone] = np.inf
            dist[keep, keep] = np.inf
            active[gone] = False
            remaining -= 1
            merges.append((keep, gone, height))
        else:
            chain.append(b)
    return merges


def _cut(m: int, merges: list[tuple[int, int, float]], threshold: float) -> Labels:
    """Atom → cluster after applying every merge no higher than `threshold`."""
    import numpy as np

    parent = list(range(m))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for keep, gone, height in merges:
        if height <= threshold:
            a, b = root(keep), root(gone)
            parent[max(a, b)] = min(a, b)
    return np.array([root(i) for i in range(m)], dtype=np.int64)


def large_by_height(
    merges: list[tuple[int, int, float]], weights: npt.NDArray[np.float64], min_size: int
) -> list[tuple[float, int]]:
    """(height, clusters of at least `min_size` notes when the tree is cut there), for the
    bare atoms (height -1) and after each distinct merge height, lowest first."""
    size = [float(w) for w in weights]
    parent = list(range(len(weights)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    large = sum(1 for w in size if w >= min_size)
    out = [(-1.0, large)]
    ordered = sorted(merges, key=lambda t: t[2])
    for index, (keep, gone, height) in enumerate(ordered):
        a, b = root(keep), root(gone)
        merged = size[a] + size[b]
        large += int(merged >= min_size) - int(size[a] >= min_size) - int(size[b] >= min_size)
        parent[b] = a
        size[a] = merged
        if index + 1 == len(ordered) or ordered[index + 1][2] != height:
            out.append((height, large))
    return out


def choose_height(levels: list[tuple[float, int]], threshold: float) -> float:
    """Where to cut: at `threshold`, unless that leaves fewer than two clusters of
    `min_size`+ notes while another height leaves more; then at the lowest height that
    leaves the most. (Too many clusters are merged afterwards, by centroid, down to
    `max_clusters`: on SQuADShifts that beat cutting the average-linkage tree higher.)"""
    at = next(c for h, c in reversed(levels) if h <= threshold)  # levels[0] is at -1
    if at >= 2:
        return threshold
    best_count, best_height = at, threshold
    for height, count in levels:
        if count > best_count:
            best_count, best_height = count, max(height, 0.0)
    return best_height


def agglomerate(
    x: Matrix,
    *,
    linkage: str,
    threshold: float,
    seed: int,
    min_size: int = 1,
    micro: int = MICRO,
) -> tuple[Labels, dict[str, float]]:
    """(cluster label per row, facts about the run) for unit rows `x`.

    The tree is cut at `threshold` unless that leaves fewer than two clusters of
    `min_size`+ notes; then at the lowest height leaving the most, if that is more: a
    threshold tuned for one embedding model means little for another, or for TF-IDF rows.
    The facts say where it was cut."""
    import numpy as np

    n = len(x)
    if n == 0:
        return np.zeros(0, dtype=np.int64), {"atoms": 0}
    if n <= EXACT_MAX:
        atoms = np.arange(n, dtype=np.int64)
        m = n
    else:
        from .kmeans import kmeans

        atoms = kmeans(x, min(micro, n), n_init=1, seed=seed, max_iter=30)
        m = int(atoms.max()) + 1
    weights = np.bincount(atoms, minlength=m).astype(np.float64)
    dist = _atom_distances(x, atoms, m, linkage)
    merges = _nn_chain(dist, weights.copy(), linkage)
    height = choose_height(large_by_height(merges, weights, min_size), threshold)
    facts: dict[str, float] = {"atoms": m, "cut_height": round(height, 6)}
    return _cut(m, merges, height)[atoms], facts
