"""Path-based access rules: a principal sees the notes whose vault-relative path matches one
of its globs, and nothing else.

The rules are turned into SQLite GLOB patterns that the query path puts in its WHERE clause
(search, counts, entity cards, mentions, edges, entries), and into the same patterns for the
few places that read files (the L3 raw scan, anchors). Glob syntax: `*` and `**` match any
characters including `/`, `?` one character, `[abc]` / `[!abc]` a set; a pattern ending in
`/` or without wildcards also matches everything under that folder.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # read when a principal's rules are (not by the owner's search)
    from .settings import MemorySettings


def _patterns(rule: str) -> list[str]:
    """One user glob → fnmatch patterns (which GLOB reads the same way, `[!` aside)."""
    text = rule.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/")
    if not text:
        return []
    variants = [text]
    if "/**/" in text:  # `a/**/b` also matches `a/b`
        variants.append(text.replace("/**/", "/"))
    if text.startswith("**/"):
        variants.append(text[3:])
    out: list[str] = []
    for variant in variants:
        while "**" in variant:
            variant = variant.replace("**", "*")
        if variant.endswith("/"):
            out.append(variant + "*")
        elif not any(c in text for c in "*?["):
            out += [variant, variant + "/*"]
        else:
            out.append(variant)
    return out


class Access(NamedTuple):
    """What one caller may see. `patterns` None: everything (no principal given). A
    NamedTuple: every search makes one, and it costs a cold process less than a dataclass."""

    principal: str | None
    patterns: tuple[str, ...] | None
    reason: str | None = None  # why a principal sees nothing

    @property
    def unrestricted(self) -> bool:
        return self.patterns is None

    @property
    def blind(self) -> bool:
        return self.patterns is not None and not self.patterns

    @property
    def globs(self) -> tuple[str, ...] | None:
        """The SQLite GLOB form of the patterns."""
        if self.patterns is None:
            return None
        return tuple(p.replace("[!", "[^") for p in self.patterns)

    def allows(self, path: str) -> bool:
        if self.patterns is None:
            return True
        return any(fnmatchcase(path, p) for p in self.patterns)


def access_for(settings: MemorySettings, principal: str | None) -> Access:
    if principal is None:
        return Access(None, None)
    rules = settings.access.get(principal)
    if rules is None:
        where = "its [access] table" if settings.has_access_table else "an [access] table"
        return Access(
            principal,
            (),
            f"principal {principal!r} has no access rules (.lore/config.toml has no "
            f"{principal!r} in {where}); it sees nothing",
        )
    patterns = tuple(dict.fromkeys(p for rule in rules for p in _patterns(rule)))
    reason = (
        None if patterns else f"principal {principal!r} has an empty rule list; it sees nothing"
    )
    return Access(principal, patterns, reason)
