"""Derive the pinyin rows inside the sync transaction (one hook call from index/sync.py),
from the rows just written: a note's names (title, aliases, file name), its tags and the
names and aliases of the entity cards it defines. Only names with Chinese characters get
rows; pypinyin is imported on the first of them."""

from __future__ import annotations

from collections.abc import Sequence

from ..derive.fields import note_names
from ..derive.fold import describe, mainland
from ..derive.pinyin import encode_units, has_han, keys, name_units
from ..derive.tokenize import cjk_runs
from ..store.base import Store
from ..store.note_rows import NameSource
from ..store.rows import PinyinName
from ..store.sqlite import TOKENIZER_VERSION


def note_pinyin(source: NameSource) -> tuple[list[PinyinName], set[str]]:
    """The pinyin rows and candidate keys of one note."""
    names = [("name", n) for n in note_names(source.title, source.frontmatter, source.path)]
    names += [("name", n) for n in source.entity_names]
    names += [("tag", t) for t in source.tags]
    rows: list[PinyinName] = []
    found: set[str] = set()
    for kind, name in dict.fromkeys(names):
        if not has_han(name):
            continue
        # A Taiwan / Hong Kong name is also spelled as the mainland writes it (軟體 → ruanjian).
        other = mainland(name, cjk_runs(name))
        for spelling in [name] if other is None else [name, other]:
            units = name_units(spelling)
            rows.append(PinyinName(kind, name, encode_units(units)))
            found |= keys(units)
    return rows, found


def derive_pinyin(
    store: Store, changed: Sequence[str], deleted_ids: Sequence[int], *, full: bool
) -> None:
    """Bring the pinyin rows in line with the notes (call inside the sync transaction;
    `changed`: added and changed paths; `full`: every note)."""
    if full:
        store.clear_pinyin(None)
        ids = None
    else:
        ids = store.note_ids(changed)
        store.clear_pinyin([*deleted_ids, *ids])
    for source in store.pinyin_sources(ids):
        rows, found = note_pinyin(source)
        if rows:
            store.add_pinyin(source.id, rows, found)


def chinese_status(store: Store, allow: Sequence[str] | None) -> dict[str, str]:
    """What `lore status` says of the script folding and the pinyin the index holds, the
    names counted among the notes `allow` lets through (None: every note)."""
    if store.get_meta("tokenizer_version") != TOKENIZER_VERSION:
        older = "none: the index was derived by an older lore; run `lore index`"
        return {"folding": older, "pinyin": older}
    names = store.pinyin_name_count(allow)
    counted = "1 name or tag" if names == 1 else f"{names:,} names and tags"
    return {
        "folding": describe(),
        "pinyin": f"{counted} with Chinese characters, by full pinyin, spaced or initials",
    }
