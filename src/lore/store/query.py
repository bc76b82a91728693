"""What a caller asks the store for, as structured values each backend compiles in its
own language (FTS5 MATCH and GLOB for SQLite; tsquery and LIKE for another): never a
fragment of SQL.

    Filters    which notes may answer: tags, a path glob, a date window, access globs
    TextQuery  a lexical query over our token stream: phrases that bring candidates,
               phrases that only score them, phrases no hit may hold, optional fields

Both are NamedTuples (`_replace` makes a changed copy): every search makes them, and the
class costs a cold process less than a frozen dataclass (lore.store.rows).
"""

from __future__ import annotations

from typing import NamedTuple

Phrase = tuple[str, ...]  # tokens of the index's stream, letters and digits only

# A token every note's body ends with and no text can produce (a private-use character
# is not a word character to the tokenizer; FTS5's ascii tokenizer keeps it as a token).
# A query's common terms are ANDed with "(common OR EVERY_NOTE)": they score every
# candidate the rare terms bring without bringing candidates themselves
# (lore.retrieve.query). Its IDF is ~0, so it adds nothing to any score.
EVERY_NOTE = "\ue000"


class Filters(NamedTuple):
    tags: tuple[str, ...] = ()  # case-folded; a tag also matches its sub-tags (`a` ⊃ `a/b`)
    path: str | None = None  # a glob over the vault-relative path; a folder means under it
    since: str | None = None  # YYYY-MM-DD, inclusive
    until: str | None = None
    # A date window leaves out undated notes (no date in front matter, file name or text)
    # unless asked: they may be from any time.
    include_undated: bool = False
    # Access rules (lore.memory.access): the globs a principal may see; None = everything.
    # Applied wherever notes are ranked or counted, so nothing else leaks.
    allow: tuple[str, ...] | None = None
    category: str | None = None  # case-folded (lore.store.note_llm: the author's or the LLM's)

    @property
    def active(self) -> bool:
        filtered = self.tags or self.path or self.since or self.until or self.category
        return bool(filtered) or self.allow is not None


class TextQuery(NamedTuple):
    """Notes holding any phrase of `terms` (and none of `excluded`), scored by BM25 over
    `terms` and `score_only`: the score-only phrases score every candidate but bring none.
    `fields` limits matching to those full-text fields (None: all of them). `counts` says
    how many times a phrase counts in the score (BM25 is a sum over the query's phrases);
    a phrase it does not name counts once. Counts change scores, never which notes match."""

    terms: tuple[Phrase, ...]
    score_only: tuple[Phrase, ...] = ()
    excluded: tuple[Phrase, ...] = ()
    fields: tuple[str, ...] | None = None
    counts: tuple[tuple[Phrase, int], ...] = ()
