"""Readable cluster labels, without a model: the tags that set a cluster apart.

A tag scores (weighted share of the cluster's notes carrying it) × (share of all the
tag's notes that sit in this cluster): common inside, rare outside. Authors' tags (front
matter, inline) weigh 1, LLM tags 0.8, heuristic keywords 0.5. The label is the best tag
plus up to two more scoring at least LABEL_KEEP of the best; a cluster without a tag
found in MIN_TAG_SHARE of its notes (of its KEYWORD_MEMBERS most representative when it is
larger; and in 2+, 1+ when it has under 4) is labelled by
its members' distinctive keywords (computed from their titles and text for labelling, even
in mode 4, where notes get no keyword tags: with_keywords), and only without those by the
title of its most representative note. Labels are made unique (a repeated one gets its next
tag, else its id).

With an LLM configured (`llm_labels` auto/on), the model may propose a better label from
the top tags and representative titles; answers are cached by (input hash, model, prompt
version) and a failure keeps the heuristic labels, with a message.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..derive.tags import tag_key
from ..errors import LoreError
from ..providers.base import ProviderError

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.sqlite import SqliteStore

WEIGHTS = {"frontmatter": 1.0, "inline": 1.0, "llm": 0.8, "heuristic": 0.5}
TOP_TAGS = 5
LABEL_KEEP = 0.5
# A tag in 3 of a cluster's 63 notes (`#include` written in passing) does not name it.
MIN_TAG_SHARE = 0.1
MAX_LABEL = 60
LABEL_PROMPT_VERSION = "lore-interest-label-v1"
LABEL_SYSTEM = (
    "You name topics in a personal knowledge base. Given the most typical tags and note "
    "titles of one group of notes, answer with JSON only, no prose: "
    '{"label": "..."} where label is a short, specific name for the shared topic '
    "(2 to 6 words) in the language of the notes."
)


@dataclass(frozen=True)
class Label:
    label: str
    source: str  # tags | titles | llm
    top_tags: tuple[str, ...]


def note_tags(store: SqliteStore) -> dict[int, dict[str, tuple[str, float]]]:
    """note id → tag key → (spelling, weight): the best-weighted origin of each tag."""
    out: dict[int, dict[str, tuple[str, float]]] = defaultdict(dict)
    rows = store.query(
        "SELECT note_id, tag, origin FROM tags UNION ALL"
        " SELECT note_id, tag, origin FROM derived_tags ORDER BY 1, 2, 3"
    )
    for nid, tag, origin in rows:
        key = tag_key(str(tag))
        if not key:
            continue
        weight = WEIGHTS.get(str(origin), 0.5)
        known = out[int(nid)].get(key)
        if known is None or weight > known[1]:
            out[int(nid)][key] = (str(tag), weight)
    return out


KEYWORD_MEMBERS = 60  # the most representative members whose keywords label a cluster


def with_keywords(
    store: SqliteStore,
    clusters: Sequence[Sequence[int]],
    labels: Sequence[Label],
    tags: dict[int, dict[str, tuple[str, float]]],
) -> dict[int, dict[str, tuple[str, float]]]:
    """`tags` plus heuristic keywords (weight 0.5) of the most representative members of
    the clusters labelled by a title (no tag set them apart), for labelling only."""
    from ..derive.tags import heuristic_tags

    wanted = [
        nid
        for members, label in zip(clusters, labels, strict=True)
        if label.source == "titles"
        for nid in members[:KEYWORD_MEMBERS]
    ]
    out = {nid: dict(found) for nid, found in tags.items()}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for nid, title, summary in store.query(
            f"SELECT id, title, summary FROM notes WHERE id IN ({marks})", chunk
        ):
            mine = out.setdefault(int(nid), {})
            for word in heuristic_tags(str(title), str(summary)):
                mine.setdefault(tag_key(word), (word, WEIGHTS["heuristic"]))
    return out


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1].rstrip() + "…"


def heuristic_labels(
    clusters: Sequence[Sequence[int]],
    titles: dict[int, str],
    tags: dict[int, dict[str, tuple[str, float]]],
    ids: Sequence[int],
) -> list[Label]:
    """One Label per cluster (members given most representative first)."""
    df: Counter[str] = Counter()
    for members in clusters:
        for nid in members:
            df.update(tags.get(nid, {}).keys())
    labels: list[Label] = []
    used: set[str] = set()
    for members, cluster_id in zip(clusters, ids, strict=True):
        weight: dict[str, float] = defaultdict(float)
        count: Counter[str] = Counter()
        spelling: dict[str, Counter[str]] = defaultdict(Counter)
        for nid in members:
            for key, (tag, w) in tags.get(nid, {}).items():
                weight[key] += w
                count[key] += 1
                spelling[key][tag] += 1
        floor = (
            1
            if len(members) < 4
            else max(2, math.ceil(MIN_TAG_SHARE * min(len(members), KEYWORD_MEMBERS)))
        )
        scored = [
            ((weight[k] / len(members)) * (count[k] / df[k]), k) for k in count if count[k] >= floor
        ]
        ranked = sorted(scored, key=lambda s: (-s[0], s[1]))[:TOP_TAGS]
        shown = [min(spelling[k].items(), key=lambda kv: (-kv[1], kv[0]))[0] for _s, k in ranked]
        if ranked:
            best = ranked[0][0]
            parts = [t for (s, _k), t in zip(ranked, shown, strict=True) if s >= LABEL_KEEP * best]
            text, source = _cut(" · ".join(parts[:3])), "tags"
            extra = [t for t in shown if t not in parts[:3]]
        else:
            text = _cut(titles.get(members[0], "") or f"cluster {cluster_id}")
            source, extra = "titles", []
        if text in used:
            text = _cut(f"{text} · {extra[0]}") if extra else f"{text} (#{cluster_id})"
        if text in used:
            text = f"{text} (#{cluster_id})"
        used.add(text)
        labels.append(Label(text, source, tuple(shown)))
    return labels


def _validate(answer: dict[str, Any]) -> dict[str, Any]:
    label = answer.get("label")
    if not isinstance(label, str) or not label.strip():
        raise ProviderError("LLM label: expected a non-empty string")
    return {"label": _cut(label)}


def llm_labels(
    store: SqliteStore,
    chat: ChatProvider,
    labels: list[Label],
    titles: Sequence[Sequence[str]],
) -> tuple[list[Label], str | None]:
    """Labels proposed by the model (cached); on the first failure, the heuristic labels
    and a one-line message."""
    out: list[Label] = []
    used: set[str] = set()
    try:
        for label, names in zip(labels, titles, strict=True):
            user = "Tags: " + (", ".join(label.top_tags) or "-") + "\nTitles:\n"
            user += "\n".join(f"- {_cut(t)}" for t in names[:8])
            answer = store_answer(store, chat, user)
            text = answer if answer not in used else label.label
            used.add(text)
            out.append(Label(text, "llm", label.top_tags))
    except LoreError as exc:
        return labels, f"LLM labels unavailable, heuristic labels kept: {exc}"
    return out, None


def store_answer(store: SqliteStore, chat: ChatProvider, user: str) -> str:
    from ..index.llm_cache import cached_answer

    answer = cached_answer(
        store,
        chat,
        task="interest_label",
        version=LABEL_PROMPT_VERSION,
        system=LABEL_SYSTEM,
        user=user,
        validate=_validate,
    )
    return str(answer["label"])
