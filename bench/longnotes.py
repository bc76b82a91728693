"""Long-note sets built by code from the public sets in shared/data.

Each long note concatenates up to `per_note` consecutive paragraphs of one article (same
title, corpus id order), separated by blank lines: multi-paragraph notes of ~2-4k
characters, the shape where embedding only a note's head fails. A query is relevant to the
note that holds its original paragraph. Built in memory, never written into the repo.

    longnotes_en  ← squadshifts_new_wiki (5 paragraphs a note, ~3.8k chars)
    longnotes_zh  ← cmrc2018_trial (5 paragraphs a note; single-paragraph articles stay short)
"""

from __future__ import annotations

from collections import defaultdict

from bench import datasets
from bench.datasets import DataSet, Doc

SOURCES = {"longnotes_en": "squadshifts_new_wiki", "longnotes_zh": "cmrc2018_trial"}
PER_NOTE = 5
# Subsets for the model runs (the local model embeds ~200-600 tokens/s on 2 shared cores):
# every gold CMRC passage + the first 744 distractors; the first 24 SQuADShifts articles.
SUBSETS = {
    "cmrc2018_trial": "cmrc2018_trial-1k",
    "squadshifts_new_wiki": "squadshifts_new_wiki-24a",
}


def subset(name: str) -> DataSet:
    """A named subset of a shared/data set (see SUBSETS), judged queries restricted to it."""
    source_name = next(s for s, sub in SUBSETS.items() if sub == name)
    source = datasets.load(source_name)
    if source_name == "cmrc2018_trial":
        gold = [d for d in source.docs if d.id.startswith("TRIAL_")]
        rest = [d for d in source.docs if not d.id.startswith("TRIAL_")][: 1000 - len(gold)]
        keep = {d.id for d in gold + rest}
    else:
        keep = {d.id for d in source.docs if int(d.id.split("_")[1]) < 24}
    docs = [d for d in source.docs if d.id in keep]
    qrels = {q: rel & keep for q, rel in source.qrels.items() if rel & keep}
    return DataSet(name=name, path=source.path, docs=docs, queries=source.queries, qrels=qrels)


def load_any(name: str) -> DataSet:
    if name in SUBSETS.values():
        return subset(name)
    if name in SOURCES or name.split("@")[0] in SOURCES:
        base, _, source = name.partition("@")
        return build(base, source=source or None)
    return datasets.load(name)


def build(name: str, per_note: int = PER_NOTE, source: str | None = None) -> DataSet:
    """A long-note set from SOURCES[name], or from `source` (a set or subset name)."""
    origin = source or SOURCES[name]
    source_set = subset(origin) if origin in SUBSETS.values() else datasets.load(origin)
    return _long(name if source is None else f"{name}@{origin}", source_set, per_note)


def _long(name: str, source: DataSet, per_note: int) -> DataSet:
    by_title: dict[str, list[Doc]] = defaultdict(list)
    for doc in source.docs:
        by_title[doc.title].append(doc)
    docs: list[Doc] = []
    owner: dict[str, str] = {}
    for t_index, title in enumerate(sorted(by_title)):
        paragraphs = sorted(by_title[title], key=lambda d: d.id)
        for start in range(0, len(paragraphs), per_note):
            group = paragraphs[start : start + per_note]
            note_id = f"long_{t_index:04d}_{start // per_note:02d}"
            text = "\n\n".join(d.text.strip() for d in group)
            docs.append(Doc(note_id, title, text))
            owner.update({d.id: note_id for d in group})
    qrels = {qid: {owner[d] for d in rel if d in owner} for qid, rel in source.qrels.items()}
    qrels = {q: rel for q, rel in qrels.items() if rel}
    return DataSet(name=name, path=source.path, docs=docs, queries=source.queries, qrels=qrels)


def names() -> list[str]:
    return sorted(SOURCES)
