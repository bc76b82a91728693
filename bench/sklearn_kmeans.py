"""Would scikit-learn's KMeans do for the interest map? (issue 14: "use scikit-learn for
k-means only if it keeps results and stable ids identical and install size reasonable").

    .venv/bin/pip install scikit-learn   # not a dependency of lore: only for this comparison
    .venv/bin/python -m bench.sklearn_kmeans [--no-write]

On seeded clouds of unit vectors (e5-like dimensions, clusters from well apart to
overlapping), lore.interest.kmeans and sklearn.cluster.KMeans with the same k, n_init,
max_iter and random_state: how many notes keep their label (cluster ids are what users
see and what the stable-id matching of a rebuild keeps), how much of the partition is
the same after the best one-to-one matching of clusters, and the inertia of each.
Installed sizes are measured from the environment (sklearn + scipy, which it pulls in).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.report import info_lines, md_table, run_info, write_outputs

CASES = [  # notes, dimensions, clusters, spread (noise around each center)
    (600, 384, 12, 0.6),
    (2000, 384, 30, 0.9),
    (5000, 64, 40, 1.2),
]


def _size_mb(module: Any) -> float:
    root = Path(module.__file__).parent
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20


def _matched(a: Sequence[int], b: Sequence[int]) -> int:
    """Notes in the same cluster after a greedy one-to-one matching of the two labelings."""
    used_a: set[int] = set()
    used_b: set[int] = set()
    same = 0
    for (x, y), count in Counter(zip(a, b, strict=True)).most_common():
        if x not in used_a and y not in used_b:
            used_a.add(x)
            used_b.add(y)
            same += count
    return same


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    try:
        import numpy as np
        import scipy
        import sklearn
        from sklearn.cluster import KMeans
    except ImportError:
        print("scikit-learn is not installed: .venv/bin/pip install scikit-learn", file=sys.stderr)
        return 1
    from lore.interest.kmeans import compact, kmeans

    info = run_info("bench.sklearn_kmeans")
    rng = np.random.default_rng(1)
    rows: list[dict[str, Any]] = []
    for n, d, k, spread in CASES:
        centers = rng.normal(size=(k, d))
        x = centers[rng.integers(0, k, n)] + spread * rng.normal(size=(n, d))
        x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
        start = time.perf_counter()
        ours = kmeans(x, k, n_init=4, seed=0, max_iter=100)
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        fitted = KMeans(k, n_init=4, random_state=0, max_iter=100).fit(x)
        theirs_s = time.perf_counter() - start
        theirs = compact(fitted.labels_.astype(np.int64))

        def inertia(labels: Any, x: Any = x) -> float:
            return sum(
                float(((x[labels == c] - x[labels == c].mean(0)) ** 2).sum())
                for c in set(labels.tolist())
            )

        rows.append(
            {
                "notes": n,
                "dim": d,
                "k": k,
                "spread": spread,
                "same_label": float((ours == theirs).mean()),
                "same_partition": _matched(ours.tolist(), theirs.tolist()) / n,
                "inertia_lore": inertia(ours),
                "inertia_sklearn": inertia(theirs),
                "seconds_lore": ours_s,
                "seconds_sklearn": theirs_s,
            }
        )
        print(rows[-1], file=sys.stderr)
    sizes = {"sklearn": _size_mb(sklearn), "scipy": _size_mb(scipy), "numpy": _size_mb(np)}
    versions = {"sklearn": sklearn.__version__, "scipy": scipy.__version__, "numpy": np.__version__}
    table = md_table(
        ["notes", "dim", "k", "spread", "same label", "same partition", "inertia lore",
         "inertia sklearn", "s lore", "s sklearn"],
        [
            [str(r["notes"]), str(r["dim"]), str(r["k"]), f"{r['spread']:.1f}",
             f"{r['same_label']:.3f}", f"{r['same_partition']:.3f}",
             f"{r['inertia_lore']:.2f}", f"{r['inertia_sklearn']:.2f}",
             f"{r['seconds_lore']:.2f}", f"{r['seconds_sklearn']:.2f}"]
            for r in rows
        ],
    )  # fmt: skip
    lines = [
        "# scikit-learn's KMeans vs lore's k-means (issue 14)",
        "",
        *info_lines(info),
        "",
        f"scikit-learn {versions['sklearn']}, scipy {versions['scipy']}, numpy"
        f" {versions['numpy']}. Installed: sklearn {sizes['sklearn']:.0f} MB + scipy"
        f" {sizes['scipy']:.0f} MB, beside numpy's {sizes['numpy']:.0f} MB"
        " (lore needs numpy only).",
        "",
        *table,
        "",
        "same label: notes whose cluster number is the same (what users and stored maps see);"
        " same partition: notes in the same cluster after the best one-to-one matching of"
        " the clusters; s: one run's wall time on a shared machine (indicative only).",
        "",
        "Verdict: numpy stays. With the same k, n_init, max_iter and random_state the two"
        " agree only where clusters are well apart; where they overlap, as topics in a"
        " vault do, scikit-learn draws other seeds (its RandomState stream, not numpy's"
        " Generator) and ends in another partition, so every stored map's cluster ids"
        " would move once, and the warm start from the stored map with the most-agreeing"
        " run (lore.interest.kmeans, what keeps ids stable over rebuilds) is not in"
        " KMeans. Where they differ, either may have the lower inertia (the table): neither"
        " is better by that measure alone. It would add scipy and scikit-learn to the"
        " install for ~200 lines of numpy.",
    ]
    if not args.no_write:
        md, js = write_outputs(
            "sklearn_kmeans",
            "\n".join(lines) + "\n",
            {**info, "rows": rows, "sizes_mb": sizes, "versions": versions},
        )
        print(f"wrote {md} and {js}", file=sys.stderr)
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
