"""The notes on PostgreSQL and what the sync writes for them (one transaction,
lore.index.sync), and the reads of single notes, names, tags and dates: the statements of
lore.store.sqlite_notes in PostgreSQL's dialect. The full-text rows of a note are written
by lore.store.pg_postings from the token streams the sync gives."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import pg_postings
from .pg_base import PgBase
from .pg_schema import PARTS
from .rows import NoteRecord, NoteRow, StoredStat, Unreadable

AUTHOR_CATEGORY = (
    "CASE WHEN jsonb_typeof(n.frontmatter::jsonb -> 'category') = 'string'"
    " THEN trim(n.frontmatter::jsonb ->> 'category') END"
)


def allow_sql(allow: Sequence[str] | None, column: str = "n.path") -> tuple[str, list[Any]]:
    """' AND (path ~ ... OR ...)' for a principal's globs; '' for no rules (the owner). An
    empty rule list allows nothing."""
    from .pg_search import glob_regex

    if allow is None:
        return "", []
    if not allow:
        return " AND false", []
    return " AND (" + " OR ".join(f"{column} ~ %s" for _ in allow) + ")", [
        glob_regex(g) for g in allow
    ]


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class PgNotes(PgBase):
    # -- what the sync writes (call inside transaction()) -----------------------------------

    def stored_stats(self) -> dict[str, StoredStat]:
        return {
            str(path): StoredStat(int(nid), int(mtime), int(size), str(digest), date_source)
            for nid, path, mtime, size, digest, date_source in self.query(
                "SELECT id, path, mtime_ns, size, hash, date_source FROM notes"
            )
        }

    def unreadable(self) -> dict[str, Unreadable]:
        return {
            str(path): Unreadable(int(mtime), int(size), str(reason))
            for path, mtime, size, reason in self.query(
                "SELECT path, mtime_ns, size, reason FROM unreadable"
            )
        }

    def mark_unreadable(self, path: str, mtime_ns: int, size: int, reason: str) -> None:
        self.execute(
            "INSERT INTO unreadable(path, mtime_ns, size, reason) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns,"
            " size = excluded.size, reason = excluded.reason",
            (path, mtime_ns, size, reason),
        )

    def clear_unreadable(self, path: str) -> None:
        self.execute("DELETE FROM unreadable WHERE path = %s", (path,))

    def reinsert_fts(self, note_id: int, fields: tuple[str, str, str, str]) -> None:
        pg_postings.delete_notes(self.conn, [note_id], self._pending)
        pg_postings.write_notes(self.conn, [(note_id, fields)], self._pending)
        self._statements += 1

    def clear_search_index(self) -> None:
        """Empty the full-text index and the document frequencies (rebuild re-fills them),
        and drop tag and link rows that belong to no note (rebuild re-derives the rest)."""
        self._pending, self._part_pending = pg_postings.Pending(), pg_postings.Pending()
        for sql in (
            "TRUNCATE lex_postings, lex_docs, lex_terms, term_df",
            "UPDATE lex_stats SET docs = 0, tokens = 0",
            "TRUNCATE sections, part_postings, part_docs, part_terms",
            "UPDATE part_stats SET docs = 0, tokens = 0",
            "DELETE FROM tags WHERE note_id NOT IN (SELECT id FROM notes)",
            "DELETE FROM links WHERE note_id NOT IN (SELECT id FROM notes)",
        ):
            self.execute(sql)

    def update_stat(self, note_id: int, mtime_ns: int, size: int) -> None:
        self.execute(
            "UPDATE notes SET mtime_ns = %s, size = %s WHERE id = %s", (mtime_ns, size, note_id)
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
            found = self.query(
                "INSERT INTO notes(path, title, title_source, date, date_source, mtime_ns, size,"
                " hash, frontmatter, headings, summary, body, body_line, priority, status,"
                " truncated) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
                " RETURNING id",
                values,
            )
            note_id = int(found[0][0])
            self._statements += 1
        else:
            self.execute(
                "UPDATE notes SET path=%s, title=%s, title_source=%s, date=%s, date_source=%s,"
                " mtime_ns=%s, size=%s, hash=%s, frontmatter=%s, headings=%s, summary=%s,"
                " body=%s, body_line=%s, priority=%s, status=%s, truncated=%s WHERE id = %s",
                (*values, note_id),
            )
            self._delete_derived(note_id)
        self.executemany(
            "INSERT INTO tags(note_id, tag, tag_key, origin, position) VALUES (%s,%s,%s,%s,%s)"
            " ON CONFLICT DO NOTHING",
            [(note_id, tag, tag.casefold(), origin, i) for i, (tag, origin) in enumerate(row.tags)],
        )
        self.executemany(
            "INSERT INTO links(note_id, target, target_key) VALUES (%s,%s,%s)"
            " ON CONFLICT DO NOTHING",
            [(note_id, target, target.casefold()) for target in row.links],
        )
        pg_postings.write_notes(self.conn, [(note_id, row.fts)], self._pending)
        self.insert_sections(note_id, row.sections)
        return note_id

    def insert_sections(self, note_id: int, sections: list[tuple[int, int, str]]) -> None:
        """The note's body parts (lore.derive.sections), indexed as PARTS documents. Part
        ids are taken in order, as SQLite's rowids are: ties between parts go by them."""
        if not sections:
            return
        ids = sorted(
            int(r[0])
            for r in self.query(
                "SELECT nextval(pg_get_serial_sequence('sections', 'id'))"
                " FROM generate_series(1, %s)",
                (len(sections),),
            )
        )
        self.executemany(
            'INSERT INTO sections(id, note_id, start, "end") VALUES (%s, %s, %s, %s)',
            [
                (pid, note_id, start, end)
                for pid, (start, end, _t) in zip(ids, sections, strict=True)
            ],
        )
        parts = [(pid, (tokens,)) for pid, (_s, _e, tokens) in zip(ids, sections, strict=True)]
        pg_postings.write_notes(self.conn, parts, self._part_pending, PARTS)

    def _delete_sections(self, note_id: int) -> None:
        ids = [
            int(r[0])
            for r in self.query("DELETE FROM sections WHERE note_id = %s RETURNING id", (note_id,))
        ]
        pg_postings.delete_notes(self.conn, ids, self._part_pending, PARTS)

    def _delete_derived(self, note_id: int) -> None:
        self.execute("DELETE FROM tags WHERE note_id = %s", (note_id,))
        self.execute("DELETE FROM links WHERE note_id = %s", (note_id,))
        pg_postings.delete_notes(self.conn, [note_id], self._pending)
        self._delete_sections(note_id)

    def delete_note(self, note_id: int) -> None:
        self._delete_derived(note_id)
        self.execute("DELETE FROM notes WHERE id = %s", (note_id,))

    def note_fields(self, note_id: int) -> tuple[str, dict[str, Any], str, list[str], str, str]:
        """(title, front matter, path, tags, summary, body) as stored, to re-derive old
        terms (lore.derive.fields.note_fts_fields)."""
        rows = self.query(
            "SELECT title, frontmatter, path, summary, body FROM notes WHERE id = %s", (note_id,)
        )
        assert rows, f"note {note_id} vanished inside a transaction"
        title, fm, path, summary, body = rows[0]
        tags = [
            str(tag)
            for (tag,) in self.query(
                "SELECT tag FROM tags WHERE note_id = %s ORDER BY position", (note_id,)
            )
        ]
        return str(title), json.loads(fm), str(path), tags, str(summary), str(body)

    def apply_df(self, delta: dict[str, int]) -> None:
        changes = sorted((term, n) for term, n in delta.items() if n)
        self.executemany(
            "INSERT INTO term_df(term, df) VALUES (%s, %s)"
            " ON CONFLICT(term) DO UPDATE SET df = term_df.df + excluded.df",
            changes,
        )
        if changes:
            self.execute("DELETE FROM term_df WHERE df <= 0")

    def has_notes(self) -> bool:
        return bool(self.query("SELECT 1 FROM notes LIMIT 1"))

    # -- single notes ------------------------------------------------------------------------

    def has_note(self, path: str) -> bool:
        return bool(self.query("SELECT 1 FROM notes WHERE path = %s", (path,)))

    def note_record(self, path: str) -> NoteRecord | None:
        rows = self.query(
            "SELECT id, path, title, title_source, date, date_source, frontmatter, headings,"
            " summary, body, body_line, size, hash, truncated FROM notes WHERE path = %s",
            (path,),
        )
        if not rows:
            return None
        nid, rel, title, title_source, date, date_source, fm, headings = rows[0][:8]
        summary, body, body_line, size, digest, truncated = rows[0][8:]
        tags = self.query(
            "SELECT tag, origin FROM tags WHERE note_id = %s ORDER BY position", (nid,)
        )
        derived = self.query(
            "SELECT tag, origin FROM derived_tags WHERE note_id = %s"
            " ORDER BY origin DESC, position",
            (nid,),
        )
        links = self.query("SELECT target FROM links WHERE note_id = %s ORDER BY target", (nid,))
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
        rows = self.query(
            "SELECT path FROM notes WHERE frontmatter::jsonb ->> 'id' = %s ORDER BY path LIMIT 1",
            (note_id,),
        )
        return str(rows[0][0]) if rows else None

    def notes_maybe_named(self, name: str) -> list[tuple[str, str, dict[str, Any]]]:
        """(path, title, front matter) of the notes whose title, file name or front matter
        may hold `name` (by path): the candidates the caller matches names against."""
        return [
            (str(path), str(title), json.loads(fm))
            for path, title, fm in self.query(
                "SELECT path, title, frontmatter FROM notes WHERE lower(title) = lower(%s)"
                " OR path ILIKE %s OR strpos(lower(frontmatter), lower(%s)) > 0 ORDER BY path",
                (name, "%" + _like_escape(name) + ".m%", name),
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
        where, params = allow_sql(allow)
        rows = self.query(
            "SELECT min(t.tag), count(DISTINCT t.note_id) AS k FROM tags t"
            f" JOIN notes n ON n.id = t.note_id WHERE true{where}"
            " GROUP BY t.tag_key ORDER BY k DESC, t.tag_key",
            params,
        )
        return [(str(tag), int(n)) for tag, n in rows]

    def counts(self, allow: Sequence[str] | None = None) -> dict[str, int]:
        """notes, distinct tags and links of the notes `allow` lets through."""
        where, params = allow_sql(allow)
        notes = self._scalar(f"SELECT count(*) FROM notes n WHERE true{where}", params)
        tags = self._scalar(
            "SELECT count(DISTINCT t.tag_key) FROM tags t JOIN notes n ON n.id = t.note_id"
            f" WHERE true{where}",
            params,
        )
        links = self._scalar(
            f"SELECT count(*) FROM links l JOIN notes n ON n.id = l.note_id WHERE true{where}",
            params,
        )
        return {"notes": int(notes), "tags": int(tags), "links": int(links)}

    def indexed_hash(self, path: str) -> str | None:
        """The content hash the index holds for the note at `path` (None: not indexed)."""
        rows = self.query("SELECT hash FROM notes WHERE path = %s", (path,))
        return str(rows[0][0]) if rows else None

    def dated_between(self, since: str, until: str) -> list[tuple[int, str, str, str]]:
        """(id, path, title, date) of notes dated in [since, until], newest first."""
        rows = self.query(
            "SELECT id, path, title, date FROM notes WHERE date >= %s AND date <= %s"
            " ORDER BY date DESC, path",
            (since, until),
        )
        return [(int(i), str(p), str(t), str(d)) for i, p, t, d in rows]

    def newest_date(self, until: str) -> str | None:
        value = self._scalar("SELECT max(date) FROM notes WHERE date <= %s", (until,))
        return str(value) if value else None

    def undated_count(self) -> int:
        return int(self._scalar("SELECT count(*) FROM notes WHERE date IS NULL"))

    def tags_with_keys(self, note_ids: list[int]) -> dict[int, list[tuple[str, str]]]:
        """note id → its (tag, tag_key) in order."""
        out: dict[int, list[tuple[str, str]]] = {}
        for nid, tag, key in self.query(
            "SELECT note_id, tag, tag_key FROM tags WHERE note_id = ANY(%s)"
            " ORDER BY note_id, position",
            (list(note_ids),),
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
