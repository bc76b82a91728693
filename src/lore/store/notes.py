"""The notes and what the sync writes for them (one transaction, lore.index.sync), and
the reads of single notes, names, tags and dates that the vault, reports and capture use:
the same statements on both backends (lore.store.sql_base). Each backend adds how a note's
full text and its parts are indexed (sqlite_notes: FTS5; pg_notes: postings)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .sql_base import SqlBase

if TYPE_CHECKING:  # the rows are made where they are read (lore.store.rows)
    from .note_rows import NoteRecord, NoteRow, StoredNote, Unreadable

NOTE_COLUMNS = (
    "path", "title", "title_source", "date", "date_source", "mtime_ns", "size", "hash",
    "frontmatter", "headings", "summary", "body", "body_line", "priority", "status", "truncated",
)  # fmt: skip


STAMP_PAGE = 50_000  # notes' stamps read per statement (a few MB of rows)


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class NotesSql(SqlBase):
    # The front matter's `id` as text, and which notes may be named by `name` (parameters:
    # the name, a LIKE pattern of its file name, the name): JSON and text functions differ.
    FRONTMATTER_ID: str
    MAYBE_NAMED: str

    # -- the full-text rows of a note (per backend) ------------------------------------------

    def _insert_id(self, table: str, columns: tuple[str, ...], values: Sequence[Any]) -> int:
        """Insert a row into a table with an `id` key; the id it got."""
        raise NotImplementedError

    def _index_text(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        raise NotImplementedError

    def _unindex_text(self, note_id: int) -> None:
        raise NotImplementedError

    def insert_sections(self, note_id: int, sections: list[tuple[int, int, str]]) -> None:
        raise NotImplementedError

    def _delete_sections(self, note_id: int) -> None:
        raise NotImplementedError

    def replace_text(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        """Index a note's full-text row anew (inside a transaction; the caller applies the
        document frequencies): its summary changed, not its file."""
        self._unindex_text(note_id)
        self._index_text(note_id, fields)

    # -- what the sync writes (call inside transaction()) -----------------------------------

    def stored_notes(self) -> dict[str, StoredNote]:
        return self._stored_notes("")

    def note_stamps(self) -> Iterator[tuple[str, int, int]]:
        """(path, mtime_ns, size) of every note, in the database's order of paths, a page
        at a time: what a sync compares its scan with (lore.index.compare), without a row
        object per note."""
        for rows in self.note_pages("path, mtime_ns, size", "path", STAMP_PAGE):
            yield from rows  # text, integer, integer: both drivers' str and int already

    def stored_notes_of(
        self, paths: Sequence[str], *, hashes: bool = True
    ) -> dict[str, StoredNote]:
        """stored_notes of the notes at these paths (those a sync re-derives or deletes);
        without `hashes`, their hashes are left empty (a rebuild derives every note)."""
        out: dict[str, StoredNote] = {}
        for part in self.chunks(paths):
            where, params = self.in_list("path", part)
            out |= self._stored_notes(where, params, hashes=hashes)
        return out

    def _stored_notes(
        self, where: str, params: Sequence[Any] = (), *, hashes: bool = True
    ) -> dict[str, StoredNote]:
        from .note_rows import StoredNote

        digest_column = "hash" if hashes else "''"  # the empty string: one object for all
        return {
            str(path): StoredNote(int(nid), str(digest))
            for nid, path, digest in self.query(
                f"SELECT id, path, {digest_column} FROM notes"
                + (f" WHERE {where}" if where else ""),
                params,
            )
        }

    def unreadable(self) -> dict[str, Unreadable]:
        from .note_rows import Unreadable

        return {
            str(path): Unreadable(int(mtime), int(size), str(reason))
            for path, mtime, size, reason in self.query(
                "SELECT path, mtime_ns, size, reason FROM unreadable"
            )
        }

    def mark_unreadable(self, path: str, mtime_ns: int, size: int, reason: str) -> None:
        self.execute(
            "INSERT INTO unreadable(path, mtime_ns, size, reason) VALUES (?,?,?,?)"
            " ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns,"
            " size = excluded.size, reason = excluded.reason",
            (path, mtime_ns, size, reason),
        )

    def clear_unreadable(self, path: str) -> None:
        self.execute("DELETE FROM unreadable WHERE path = ?", (path,))

    def update_stat(self, note_id: int, mtime_ns: int, size: int) -> None:
        self.execute(
            "UPDATE notes SET mtime_ns = ?, size = ? WHERE id = ?", (mtime_ns, size, note_id)
        )

    def upsert_note(self, row: NoteRow, note_id: int | None) -> int:
        values = (
            row.path,
            row.title,
            row.title_source,
            row.date,
            row.date_source,
            row.mtime_ns,
            row.size,
            row.hash,
            json.dumps(row.frontmatter, ensure_ascii=False, sort_keys=True),
            json.dumps(row.headings, ensure_ascii=False),
            row.summary,
            row.body,
            row.body_line,
            row.priority,
            row.status,
            int(row.truncated),
        )
        if note_id is None:
            note_id = self._insert_id("notes", NOTE_COLUMNS, values)
        else:
            self._replace_note(note_id, values)
        # A tag (link) repeated under one key is kept as first written, as the SQL
        # `ON CONFLICT DO NOTHING` of one row at a time would keep it.
        tags: dict[tuple[str, str], tuple[Any, ...]] = {}
        for i, (tag, origin) in enumerate(row.tags):
            tags.setdefault((tag.casefold(), origin), (note_id, tag, tag.casefold(), origin, i))
        self.append_rows(
            "tags", ("note_id", "tag", "tag_key", "origin", "position"), list(tags.values())
        )
        links: dict[str, tuple[Any, ...]] = {}
        for target in row.links:
            links.setdefault(target.casefold(), (note_id, target, target.casefold()))
        self.append_rows("links", ("note_id", "target", "target_key"), list(links.values()))
        self._index_text(note_id, row.fts)
        self.insert_sections(note_id, row.sections)
        return note_id

    def _replace_note(self, note_id: int, values: Sequence[Any]) -> None:
        """The note's row gets these values (NOTE_COLUMNS), and loses its derived rows."""
        self.execute(
            "UPDATE notes SET path=?, title=?, title_source=?, date=?, date_source=?,"
            " mtime_ns=?, size=?, hash=?, frontmatter=?, headings=?, summary=?, body=?,"
            " body_line=?, priority=?, status=?, truncated=? WHERE id = ?",
            (*values, note_id),
        )
        self._delete_derived(note_id)

    def _delete_derived(self, note_id: int) -> None:
        self.execute("DELETE FROM tags WHERE note_id = ?", (note_id,))
        self.execute("DELETE FROM links WHERE note_id = ?", (note_id,))
        self._unindex_text(note_id)
        self._delete_sections(note_id)

    def delete_note(self, note_id: int) -> None:
        self._delete_derived(note_id)
        self.execute("DELETE FROM notes WHERE id = ?", (note_id,))

    def note_fields(self, note_id: int) -> tuple[str, dict[str, Any], str, list[str], str, str]:
        """(title, front matter, path, tags, summary, body) as stored, to re-derive old
        terms (lore.derive.fields.note_fts_fields)."""
        rows = self.query(
            "SELECT title, frontmatter, path, summary, body FROM notes WHERE id = ?", (note_id,)
        )
        assert rows, f"note {note_id} vanished inside a transaction"
        title, fm, path, summary, body = rows[0]
        tags = [
            str(tag)
            for (tag,) in self.query(
                "SELECT tag FROM tags WHERE note_id = ? ORDER BY position", (note_id,)
            )
        ]
        return str(title), json.loads(fm), str(path), tags, str(summary), str(body)

    def notes_fields(
        self, note_ids: Sequence[int]
    ) -> dict[int, tuple[str, dict[str, Any], str, list[str], str, str]]:
        """note_fields of each of these notes (those in the index), read together."""
        tags: dict[int, list[str]] = {}
        out: dict[int, tuple[str, dict[str, Any], str, list[str], str, str]] = {}
        for chunk in self.chunks(note_ids):
            among, params = self.in_ids("note_id", chunk)
            for nid, tag in self.query(
                f"SELECT note_id, tag FROM tags WHERE {among} ORDER BY note_id, position", params
            ):
                tags.setdefault(int(nid), []).append(str(tag))
            among, params = self.in_ids("id", chunk)
            for nid, title, fm, path, summary, body in self.query(
                f"SELECT id, title, frontmatter, path, summary, body FROM notes WHERE {among}",
                params,
            ):
                fields = (str(title), json.loads(fm), str(path), tags.get(int(nid), []))
                out[int(nid)] = (*fields, str(summary), str(body))
        return out

    def apply_df(self, delta: dict[str, int]) -> None:
        # in key order: two writers never wait on each other's rows in opposite orders
        changes = sorted((term, n) for term, n in delta.items() if n)
        self.executemany(
            "INSERT INTO term_df(term, df) VALUES (?, ?)"
            " ON CONFLICT(term) DO UPDATE SET df = term_df.df + excluded.df",
            changes,
        )
        if changes:
            self.execute("DELETE FROM term_df WHERE df <= 0")

    def has_notes(self) -> bool:
        return bool(self.query("SELECT 1 FROM notes LIMIT 1"))

    # -- single notes ------------------------------------------------------------------------

    def has_note(self, path: str) -> bool:
        return bool(self.query("SELECT 1 FROM notes WHERE path = ?", [path]))

    def note_record(self, path: str) -> NoteRecord | None:
        from .note_rows import NoteRecord

        rows = self.query(
            "SELECT id, path, title, title_source, date, date_source, frontmatter, headings,"
            " summary, body, body_line, size, hash, truncated FROM notes WHERE path = ?",
            [path],
        )
        if not rows:
            return None
        nid, rel, title, title_source, date, date_source, fm, headings = rows[0][:8]
        summary, body, body_line, size, digest, truncated = rows[0][8:]
        tags = self.query("SELECT tag, origin FROM tags WHERE note_id = ? ORDER BY position", [nid])
        derived = self.query(  # from the text (heuristic, llm): lore.index.semantic
            "SELECT tag, origin FROM derived_tags WHERE note_id = ? ORDER BY origin DESC, position",
            [nid],
        )
        links = self.query("SELECT target FROM links WHERE note_id = ? ORDER BY target", [nid])
        return NoteRecord(
            id=int(nid),
            path=str(rel),
            title=str(title),
            title_source=str(title_source),
            date=date,
            date_source=date_source,
            frontmatter=json.loads(fm),
            headings=json.loads(headings),
            summary=str(summary),
            body=str(body),
            body_line=int(body_line),
            size=int(size),
            hash=str(digest),
            truncated=bool(truncated),
            tags=[(str(t), str(o)) for t, o in tags],
            derived_tags=[(str(t), str(o)) for t, o in derived],
            links=[str(t) for (t,) in links],
        )

    def path_for_id(self, note_id: str) -> str | None:
        """The path of the note whose front matter says `id: <note_id>` (first by path)."""
        if "\x00" in note_id:
            return None  # no indexed text holds a NUL (U+FFFD); PostgreSQL cannot take one
        rows = self.query(
            f"SELECT path FROM notes WHERE {self.FRONTMATTER_ID} = ? ORDER BY path LIMIT 1",
            [note_id],
        )
        return str(rows[0][0]) if rows else None

    def notes_maybe_named(self, name: str) -> list[tuple[str, str, dict[str, Any]]]:
        """(path, title, front matter) of the notes whose title, file name or front matter
        may hold `name` (by path): the candidates the caller matches names against."""
        if "\x00" in name:
            return []  # as in path_for_id
        return [
            (str(path), str(title), json.loads(fm))
            for path, title, fm in self.query(
                f"SELECT path, title, frontmatter FROM notes WHERE {self.MAYBE_NAMED}"
                " ORDER BY path",
                [name, "%" + like_escape(name) + ".m%", name],
            )
        ]

    def all_paths(self) -> list[str]:
        return [str(p) for (p,) in self.query("SELECT path FROM notes ORDER BY path")]

    def truncated_paths(self) -> list[str]:
        return [
            str(p)
            for (p,) in self.query("SELECT path FROM notes WHERE truncated = 1 ORDER BY path")
        ]

    # -- tags, counts, dates -----------------------------------------------------------------

    def tag_counts(self, allow: Sequence[str] | None = None) -> list[tuple[str, int]]:
        """Every tag (as first written, by case-folded key) with how many notes carry it,
        most used first, ties by tag; only the notes `allow` lets through count."""
        where, params = self.allow_sql(allow)
        rows = self.query(
            "SELECT min(t.tag), count(DISTINCT t.note_id) AS k FROM tags t"
            f" JOIN notes n ON n.id = t.note_id WHERE {self.TRUE}{where}"
            " GROUP BY t.tag_key ORDER BY k DESC, t.tag_key",
            params,
        )
        return [(str(tag), int(n)) for tag, n in rows]

    def counts(self, allow: Sequence[str] | None = None) -> dict[str, int]:
        """notes, distinct tags and links of the notes `allow` lets through."""
        where, params = self.allow_sql(allow)
        true = self.TRUE
        notes = self._scalar(f"SELECT count(*) FROM notes n WHERE {true}{where}", params)
        tags = self._scalar(
            "SELECT count(DISTINCT t.tag_key) FROM tags t JOIN notes n ON n.id = t.note_id"
            f" WHERE {true}{where}",
            params,
        )
        links = self._scalar(
            f"SELECT count(*) FROM links l JOIN notes n ON n.id = l.note_id WHERE {true}{where}",
            params,
        )
        return {"notes": int(notes), "tags": int(tags), "links": int(links)}

    def indexed_hash(self, path: str) -> str | None:
        """The content hash the index holds for the note at `path` (None: not indexed)."""
        rows = self.query("SELECT hash FROM notes WHERE path = ?", [path])
        return str(rows[0][0]) if rows else None

    def dated_between(self, since: str, until: str) -> list[tuple[int, str, str, str]]:
        """(id, path, title, date) of notes dated in [since, until], newest first."""
        rows = self.query(
            "SELECT id, path, title, date FROM notes WHERE date >= ? AND date <= ?"
            " ORDER BY date DESC, path",
            [since, until],
        )
        return [(int(i), str(p), str(t), str(d)) for i, p, t, d in rows]

    def newest_date(self, until: str) -> str | None:
        value = self._scalar("SELECT max(date) FROM notes WHERE date <= ?", [until])
        return str(value) if value else None

    def undated_count(self) -> int:
        return int(self.query("SELECT count(*) FROM notes WHERE date IS NULL")[0][0])

    def tags_with_keys(self, note_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
        """note id → its (tag, tag_key) in order."""
        out: dict[int, list[tuple[str, str]]] = {}
        for chunk in self.chunks(note_ids):
            where, params = self.in_ids("note_id", chunk)
            for nid, tag, key in self.query(
                f"SELECT note_id, tag, tag_key FROM tags WHERE {where} ORDER BY note_id, position",
                params,
            ):
                out.setdefault(int(nid), []).append((str(tag), str(key)))
        return out

    # -- capture -----------------------------------------------------------------------------

    def frontmatter_texts(self) -> list[tuple[str, str]]:
        """(path, front matter as stored JSON) of every note, by path."""
        return [
            (str(p), str(f))
            for p, f in self.query("SELECT path, frontmatter FROM notes ORDER BY path")
        ]

    def bodies(self) -> list[tuple[str, str]]:
        """(path, body) of every note, by path."""
        return [
            (str(p), str(b)) for p, b in self.query("SELECT path, body FROM notes ORDER BY path")
        ]
