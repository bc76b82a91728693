"""What gets clustered: one row per note, L2-normalised, in path order.

With vectors in the index (`lore embed`), a note's interest vector is seed 000's

    interest_vec = L2((1 - w) · L2(summary_vec) + w · L2(tag_vec)),   w = tag_weight

and a note with only one of the two uses that one. Vectors are read as stored (float32,
one model identity); nothing is embedded here.

Without vectors the rows are TF-IDF vectors of the note's title, tags and long summary,
in lore's own token stream (CJK runs as character bigrams, so Chinese topics are words,
not characters): sublinear tf (1 + log tf), smoothed idf, L2. The vocabulary keeps the
terms found in at least 2 notes (1 in vaults under 20 notes) and at most half of them,
the most common first, up to `lexical_vocab` terms and a memory budget. Terms are
counted by their CRC-32, so no string is kept per distinct term.

Mixed vaults (`source = "auto"`): when at least half the notes have a vector, those are
clustered and the rest are listed as unclustered; otherwise the whole vault is clustered
lexically. Either way a message says so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..derive.tokenize import is_cjk_char, token_spans
from ..errors import ConfigError
from ..store.interest_rows import NoteInfo

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ..store.base import Store
    from .settings import InterestSettings

    Matrix = npt.NDArray[np.float32]

DENSE_BUDGET_BYTES = 256 * 1024 * 1024  # the lexical matrix never grows past this


@dataclass
class Inputs:
    notes: list[NoteInfo]  # the notes clustered, in path order
    matrix: Matrix  # one L2-normalised float32 row per note
    lexical: bool
    source: str  # what the rows are: "vectors <identity>" | "lexical tf-idf"
    unclustered: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    fingerprint: str = ""


def load_notes(store: Store) -> list[NoteInfo]:
    return store.interest_notes()


def l2(matrix: Matrix) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero), float32."""
    import numpy as np

    out = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = out / norms  # float32 / float32: one new array, no second copy
    return result


# -- stored vectors -----------------------------------------------------------------------


def stored_vectors(
    store: Store, identity: str
) -> tuple[dict[int, Any], dict[int, Any], dict[int, str]]:
    """(summary vectors, tag vectors, text hashes) by note id, for this identity."""
    import numpy as np

    store.load_vec()
    wanted: dict[int, list[tuple[int, str]]] = {}  # vec rowid -> every (note id, kind) using it
    hashes: dict[int, list[str]] = {}
    for nid, kind, rowid, digest in store.note_vectors(identity):
        wanted.setdefault(rowid, []).append((nid, kind))
        hashes.setdefault(nid, []).append(f"{kind}:{digest}")
    summary: dict[int, Any] = {}
    tags: dict[int, Any] = {}
    for rowid, blob in store.vectors(sorted(wanted)).items():
        vector = np.frombuffer(blob, dtype=np.float32)
        for nid, kind in wanted[rowid]:
            if kind == "tags":
                tags[nid] = vector
            elif kind == "llm_summary" or nid not in summary:  # the LLM's summary first
                summary[nid] = vector
    return summary, tags, {nid: ",".join(parts) for nid, parts in hashes.items()}


def interest_matrix(summary: list[Any], tags: list[Any], tag_weight: float) -> Matrix:
    """Seed 000's interest vectors, one row per (summary, tags) pair; either may be None
    (that note uses the other alone)."""
    import numpy as np

    rows = []
    for s, t in zip(summary, tags, strict=True):
        s_unit = None if s is None else s / (np.linalg.norm(s) or 1.0)
        t_unit = None if t is None else t / (np.linalg.norm(t) or 1.0)
        if s_unit is not None and t_unit is not None:
            rows.append((1.0 - tag_weight) * s_unit + tag_weight * t_unit)
        else:
            rows.append(s_unit if s_unit is not None else t_unit)
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return l2(np.vstack(rows).astype(np.float32))


# -- lexical ------------------------------------------------------------------------------


def lexical_terms(text: str) -> list[str]:
    """Terms for TF-IDF: lore's tokens, with each run of adjacent CJK characters turned
    into its character bigrams (a lone character stays itself)."""
    out: list[str] = []
    run: list[str] = []
    last_end = -1

    def flush() -> None:
        if len(run) == 1:
            out.append(run[0])
        else:
            out.extend(a + b for a, b in zip(run, run[1:], strict=False))
        run.clear()

    for term, start, end in token_spans(text):
        if len(term) == 1 and is_cjk_char(term):
            if run and start != last_end:
                flush()
            run.append(term)
            last_end = end
            continue
        if run:
            flush()
        if len(term) > 1 or not term.isascii():  # single Latin letters and digits are noise
            out.append(term)
    if run:
        flush()
    return out


def _note_texts(store: Store, notes: list[NoteInfo]) -> Iterator[str]:
    """Title, tags and long summary of each note, in note order, 500 notes at a time."""
    tags = store.tag_sets()
    for start in range(0, len(notes), 500):
        chunk = [n.id for n in notes[start : start + 500]]
        rows = {
            nid: f"{title}\n{' '.join(sorted(tags.get(nid, ())))}\n{summary}"
            for nid, title, summary in store.titles_and_summaries(chunk)
        }
        yield from (rows.get(nid, "") for nid in chunk)


