"""The keys memory matches names by (lore.memory.markdown reads the rest of a card): a
name's folded key and a wikilink target's. Apart from the Markdown readers so that a
search, which looks names up by key (lore.memory.scope), loads none of their patterns.
"""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+")


def fold_key(text: str) -> str:
    """The matching key of a name: NFKC, case-folded, diacritics and every non-word
    character removed, so "Zhang San", "zhang-san" and "ZhangSan" share one key."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        folded = unicodedata.normalize(
            "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
        )
    return _NON_WORD.sub("", folded)


def link_key(target: str) -> str:
    """The key of a wikilink target: its last path component without `.md`."""
    name = target.strip().replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".md", ".markdown"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return fold_key(name)
