"""PCA for the interest map, in numpy: the clustering space (dimension chosen by explained
variance) and the 2-D positions of the map chart.

The eigen-decomposition runs on the smaller of the covariance (d × d) and the Gram (n × n)
matrix. Component signs are fixed (largest entry positive) so the same input always gives
the same coordinates, not a mirror image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Basis:
    mean: Matrix  # (1, d)
    components: Matrix  # (d, r), orthonormal columns, by decreasing variance
    variances: Vector  # (r,) eigenvalues, decreasing
    total: float  # total variance (sum over every dimension)

    def dims_for(self, threshold: float) -> int:
        """The fewest components whose explained variance reaches `threshold`."""
        import numpy as np

        if self.total <= 0 or not len(self.variances):
            return 0
        ratio = np.cumsum(self.variances) / self.total
        return int(min(len(ratio), int(np.searchsorted(ratio, threshold - 1e-12)) + 1))

    def explained(self, dims: int) -> float:
        return float(self.variances[:dims].sum() / self.total) if self.total > 0 else 1.0

    def project(self, x: Matrix, dims: int) -> Matrix:
        import numpy as np

        out = (x - self.mean) @ self.components[:, :dims]
        result: Matrix = np.ascontiguousarray(out, dtype=np.float32)
        return result


def fit(x: Matrix) -> Basis:
    """The principal axes of the rows of `x` (every non-zero one)."""
    import numpy as np

    n, d = x.shape
    mean = x.mean(axis=0, keepdims=True).astype(np.float32)
    centered = np.asarray(x - mean, dtype=np.float32)
    total = float(np.einsum("ij,ij->", centered, centered, dtype=np.float64)) / max(n - 1, 1)
    if n < 2 or d == 0 or total <= 0:
        return Basis(mean, np.zeros((d, 0), np.float32), np.zeros(0), max(total, 0.0))
    if d <= n:
        cov = (centered.T @ centered).astype(np.float64) / (n - 1)
        values, vectors = np.linalg.eigh(cov)
        order = np.argsort(-values, kind="stable")
        values, vectors = values[order], vectors[:, order]
    else:
        gram = (centered @ centered.T).astype(np.float64) / (n - 1)
        values, left = np.linalg.eigh(gram)
        order = np.argsort(-values, kind="stable")
        values, left = values[order], left[:, order]
        keep = values > values[0] * 1e-9 if values[0] > 0 else values > 0
        values, left = values[keep], left[:, keep]
        vectors = (centered.T.astype(np.float64) @ left) / np.sqrt(values * (n - 1))
    keep = values > max(float(values[0]), 0.0) * 1e-9 if len(values) else values > 0
    values, vectors = values[keep], vectors[:, keep]
    # One sign per axis: its largest entry positive (first one on ties).
    pivots = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[pivots, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    vectors = vectors * signs
    return Basis(mean, vectors.astype(np.float32), values.astype(np.float64), total)


def top_axes(x: Matrix, count: int, *, seed: int = 0, rounds: int = 8) -> Basis:
    """The first `count` principal axes only, by subspace iteration from a fixed random
    start (cheap when count is small): what the map needs when PCA is off. The variances
    it reports are those of the axes found; `total` is the exact total."""
    import numpy as np

    n, d = x.shape
    mean = x.mean(axis=0, keepdims=True).astype(np.float32)
    centered = (x - mean).astype(np.float64)
    total = float((centered * centered).sum()) / max(n - 1, 1)
    width = min(count + 8, d, n)
    if n < 2 or d == 0 or total <= 0 or width == 0:
        return Basis(mean, np.zeros((d, 0), np.float32), np.zeros(0), max(total, 0.0))
    q = np.random.default_rng(seed).standard_normal((d, width))
    for _ in range(rounds):
        q, _r = np.linalg.qr(centered.T @ (centered @ q))
    _u, singular, vt = np.linalg.svd(centered @ q, full_matrices=False)
    vectors = (q @ vt.T)[:, :count]
    values = (singular[:count] ** 2) / (n - 1)
    keep = values > max(float(values[0]), 0.0) * 1e-9 if len(values) else values > 0
    vectors, values = vectors[:, keep], values[keep]
    pivots = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[pivots, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1.0
    return Basis(mean, (vectors * signs).astype(np.float32), values, total)


def map_positions(x: Matrix, basis: Basis | None = None) -> Matrix:
    """(n, 2) positions: the first two principal coordinates (zeros where there are none)."""
    import numpy as np

    basis = basis if basis is not None else top_axes(x, 2)
    dims = min(2, basis.components.shape[1])
    out = np.zeros((x.shape[0], 2), dtype=np.float32)
    if dims:
        out[:, :dims] = basis.project(x, dims)
    return out
