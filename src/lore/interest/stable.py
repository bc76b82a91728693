"""Cluster ids that survive a rebuild.

A new cluster takes the id of the previous build's cluster it overlaps most, matched
greedily by Jaccard similarity of their member paths (then by shared notes, then by the
lower old id, then by the new cluster's order), when they share at least MIN_JACCARD of
their union. Every other new cluster gets a fresh id; ids are never reused (the next free
id is kept in interest_meta even after its cluster disappears).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

MIN_JACCARD = 0.5


def assign_ids(
    new: Sequence[Set[str]], old: Mapping[int, Set[str]], next_id: int
) -> tuple[list[int], int]:
    """(an id for each new cluster, the next free id afterwards)."""
    pairs: list[tuple[float, int, int, int]] = []
    for index, members in enumerate(new):
        for old_id, before in old.items():
            shared = len(members & before)
            if not shared:
                continue
            jaccard = shared / len(members | before)
            if jaccard >= MIN_JACCARD:
                pairs.append((-jaccard, -shared, old_id, index))
    pairs.sort()
    ids: list[int | None] = [None] * len(new)
    taken: set[int] = set()
    for _j, _s, old_id, index in pairs:
        if ids[index] is None and old_id not in taken:
            ids[index] = old_id
            taken.add(old_id)
    next_id = max([next_id, *(i + 1 for i in old)])
    out: list[int] = []
    for given in ids:
        if given is None:
            given = next_id
            next_id += 1
        out.append(given)
    return out, next_id
