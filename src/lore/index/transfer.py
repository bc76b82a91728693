"""What `lore migrate` copies from one index into another: what the notes do not give back
cheaply — the model answers (no call is paid twice), the vectors (nothing is embedded
again) and the interest map (its cluster ids stay). Notes, full text, tags, links and memory
the target derives from the vault's files with its own sync (lore.transfer runs it after
these copies, so the sync finds every answer and vector it needs already there).

Every copy adds only what the target lacks and never changes what it has: a migration
that stops half-way is resumed by running it again."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, replace

from ..store.base import Store
from ..store.interest_rows import MemberRow
from .embed import VEC_LAYOUT, IdentityMismatch, check_layout, ensure_vector_table, load_vec

CHUNK = 500  # vectors read and written per transaction


@dataclass
class Copied:
    copied: int = 0
    present: int = 0  # already in the target: left as it was

    def to_dict(self) -> dict[str, int]:
        return {"copied": self.copied, "present": self.present}


def copy_answers(source: Store, target: Store) -> Copied:
    """The model-answer cache, row for row, except keys the target already holds."""
    have = {answer.key for answer in target.cached_answers()}
    out = Copied()
    for answer in source.cached_answers():
        if answer.key in have:
            out.present += 1
            continue
        target.cache_answer(
            answer.key,
            answer.task,
            answer.model,
            answer.prompt_version,
            answer.input_hash,
            json.loads(answer.output),
        )
        out.copied += 1
    return out


def copy_vectors(source: Store, target: Store) -> Copied:
    """The source's vectors of its recorded model, keyed as they are (text hash, identity,
    space). Nothing is copied from an index whose vectors are in an older table layout
    (`lore embed` replaces them there anyway); a target holding another model's vectors is
    refused: one index never mixes two models."""
    identity, dim = source.embed_identity()
    if identity is None or dim is None or source.get_meta("vec_layout") != VEC_LAYOUT:
        return Copied()
    keys = [key for key in source.vector_keys() if key.identity == identity]
    if not keys:
        return Copied()
    load_vec(source)
    load_vec(target)
    check_layout(target)
    recorded, _dim = target.embed_identity()
    if recorded is not None and recorded != identity and target.vector_count():
        raise IdentityMismatch(
            f"{target.db_path} holds vectors from {recorded}, not from {identity} like"
            f" {source.db_path}",
            hint="migrate into an index without vectors, or run `lore embed --rebuild` there",
        )
    out = Copied()
    for start in range(0, len(keys), CHUNK):
        part = keys[start : start + CHUNK]
        have = target.embedded_keys(identity, [key.text_hash for key in part])
        todo = [key for key in part if (key.text_hash, key.space) not in have]
        out.present += len(part) - len(todo)
        blobs = source.vectors([key.id for key in todo])
        with target.transaction():
            ensure_vector_table(target, identity, dim)
            for key in todo:
                blob = blobs.get(key.id)
                if blob is not None:  # a key without its vector: `lore doctor` names it
                    target.add_vector(key.text_hash, identity, key.space, blob)
                    out.copied += 1
    return out


def copy_tokens(source: Store, target: Store) -> Copied:
    """`lore serve`'s access tokens (the hash of each secret, whether revoked, when last
    used), except names the target has: every client keeps its token after a move."""
    have = {row.name for row in target.token_rows()}
    out = Copied()
    for token in source.stored_tokens():
        if token.row.name in have:
            out.present += 1
            continue
        target.add_token_row(token.row, token.secret_hash)
        out.copied += 1
    return out


def copy_map(source: Store, target: Store) -> int | None:
    """The stored interest map (clusters, ids, labels, positions, centroids), its members
    matched to the target's notes by path; the number of clusters, None without a map. Run
    after the target's sync: members whose note the target does not have are left out."""
    stored = source.stored_map()
    if stored is None:
        return None
    meta, clusters, members = stored
    note_ids = {note.path: note.id for note in target.interest_notes()}
    by_cluster: dict[int, list[MemberRow]] = defaultdict(list)
    for member in members:
        if member.path in note_ids:
            by_cluster[member.cluster_id].append(replace(member, note_id=note_ids[member.path]))
    target.write_map(
        [(cluster, by_cluster[cluster.id]) for cluster in clusters], source.map_centroids(), meta
    )
    return len(clusters)