def lexical_matrix(store: Store, notes: list[NoteInfo], vocab_cap: int) -> tuple[Matrix, int]:
    """(TF-IDF rows in note order, vocabulary size). A term is its CRC-32 (the same in
    every process, unlike hash()), and each note keeps only (ids, counts) arrays: no string
    is kept per distinct term (10k notes of mixed text: ~1M distinct CJK bigrams). Two
    terms sharing a CRC share a column; among the common terms kept that is rare."""
    import zlib

    import numpy as np

    rows: list[tuple[Any, Any]] = []
    for text in _note_texts(store, notes):
        ids = np.fromiter(
            (zlib.crc32(t.encode("utf-8")) for t in lexical_terms(text)), dtype=np.uint32
        )
        unique, counts = np.unique(ids, return_counts=True)
        rows.append((unique, counts.astype(np.int32)))
    n = len(notes)
    every = [ids for ids, _counts in rows]
    terms, df = np.unique(
        np.concatenate(every) if every else np.zeros(0, np.uint32), return_counts=True
    )
    min_df = 2 if n >= 20 else 1
    max_df = max(min_df, n // 2) if n >= 4 else n
    budget = max(64, DENSE_BUDGET_BYTES // (4 * max(n, 1)))
    usable = np.flatnonzero((df >= min_df) & (df <= max_df))
    if not len(usable):  # every word is in most notes (identical notes): keep them after all
        usable = np.flatnonzero(df >= min_df)
    # The most common first (ties by id: terms are sorted), then columns in id order.
    order = usable[np.lexsort((terms[usable], -df[usable]))][: min(vocab_cap, budget)]
    keep = np.sort(order)
    idf = np.log((1 + n) / (1 + df[keep].astype(np.float64))) + 1.0
    matrix = np.zeros((n, len(keep)), dtype=np.float32)
    kept_terms = terms[keep]
    for row, (ids, counts) in enumerate(rows):
        where = np.searchsorted(kept_terms, ids)
        where[where == len(kept_terms)] = 0
        hit = kept_terms[where] == ids if len(kept_terms) else np.zeros(len(ids), bool)
        matrix[row, where[hit]] = (1.0 + np.log(counts[hit])) * idf[where[hit]]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    matrix /= norms  # in place: the matrix is the largest thing built here
    return matrix, len(keep)


# -- choosing the input -------------------------------------------------------------------


def fingerprint(source: str, notes: list[NoteInfo], extra: dict[int, str]) -> str:
    data = [source, [[n.path, n.hash, extra.get(n.id, "")] for n in notes]]
    return hashlib.sha256(json.dumps(data, ensure_ascii=False).encode()).hexdigest()


def select_inputs(store: Store, settings: InterestSettings) -> Inputs:
    """The rows to cluster, and what was left out, following `settings.source`."""
    import numpy as np

    notes = load_notes(store)
    identity = store.get_meta("embed_identity")
    has_vectors = identity is not None and store.has_vectors()
    if settings.source == "vectors" and not has_vectors:
        raise ConfigError(
            "source vectors: the index holds no vectors",
            hint="run `lore embed` first, or use --source lexical",
        )
    messages: list[str] = []
    if has_vectors and settings.source != "lexical" and notes:
        assert identity is not None
        summary, tags, hashes = stored_vectors(store, identity)
        with_vec = [n for n in notes if n.id in summary or n.id in tags]
        if settings.source == "vectors" or 2 * len(with_vec) >= len(notes):
            missing = [n.path for n in notes if n.id not in summary and n.id not in tags]
            if missing:
                messages.append(
                    f"{len(missing)} note(s) have no vector yet and are left unclustered"
                    " (run `lore embed`)"
                )
            matrix = interest_matrix(
                [summary.get(n.id) for n in with_vec],
                [tags.get(n.id) for n in with_vec],
                settings.tag_weight,
            )
            source = f"vectors {identity}"
            return Inputs(
                with_vec,
                matrix,
                False,
                source,
                missing,
                messages,
                fingerprint(source, with_vec, hashes),
            )
        messages.append(
            f"only {len(with_vec)} of {len(notes)} notes have vectors: clustered lexically"
            " instead (run `lore embed` to cluster by meaning)"
        )
    matrix, size = lexical_matrix(store, notes, settings.lexical_vocab)
    empty = (
        [n.path for n, row in zip(notes, matrix, strict=True) if not np.any(row)] if size else []
    )
    if not size:
        empty = [n.path for n in notes]
    left_out = set(empty)
    kept = [n for n in notes if n.path not in left_out]
    rows = (
        matrix
        if not left_out
        else matrix[[i for i, n in enumerate(notes) if n.path not in left_out]]
    )
    if not has_vectors and notes:
        messages.append(
            "lexical map: clustered on the notes' words (TF-IDF), no vectors in the index"
            " (run `lore embed` to cluster by meaning)"
        )
    elif settings.source == "lexical" and notes:
        messages.append("lexical map: clustered on the notes' words (TF-IDF), as asked")
    if empty and notes:
        messages.append(
            f"{len(empty)} note(s) share no word with the others and are left unclustered"
        )
    source = "lexical tf-idf"
    return Inputs(
        kept,
        np.asarray(rows, dtype=np.float32),
        True,
        source,
        empty,
        messages,
        fingerprint(f"{source}:{size}", kept, {}),
    )
