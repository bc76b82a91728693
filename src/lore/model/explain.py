"""Why a hit ranked where it did (lore.model): made only for `--explain`, so a plain
search does not define it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Explain:
    """Why a hit ranked where it did: the score per field and the query terms it matched."""

    fields: dict[str, float]
    matched_terms: list[str]
    query_terms: list[str]
    fts_query: str
    # Absent from the index (they match nothing), or single tokens in more than half of
    # the notes, to which BM25 gives no weight.
    dropped_terms: list[str]
    # The semantic layer (issue 8): the query plan and every channel's raw and weighted score.
    query_refine: str | None = None
    query_tags: list[str] = field(default_factory=list)
    planner: str = "heuristic"  # heuristic | llm
    channels: dict[str, dict[str, float]] = field(default_factory=dict)
    passage: str | None = None  # the passage whose vector matched best (long notes)
    # Too common to bring candidates: they scored the candidates the rarer terms brought.
    score_only_terms: list[str] = field(default_factory=list)
    excluded_terms: list[str] = field(default_factory=list)  # -word: no hit holds them
    # Script folding and pinyin (issue 17): how folding changed the query's words ("軟體 →
    # 软件"), this hit's matches the note writes in another script or word ("数据库 ≈
    # 數據庫"), and the name or tag the query spelled in pinyin ("zhangsan → 张三").
    folded_terms: list[str] = field(default_factory=list)
    matched_folded: list[str] = field(default_factory=list)
    pinyin: str | None = None
    # Stop words and spoken filler of the query, not searched (a note's name that holds
    # them still counts them: lore.retrieve.names).
    stop_terms: list[str] = field(default_factory=list)
    # Which text the best vector was made from (issue 19): a passage, the whole note, or
    # the summary (the LLM's, the author's, or the head and tail of the text).
    vector_text: str | None = None
    # Where the full-text score came from (issue 12): "the whole note", or its best part,
    # "a part (§ heading)", when that part's share of BM25 beat the whole note's.
    fts_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
