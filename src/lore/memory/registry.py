"""The vault's entities and alias table, assembled from the per-note definition rows.

One entity is one key (the folded name). Its definitions may come from several places (a
file card and a `### Name (Type)` section, or two files): the file card wins, then the first
path; the others are kept as duplicates and reported by `lore check`. An alias resolves to
the entity whose *name* it is first; an alias that two entities claim resolves to neither
(`ambiguous`) and is reported.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from .access import Access
from .keys import fold_key

if TYPE_CHECKING:
    from .mentions import Matcher


# Plain classes, not dataclasses: every search builds a registry (an empty one, in a vault
# without entity cards), and a cold process pays for each dataclass it defines.
class EntityInfo:
    def __init__(self, key: str, defs: list[dict[str, Any]] | None = None) -> None:
        self.key = key
        self.defs: list[dict[str, Any]] = [] if defs is None else defs  # canonical first

    @property
    def card(self) -> dict[str, Any]:
        return self.defs[0]

    @property
    def name(self) -> str:
        return str(self.card["name"])

    @property
    def aliases(self) -> list[str]:
        seen = {self.key}
        out: list[str] = []
        for d in self.defs:
            for alias in d["aliases"]:
                k = fold_key(alias)
                if k and k not in seen:
                    seen.add(k)
                    out.append(alias)
        return out

    @property
    def spellings(self) -> list[str]:
        return [self.name, *self.aliases]

    @property
    def pinned(self) -> bool:
        return any(d["pinned"] for d in self.defs)

    @property
    def priority(self) -> int | None:
        values = [int(d["priority"]) for d in self.defs if d["priority"] is not None]
        return max(values) if values else None


class Registry:
    def __init__(self, entities: dict[str, EntityInfo], owners: dict[str, list[str]]) -> None:
        self.entities = entities
        self.owners = owners  # alias key → entity keys claiming it (names included)

    @classmethod
    def build(cls, rows: list[dict[str, Any]], access: Access | None = None) -> Registry:
        entities: dict[str, EntityInfo] = {}
        for row in rows:
            if access is not None and not access.allows(row["path"]):
                continue
            entities.setdefault(row["key"], EntityInfo(row["key"])).defs.append(row)
        for info in entities.values():
            info.defs.sort(key=lambda d: (d["kind"] != "file", d["path"], d["seq"]))
        owners: dict[str, list[str]] = {}
        for key in sorted(entities):
            for spelling in entities[key].spellings:
                k = fold_key(spelling)
                if k and key not in owners.setdefault(k, []):
                    owners[k].append(key)
        return cls(dict(sorted(entities.items())), owners)

    def resolve(self, text: str) -> tuple[str | None, list[str]]:
        """(entity key or None, every entity claiming the spelling)."""
        key = fold_key(text)
        claimants = self.owners.get(key, [])
        if key in self.entities:
            return key, claimants
        if len(claimants) == 1:
            return claimants[0], claimants
        return None, claimants

    def spellings(self) -> list[tuple[str, str]]:
        """(surface, entity key) pairs that resolve to exactly one entity: the mention table."""
        out: list[tuple[str, str]] = []
        for key, info in self.entities.items():
            for spelling in info.spellings:
                resolved, _ = self.resolve(spelling)
                if resolved == key:
                    out.append((spelling, key))
        return out

    @cached_property
    def matcher(self) -> Matcher:
        """Finds every unambiguous spelling in a text (built once per registry)."""
        from .mentions import Matcher  # the scanner: only a registry with entities needs it

        return Matcher(self.spellings())

    def conflicts(self) -> dict[str, list[str]]:
        """alias key → entity keys, where more than one entity claims the spelling."""
        return {k: v for k, v in sorted(self.owners.items()) if len(v) > 1}

    def signature(self) -> str:
        """Changes whenever the mention table would: spellings, owners, card paths."""
        import hashlib  # deferred: only indexing compares signatures, a search does not

        digest = hashlib.sha256()
        for surface, key in sorted(self.spellings()):
            digest.update(f"{surface}\x00{key}\x01".encode())
        for key, info in self.entities.items():
            files = sorted(d["path"] for d in info.defs if d["kind"] == "file")
            digest.update(f"{key}\x00{'|'.join(files)}\x02".encode())
        return digest.hexdigest()
