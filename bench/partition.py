"""Agreement between two partitions of the same items, in numpy: normalised mutual
information (arithmetic mean normalisation, as scikit-learn's default) and the adjusted
Rand index. `python -m bench.partition` checks them on hand-computed cases."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any


def _contingency(a: Sequence[Hashable], b: Sequence[Hashable]) -> Any:
    import numpy as np

    if len(a) != len(b):
        raise ValueError("partitions of different lengths")
    _, ai = np.unique(np.asarray([str(x) for x in a]), return_inverse=True)
    _, bi = np.unique(np.asarray([str(x) for x in b]), return_inverse=True)
    table = np.zeros((ai.max() + 1, bi.max() + 1), dtype=np.float64)
    np.add.at(table, (ai, bi), 1.0)
    return table


def nmi(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    import numpy as np

    table = _contingency(a, b)
    n = table.sum()
    pa, pb, p = table.sum(axis=1) / n, table.sum(axis=0) / n, table / n
    nz = p > 0
    mi = float((p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz])).sum())
    ha = float(-(pa * np.log(pa)).sum())
    hb = float(-(pb * np.log(pb)).sum())
    if ha + hb == 0:
        return 1.0
    return max(0.0, 2 * mi / (ha + hb))


def ari(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    table = _contingency(a, b)

    def pairs(x: Any) -> float:
        return float((x * (x - 1) / 2).sum())

    n = table.sum()
    index = pairs(table)
    rows, cols = pairs(table.sum(axis=1)), pairs(table.sum(axis=0))
    expected = rows * cols / (n * (n - 1) / 2) if n > 1 else 0.0
    best = (rows + cols) / 2
    return 1.0 if best == expected else (index - expected) / (best - expected)


def _self_check() -> None:
    same = [0, 0, 1, 1, 2, 2]
    assert abs(nmi(same, ["a", "a", "b", "b", "c", "c"]) - 1.0) < 1e-12
    assert abs(ari(same, [5, 5, 3, 3, 9, 9]) - 1.0) < 1e-12
    # One cluster vs. three: no information.
    assert nmi(same, [0] * 6) == 0.0 and ari(same, [0] * 6) == 0.0
    # Hand-computed: a = [0,0,0,1,1,1], b = [0,0,1,1,2,2] -> ARI = 0.24242...
    assert abs(ari([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]) - 8 / 33) < 1e-12
    # NMI for the same pair: MI = (2/3) ln 2 = 0.4621 nats, H(a) = ln 2, H(b) = ln 3.
    assert abs(nmi([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]) - 0.5158037429793889) < 1e-9
    print("bench.partition: ok")


if __name__ == "__main__":
    _self_check()
