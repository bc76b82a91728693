"""Find and load the retrieval sets under shared/data (or $LORE_BENCH_DATA).

A set is any subfolder holding corpus.jsonl, queries.jsonl and qrels.tsv. The data is read in
place and never copied into the repo (the sets carry their own licences and live in shared/).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
REQUIRED_FILES = ("corpus.jsonl", "queries.jsonl", "qrels.tsv")

# CJK ideographs (incl. extension A, compatibility, extension B+) and Japanese kana. Hangul is
# left out on purpose: Korean is written with spaces, so it behaves like a Latin script here.
CJK_CLASS = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0002ebef"  # CJK extensions B-F
)
CJK_RE = re.compile(f"[{CJK_CLASS}]")


def has_cjk(text: str) -> bool:
    return CJK_RE.search(text) is not None


def data_root() -> Path:
    """shared/data beside the repo, unless LORE_BENCH_DATA points elsewhere."""
    override = os.environ.get("LORE_BENCH_DATA")
    if override:
        return Path(override).expanduser().resolve()
    return Path(__file__).resolve().parents[2] / "shared" / "data"


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Query:
    id: str
    text: str


@dataclass
class DataSet:
    name: str
    path: Path
    docs: list[Doc]
    queries: list[Query]
    qrels: dict[str, set[str]] = field(default_factory=dict)

    @property
    def lang(self) -> str:
        """ "zh" when most docs contain CJK, else "en"; picks which baselines apply."""
        cjk = sum(1 for d in self.docs if has_cjk(d.title + d.text))
        return "zh" if cjk * 2 > len(self.docs) else "en"

    def judged_queries(self) -> list[Query]:
        """Queries with at least one relevant doc, in file order (unjudged ones can't score)."""
        return [q for q in self.queries if self.qrels.get(q.id)]


def _read_jsonl(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{lineno}: bad JSON: {exc}") from exc


def read_qrels(path: Path) -> dict[str, set[str]]:
    qrels: dict[str, set[str]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n").split("\t")
            if not parts[0]:
                continue
            if len(parts) != 3:
                raise ValueError(f"{path}:{lineno}: expected 3 tab-separated fields")
            qid, doc_id, grade = parts
            # Binary relevance: a 0 grade row is an explicit non-relevant judgement.
            if int(grade) > 0:
                qrels.setdefault(qid, set()).add(doc_id)
    return qrels


def discover(root: Path | None = None) -> list[str]:
    """Names of every complete set under the data root, sorted."""
    root = root or data_root()
    if not root.is_dir():
        return []
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and all((p / f).is_file() for f in REQUIRED_FILES)
    )


def load(name: str, root: Path | None = None) -> DataSet:
    path = (root or data_root()) / name
    docs = [
        Doc(id=str(r["id"]), title=str(r.get("title") or ""), text=str(r.get("text") or ""))
        for r in _read_jsonl(path / "corpus.jsonl")
    ]
    queries = [
        Query(id=str(r["id"]), text=str(r["text"])) for r in _read_jsonl(path / "queries.jsonl")
    ]
    return DataSet(
        name=name, path=path, docs=docs, queries=queries, qrels=read_qrels(path / "qrels.tsv")
    )
