"""Find entity mentions in text: every spelling in the alias table, one regular expression.

A spelling matches with any separators between its words, or none ("Zhang San",
"zhang-san", "ZhangSan"), case-insensitively, and never inside a longer word ("zs" is not
found in "zsh"; CJK text around a name is fine: "zs说"). A note is scanned only when
its full-text token stream holds one of the spelling's forms (see memory.derive). Longer
spellings win where two overlap ("星图 CDP" before "星图"). Spellings of a
single character, and ones that more than one entity claims, are left out: they would
count noise, not mentions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .keys import fold_key

_WORDS = re.compile(r"[^\W_]+")
_SEP = r"[\s\-_.·・]+"


_ASCII_WORD = "[A-Za-z0-9]"


def forms(surface: str) -> list[str]:
    """The texts a spelling matches, up to separators: its words apart, and joined."""
    words = _WORDS.findall(surface)
    if not words:
        return []
    return [" ".join(words), "".join(words)] if len(words) > 1 else [words[0]]


def _pattern(surface: str) -> str | None:
    """Words apart (any separators between them) or joined, never inside a longer Latin
    word or number; CJK text may touch it."""
    words = _WORDS.findall(surface)
    if not words:
        return None
    body = _SEP.join(re.escape(w) for w in words)
    if len(words) > 1:
        body = f"(?:{body}|{re.escape(''.join(words))})"
    if re.match(_ASCII_WORD, words[0][0]):
        body = f"(?<!{_ASCII_WORD})" + body
    if re.match(_ASCII_WORD, words[-1][-1]):
        body += f"(?!{_ASCII_WORD})"
    return body


@dataclass(frozen=True)
class Found:
    count: int
    first: int  # character offset of the first mention


class Matcher:
    """Scans text for a fixed set of spellings, each mapped to one entity key."""

    def __init__(self, spellings: Iterable[tuple[str, str]]) -> None:
        """`spellings`: (surface form, entity key). Keys of a surface form decide the
        entity: a form whose key belongs to two entities is dropped."""
        owners: dict[str, set[str]] = {}
        surfaces: dict[str, str] = {}
        for surface, entity in spellings:
            key = fold_key(surface)
            if len(key) < 2:
                continue
            owners.setdefault(key, set()).add(entity)
            surfaces.setdefault(surface, key)
        self.by_key = {k: next(iter(v)) for k, v in owners.items() if len(v) == 1}
        patterns = sorted(
            {p for s, k in surfaces.items() if k in self.by_key and (p := _pattern(s))},
            key=lambda p: (-len(p), p),
        )
        self.regex = re.compile("|".join(patterns), re.IGNORECASE) if patterns else None

    def __bool__(self) -> bool:
        return self.regex is not None

    def scan(self, text: str) -> dict[str, Found]:
        found: dict[str, Found] = {}
        if self.regex is None:
            return found
        for match in self.regex.finditer(text):
            entity = self.by_key.get(fold_key(match.group(0)))
            if entity is None:
                continue
            seen = found.get(entity)
            found[entity] = (
                Found(1, match.start()) if seen is None else Found(seen.count + 1, seen.first)
            )
        return found

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """(start, end, entity key) of every mention, in order."""
        if self.regex is None:
            return []
        out = []
        for match in self.regex.finditer(text):
            entity = self.by_key.get(fold_key(match.group(0)))
            if entity is not None:
                out.append((match.start(), match.end(), entity))
        return out
