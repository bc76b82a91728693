"""After the sync transaction: derive each changed note's tags and its texts to embed.

Kept out of the sync transaction on purpose: it needs no network, but it is a separate,
idempotent step keyed by the note's content hash (`semantic_state`), so a crash between the
two loses nothing and the next sync completes it. Notes whose hash did not change are not
touched; rows of deleted notes are dropped.
"""

from __future__ import annotations

from collections.abc import Callable

from ..derive.passages import PASSAGE_VERSION, NoteText, note_texts
from ..derive.summary import base_summary
from ..derive.tags import TAGS_VERSION, heuristic_tags, tag_key
from ..store.base import PlannedText, Store
from ..store.vector_rows import NoteSource

VERSION = f"tags{TAGS_VERSION}.passages{PASSAGE_VERSION}"
Progress = Callable[[int, int, str], None]


def load_sources(store: Store, ids: list[int]) -> dict[int, NoteSource]:
    """The stored fields of these notes, with all their tags."""
    return store.note_sources(ids)


def planned(texts: list[NoteText]) -> list[PlannedText]:
    """Texts to embed as the store keeps them."""
    return [(t.kind, t.seq, t.hash, t.start, t.end, t.heading) for t in texts]


def texts_of(source: NoteSource) -> list[NoteText]:
    """The note's texts to embed. With a summary by the LLM (the note's stored summary is
    not the one it has without a model), the head-and-tail summary stays and the LLM's is
    one more text beside it: the vector channel takes a note's best text, so the LLM's
    summary can bring a note the head and tail miss, and never takes a match away
    (bench/results/llm_summary.md: replacing the head and tail lost as often as it won)."""
    if not source.llm_summary:  # the stored summary is the one without a model
        return note_texts(source.title, source.body, source.headings, source.summary, source.tags)
    own, _source = base_summary(source.frontmatter, source.body, source.title)
    return note_texts(source.title, source.body, source.headings, own, source.tags, source.summary)


def _version(tags: bool) -> str:
    return VERSION if tags else f"{VERSION}.notags"


def stale_notes(store: Store, tags: bool = True) -> list[tuple[int, str]]:
    return store.semantic_stale(_version(tags))


def refresh(
    store: Store,
    *,
    force: bool = False,
    progress: Progress | None = None,
    tags: bool = True,
) -> int:
    """Re-derive tags and texts-to-embed of every note whose content changed (all notes with
    `force`); drop the rows of deleted notes. One transaction. Returns the notes derived.

    `tags=False` skips the heuristic keywords (jieba, ~10 ms a note: 10x the cost of the
    whole full-text sync); turning them on later re-derives every note (its version differs).
    """
    if not force and not stale_notes(store, tags) and not store.semantic_orphans():
        return 0  # nothing to do: take no write lock
    with store.transaction():
        store.drop_semantic_orphans(everything=force)
        todo = stale_notes(store, tags)
        if not todo:
            return 0
        author = store.author_tags([nid for nid, _ in todo])
        done = 0
        for start in range(0, len(todo), 500):
            chunk = todo[start : start + 500]
            sources = load_sources(store, [nid for nid, _ in chunk])
            for nid, digest in chunk:
                source = sources[nid]
                _derive_one(store, source, author.get(nid, []), digest, tags)
                done += 1
                if progress is not None:
                    progress(done, len(todo), source.path)
    return done


def _derive_one(
    store: Store, source: NoteSource, author: list[str], digest: str, tags: bool
) -> None:
    nid = source.id
    author_keys = {tag_key(t) for t in author}
    keywords = heuristic_tags(source.title, source.body) if tags else []
    found = [t for t in keywords if tag_key(t) not in author_keys]
    rows = [(t, tag_key(t), i) for i, t in enumerate(found)]
    store.replace_derived_tags(nid, rows, "heuristic", drop=("heuristic", "llm"))
    full = NoteSource(
        nid,
        source.path,
        source.title,
        source.body,
        source.headings,
        source.summary,
        list(dict.fromkeys(author + found)),
        source.frontmatter,
        source.llm_summary,
    )
    store.write_texts(nid, planned(texts_of(full)))
    store.mark_derived(nid, digest, _version(tags))


def set_llm_tags(store: Store, note_id: int, tags: list[str]) -> None:
    """Store a note's LLM tags (inside a transaction) and re-plan its tag text."""
    rows = [(t, tag_key(t), i) for i, t in enumerate(tags) if tag_key(t)]
    store.replace_derived_tags(note_id, rows, "llm", drop=("llm",))
    source = store.note_sources([note_id]).get(note_id)
    if source is not None:
        store.write_texts(note_id, planned(texts_of(source)))
