"""The plain data objects of agent memory. Each has `to_dict()`: the `--json` shapes
documented in docs/memory.md (keys are only ever added)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..model import Hit, HitJson


@dataclass(frozen=True)
class Memory:
    """One `remember` entry as written: where it is and how to point at it."""

    path: str  # vault-relative daily note
    anchor: str  # explicit heading id: `path#anchor` points at the entry
    line: int  # 1-based line of the entry's heading
    date: str  # YYYY-MM-DD
    text: str
    time: str = ""  # HH:MM:SS
    status: str = "claimed"
    trust: str = "inferred"
    source: str | None = None
    entities: list[str] = field(default_factory=list)  # canonical names
    created: bool = True  # False: the same entry was already there (nothing written)
    indexed: bool = True  # False: written, but the index was busy; the next sync takes it
    notes: list[str] = field(default_factory=list)  # e.g. an entity with no card yet

    @property
    def pointer(self) -> str:
        return f"{self.path}#{self.anchor}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["pointer"] = self.pointer
        return data


class MemoryHitJson(HitJson):
    """A memory hit: the hit shape plus the entry it sits in (`anchor` points at it)."""

    kind: str | None
    status: str | None
    trust: str | None
    source: str | None
    weight: float
    level: str
    unverified: bool


@dataclass(frozen=True)
class MemoryHit(Hit):
    """A hit from the memory path: a Hit plus the entry it sits in and how it was weighed."""

    anchor: str | None = None  # `path#anchor` points at the entry, when it has one
    kind: str | None = None  # entity | remember | digest | section | item | conclusion | note
    status: str | None = None  # claimed (shown as unverified) | verified | open | done
    trust: str | None = None  # confirmed | inferred | imported
    source: str | None = None
    weight: float = 1.0  # activity decay × trust applied to the relevance score
    level: str = "L2"

    @property
    def unverified(self) -> bool:
        return self.status == "claimed"

    def to_dict(self) -> MemoryHitJson:
        data = MemoryHitJson(
            **super().to_dict(),
            kind=self.kind,
            status=self.status,
            trust=self.trust,
            source=self.source,
            weight=self.weight,
            level=self.level,
            unverified=self.unverified,
        )
        if self.anchor:  # the entry's own, else the heading's (Hit.to_dict)
            data["anchor"] = self.anchor
        return data


@dataclass(frozen=True)
class LookupResult:
    level: str  # L1 entity card | L2 index | L3 raw scan | L4 not found
    query: str
    entity: dict[str, Any] | None
    hits: list[Hit]
    tried: list[str]  # what each level did, in order
    principal: str | None = None
    notes: list[str] = field(default_factory=list)  # ambiguity, duplicates, ...

    @property
    def found(self) -> bool:
        return self.level != "L4"

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "query": self.query,
            "found": self.found,
            "principal": self.principal,
            "entity": self.entity,
            "hits": [h.to_dict() for h in self.hits],
            "tried": self.tried,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class RecentResult:
    days: int
    since: str
    today: str
    entities: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    principal: str | None = None
    reason: str | None = None  # why it is empty, when it is

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ContextView:
    task: str
    text: str
    bytes: int
    budget: int
    items: list[dict[str, Any]]  # kind, path, date, anchor, bytes, ...
    principal: str | None = None
    left_out: int = 0  # items that did not fit the budget

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Snapshot:
    text: str
    bytes: int
    budget: int
    open_items: list[dict[str, Any]]
    recent: list[dict[str, Any]]
    next_steps: list[dict[str, Any]]
    principal: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Finding:
    kind: str  # see lore.memory.check.KINDS
    path: str
    line: int
    message: str
    fixable: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CheckReport:
    findings: list[Finding]
    fixed: list[Finding] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)  # what was looked at, counted

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for finding in self.findings:
            counts[finding.kind] = counts.get(finding.kind, 0) + 1
        return {
            "ok": self.ok,
            "counts": counts,
            "findings": [f.to_dict() for f in self.findings],
            "fixed": [f.to_dict() for f in self.fixed],
            "checked": self.checked,
        }


@dataclass(frozen=True)
class DigestReport:
    path: str
    anchor: str
    date: str
    source: str
    created: bool  # False: this input was digested before (nothing written)
    items: dict[str, list[str]]  # decisions, conclusions, open_items, lessons
    method: str = "heuristic"  # the extractor: heuristic | llm:<provider>:<model>
    lines_read: int = 0
    indexed: bool = True
    reason: str | None = None  # why nothing was written
    dropped: list[dict[str, str]] = field(default_factory=list)  # LLM items not grounded
    notices: list[str] = field(default_factory=list)  # e.g. the LLM failed: heuristic used

    @property
    def pointer(self) -> str:
        return f"{self.path}#{self.anchor}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["pointer"] = self.pointer
        return data
