"""What every `Vault.search` is scoped by: the principal's access rules become a filter the
query path applies in SQL, and spellings of the entities named in the query are added (a
query for "Zhang San" or "zs" also looks for 张三), from visible cards only.

Kept apart from the memory-path ranking (lore.memory.recall), which a one-shot search does
not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import SearchResult
from ..store.query import Filters
from .access import Access, access_for
from .keys import fold_key

if TYPE_CHECKING:
    from .registry import Registry
    from .services import MemoryServices


def named_entities(query: str, registry: Registry) -> list[tuple[str, list[str]]]:
    """(spelling as found in the query, entity keys it may mean), in query order."""
    out: list[tuple[str, list[str]]] = []
    whole, claimants = registry.resolve(query)
    if whole is not None or len(claimants) > 1:
        return [(query.strip(), [whole] if whole else claimants)]
    for start, end, key in registry.matcher.spans(query):
        out.append((query[start:end], [key]))
    conflicts = registry.conflicts()
    if conflicts:
        from .mentions import Matcher  # only a vault with entity cards gets here

        shared = Matcher(
            (spelling, fold_key(spelling))
            for info in registry.entities.values()
            for spelling in info.spellings
            if fold_key(spelling) in conflicts and registry.resolve(spelling)[0] is None
        )
        for start, end, alias_key in shared.spans(query):
            out.append((query[start:end], conflicts[alias_key]))
    return out


def expand_query(query: str, registry: Registry) -> str:
    """The query plus the other spellings of every entity it names, each quoted."""
    present = {fold_key(query)}
    extra: list[str] = []
    for found, keys in named_entities(query, registry):
        present.add(fold_key(found))
        for key in keys:
            for spelling in registry.entities[key].spellings:
                k = fold_key(spelling)
                if k not in present and len(k) >= 2:
                    present.add(k)
                    extra.append('"' + spelling.replace('"', " ").strip() + '"')
    return f"{query} {' '.join(extra)}" if extra else query


def scope_search(
    services: MemoryServices,
    query: str,
    filters: Filters,
    principal: str | None,
    expand_aliases: bool,
    mode: str,
) -> tuple[str, Filters, SearchResult | None]:
    """(query text to run, filters with the access rule, or a refusal to return as is).
    Without a principal nothing is filtered, and the memory settings are not read."""
    access = Access(None, None) if principal is None else access_for(services.settings, principal)
    if access.blind:
        return query, filters, SearchResult([], query=query, mode=mode, reason=access.reason)
    if access.globs is not None:
        filters = filters._replace(allow=access.globs)
    if expand_aliases and query.strip():
        registry = services.registry(access)
        if registry.entities:
            query = expand_query(query, registry)
    return query, filters, None
