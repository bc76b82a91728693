"""Notes through the vault: reading one (by path, id or name), its links, the tags in
use, writing notes (hash-guarded, then indexed) and serve's access tokens."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError, PathError, QueryError, shown

if TYPE_CHECKING:
    from ..edit.notes import NoteChange, NoteWriter, TrashItem

    # Indexing and checking are imported when called: a one-shot `lore search` process
    # pays for what it runs (YAML, the ignore rules, the embedder are not on its path).
    from ..memory.links import LinkReport
    from ..store.note_rows import NoteRecord
    from ..tokens import NewToken, TokenInfo
from .core import VaultCore

_SUGGESTED = 5  # notes `show` suggests for a name no note has


class NoteFacade(VaultCore):
    """The notes of an open vault: read, linked, written."""

    def note(self, path: str, *, principal: str | None = None) -> dict[str, Any]:
        """The indexed record of one note (path relative to the vault); a note outside
        `principal`'s access rules is not there for it."""
        rel = self.relative_path(path)
        access = self.access(principal)
        # The same answer for a note that is hidden and one that is not there at all.
        missing = NotFoundError(
            f"{shown(path)}: not an indexed note of"
            f" {self.root if access.unrestricted else self.root.name}",
            hint="run `lore index`" if access.unrestricted else None,
        )
        if not access.allows(rel):
            raise missing
        record = self.store.note_record(rel)
        if record is None:
            raise missing
        from ..derive.summary import author_summary
        from ..store.note_llm import fields_of
        from ..store.sql_base import sql_store

        fields = fields_of(sql_store(self.store), [record.id]).get(record.id)
        if fields is not None and fields.llm_summary:
            summary_source = "llm"
        elif author_summary(record.frontmatter, record.body, record.title) is not None:
            summary_source = "frontmatter"
        else:
            summary_source = "head_tail"
        shown_note = note_json(record)
        if fields is not None and fields.llm_summary:  # the index's text adds the claims
            shown_note["summary"] = fields.llm_summary
        return {
            **shown_note,
            "summary_source": summary_source,  # frontmatter | llm | head_tail
            "claims": fields.claims if fields else [],  # [{text, evidence}], grounded
            "category": fields.category if fields else None,
            "llm_model": fields.model if fields else None,
        }

    def find_note(self, ref: str) -> dict[str, Any]:
        """The indexed note `ref` names: its path (with or without `.md`), its front-matter
        id, or its title, an alias or its file name when one note has it (else the error
        lists the notes that do)."""
        text = ref.strip()
        for candidate in dict.fromkeys([text, f"{text}.md", f"{text}.markdown"]):
            rel = self.relative_path(candidate)  # refuses a path outside the vault
            if self.store.has_note(rel):
                return self.note(rel)
        by_id = self.note_path_for_id(text)
        if by_id is not None:
            return self.note(by_id)
        named = self.notes_named(text)
        close: list[tuple[str, str]] = []
        if not named:
            named, close = self._notes_named_nearly(text)
        if len(named) == 1:
            return self.note(named[0])
        if named:
            shown_paths = ", ".join(named[:10]) + (", …" if len(named) > 10 else "")
            raise PathError(
                f"{shown(ref)}: {len(named)} notes have this name: {shown_paths}",
                hint="give one of the paths",
            )
        import shlex  # only for the message: a one-shot search does not import it

        words = shlex.quote(text) if shown(text) == text else "WORDS"
        nearest = "".join(
            f"{'; closest by name: ' if i == 0 else ', '}{shown(path)} ({shown(title)})"
            for i, (path, title) in enumerate(close)
        )
        raise PathError(
            f"{shown(ref)}: no indexed note has this path, id, title or alias{nearest}",
            hint=f"{'give one of the paths, or ' if close else ''}find it with"
            f" `lore search {words}`",
        )

    def _notes_named_nearly(self, text: str) -> tuple[list[str], list[tuple[str, str]]]:
        """For a name no note has as written: the notes whose title or file name it is
        once width, case and spacing are set aside (lore.derive.fields.name_key), and the
        (path, title) of the few notes a lexical search of it ranks first, to suggest."""
        from ..derive.fields import file_stem, name_key

        key = name_key(text)
        try:
            hits = self.search(text, limit=_SUGGESTED, mode="mode4", expand_aliases=False)
        except QueryError:  # nothing searchable in it (only punctuation): nothing close
            return [], []
        same = [h.path for h in hits if key in {name_key(h.title), name_key(file_stem(h.path))}]
        return same, [(h.path, h.title) for h in hits]

    def notes_named(self, name: str) -> list[str]:
        """Paths of the notes whose title, an alias or file name is `name` (case and
        spacing aside), by path."""
        from ..derive.fields import note_names

        key = " ".join(name.casefold().split())
        if not key:
            return []
        return [
            path
            for path, title, fm in self.store.notes_maybe_named(name.strip())
            if key in {" ".join(n.casefold().split()) for n in note_names(title, fm, path)}
        ]

    def note_path_for_id(self, note_id: str) -> str | None:
        """The path of the note whose front matter says `id: <note_id>` (first by path)."""
        return self.store.path_for_id(str(note_id).strip())

    def tag_counts(self, *, principal: str | None = None) -> list[tuple[str, int]]:
        """Every tag (as first written, by case-folded key) with how many notes carry it,
        most used first, ties by tag; only the notes `principal` may see count."""
        return self.store.tag_counts(self.access(principal).globs)

    def links(self, path: str, *, principal: str | None = None) -> LinkReport:
        """A note's outgoing `[[links]]` (resolved) and its backlinks, as `principal`
        may see them."""
        from ..memory.links import link_report

        note = self.note(path, principal=principal)
        return link_report(
            self.store,
            self._memory_settings,
            self.access(principal),
            note["path"],
            note["title"],
        )

    def _writer(self, principal: str | None) -> NoteWriter:
        from ..edit.notes import NoteWriter

        return NoteWriter(self.root, self.access(principal))

    def _indexed(self, change: NoteChange) -> NoteChange:
        """Sync what a write changed; the change says whether the index holds it now."""
        from ..errors import IndexBusyError, IndexFullError, IndexReadOnlyError

        try:
            self.sync()
        except (IndexBusyError, IndexReadOnlyError, IndexFullError):
            return change  # written; the next sync takes it in
        return replace(change, indexed=self.store.indexed_hash(change.path) == change.hash)

    def note_source(self, path: str, *, principal: str | None = None) -> dict[str, str]:
        """The note file's whole text as it is now (front matter included) and its content
        hash, the `base_hash` an edit of it names."""
        text, digest = self._writer(principal).source(path)
        return {"path": path, "text": text, "hash": digest}

    def write_note(self, path: str, text: str, *, principal: str | None = None) -> NoteChange:
        """Create the note `path` (refused when anything is there) and index it."""
        return self._indexed(self._writer(principal).create(path, text))

    def edit_note(
        self,
        path: str,
        *,
        base_hash: str,
        text: str | None = None,
        append: str | None = None,
        section: str | None = None,
        principal: str | None = None,
    ) -> NoteChange:
        """Replace the note's text (or one section's, with `section`) or `append` to it
        (or to a section), if it still holds what `base_hash` (its `hash`) says; else
        ConflictError and nothing written."""
        writer = self._writer(principal)
        change = writer.edit(
            path, base_hash=base_hash, text=text, append_text=append, section=section
        )
        return self._indexed(change)

    def move_note(
        self, path: str, to: str, *, base_hash: str | None = None, principal: str | None = None
    ) -> NoteChange:
        """Move a note to a free path inside the vault."""
        return self._indexed(self._writer(principal).move(path, to, base_hash=base_hash))

    def delete_note(
        self, path: str, *, base_hash: str | None = None, principal: str | None = None
    ) -> NoteChange:
        """Move a note to the vault's trash (`.lore/trash/`, never indexed); restorable."""
        return self._indexed(self._writer(principal).delete(path, base_hash=base_hash))

    def restore_note(
        self, trash_id: str, *, to: str | None = None, principal: str | None = None
    ) -> NoteChange:
        """Put a deleted note back where it was (or at `to`)."""
        return self._indexed(self._writer(principal).restore(trash_id, to=to))

    def trash(self, *, principal: str | None = None) -> list[TrashItem]:
        """The deleted notes `principal` may see, newest first."""
        return self._writer(principal).trash()

    def add_token(self, name: str, *, principal: str | None, can_write: bool = False) -> NewToken:
        """A new access token for `lore serve` (its secret is in the result, once)."""
        from ..tokens import add_token

        return add_token(self.store, name, principal=principal, can_write=can_write)

    def tokens(self) -> list[TokenInfo]:
        from ..tokens import list_tokens

        return list_tokens(self.store)

    def revoke_token(self, name: str) -> TokenInfo:
        from ..tokens import revoke_token

        return revoke_token(self.store, name)

    def record_token_use(self, name: str) -> None:
        """Note that the token `name` was used now (to the minute; `lore token list`)."""
        from ..tokens import record_use

        record_use(self.store, name)

    def verify_token(self, secret: str) -> TokenInfo | None:
        """The valid token whose secret this is (None: unknown or revoked)."""
        from ..tokens import verify_token

        return verify_token(self.store, secret)


def note_json(record: NoteRecord) -> dict[str, Any]:
    """The shape of one note for `lore show --json`, the Python API and MCP read_note."""
    return {
        "path": record.path,
        "title": record.title,
        "title_source": record.title_source,
        "date": record.date,
        "date_source": record.date_source,
        "frontmatter": record.frontmatter,
        "tags": [{"tag": t, "origin": o} for t, o in record.tags],
        "derived_tags": [{"tag": t, "origin": o} for t, o in record.derived_tags],
        "links": record.links,
        "headings": [{"level": h[0], "text": h[1], "line": h[3]} for h in record.headings],
        "summary": record.summary,
        "body": record.body,
        "body_line": record.body_line,
        "size": record.size,
        "hash": record.hash,
        "truncated": record.truncated,
    }
