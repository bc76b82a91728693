"""The agent-memory tables on PostgreSQL (lore.store.memory in PostgreSQL's dialect):
entity cards, aliases, edges, mentions and memory entries. Writes run inside the sync
transaction; reads return plain tuples and dicts; path access rules are applied in the
WHERE clause (as regular expressions of the same globs), never after the fact."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from . import pg_lexical
from .memory import ENTRY_COLUMNS, MEMORY_TABLES
from .pg_base import PgBase
from .pg_notes import allow_sql
from .rows import NoteText

_CHUNK = 500  # notes read per query when texts are streamed
# The primary key's columns (by position) of each table: a later row of one batch with the
# same key replaces an earlier one, as SQLite's INSERT OR REPLACE does.
_KEYS = {
    "entity_defs": (0, 1),
    "entity_aliases": (0, 1, 3),
    "entity_edges": (0, 1),
    "entity_mentions": (0, 1),
    "memory_entries": (0, 1),
}


class PgMemory(PgBase):
    # -- writes (inside the sync transaction) -----------------------------------------------------

    def delete_for(self, note_ids: Iterable[int]) -> None:
        ids = [int(i) for i in note_ids]
        for table in MEMORY_TABLES:
            self.execute(f"DELETE FROM {table} WHERE note_id = ANY(%s)", (ids,))

    def delete_all(self) -> None:
        for table in MEMORY_TABLES:
            self.execute(f"DELETE FROM {table}")

    def delete_mentions(self, note_ids: Iterable[int] | None) -> None:
        if note_ids is None:
            self.execute("DELETE FROM entity_mentions")
        else:
            self.execute(
                "DELETE FROM entity_mentions WHERE note_id = ANY(%s)", ([int(i) for i in note_ids],)
            )

    def insert_rows(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            key = _KEYS[table]
            last = {tuple(row[i] for i in key): row for row in rows}
            marks = ",".join(["%s"] * len(rows[0]))
            self.executemany(f"INSERT INTO {table} VALUES ({marks})", list(last.values()))

    def note_ids(self, paths: Iterable[str] | None) -> list[int]:
        """The ids of the notes at `paths` (every note when None), in path order."""
        if paths is None:
            return [int(r[0]) for r in self.query("SELECT id FROM notes ORDER BY path")]
        rows = self.query(
            "SELECT id FROM notes WHERE path = ANY(%s) ORDER BY path", (sorted(set(paths)),)
        )
        return [int(r[0]) for r in rows]

    def notes_matching(self, phrases: Iterable[str]) -> dict[str, set[int]]:
        """phrase → ids of the notes whose full text holds it (phrases are token streams,
        letters and digits only, so quoting is safe): the full-text index as a prefilter."""
        conn, query = self.lexical(), pg_lexical.LexicalQuery
        return {
            phrase: set(pg_lexical.matching(conn, query((tuple(phrase.split()),))))
            for phrase in phrases
        }

    def note_texts_by_id(self, ids: Sequence[int]) -> Iterator[NoteText]:
        """The stored text of notes by id, in the order given, read a chunk at a time: a first
        sync of a large vault never holds every note's text at once."""
        for start in range(0, len(ids), _CHUNK):
            chunk = [int(i) for i in ids[start : start + _CHUNK]]
            found = {
                int(row[0]): row
                for row in self.query(
                    "SELECT id, path, title, date, frontmatter, body, body_line FROM notes"
                    " WHERE id = ANY(%s)",
                    (chunk,),
                )
            }
            for note_id in chunk:
                if note_id in found:
                    i, p, t, d, fm, b, bl = found[note_id]
                    yield NoteText(int(i), str(p), str(t), d, json.loads(fm), str(b), int(bl))

    # -- reads --------------------------------------------------------------------------------

    def entity_rows(self) -> list[dict[str, Any]]:
        """Every entity definition with its note's path, date and priority, and its aliases."""
        aliases: dict[tuple[int, int], list[str]] = {}
        for note_id, seq, alias in self.query(
            "SELECT note_id, seq, alias FROM entity_aliases WHERE is_name = 0"
            " ORDER BY note_id, seq, position"
        ):
            aliases.setdefault((int(note_id), int(seq)), []).append(str(alias))
        rows = self.query(
            "SELECT d.note_id, d.seq, n.path, n.date, n.priority, d.name, d.name_key, d.type,"
            " d.kind, d.line, d.definition, d.tags, d.last_activity, d.last_activity_raw,"
            " d.status, d.pinned, d.events, d.problems"
            " FROM entity_defs d JOIN notes n ON n.id = d.note_id ORDER BY n.path, d.seq"
        )
        out = []
        for r in rows:
            out.append(
                {
                    "note_id": int(r[0]),
                    "seq": int(r[1]),
                    "path": str(r[2]),
                    "note_date": r[3],
                    "priority": r[4],
                    "name": str(r[5]),
                    "key": str(r[6]),
                    "type": r[7],
                    "kind": str(r[8]),
                    "line": int(r[9]),
                    "definition": str(r[10]),
                    "tags": json.loads(r[11]),
                    "last_activity": r[12],
                    "last_activity_raw": r[13],
                    "status": r[14],
                    "pinned": bool(r[15]),
                    "events": json.loads(r[16]),
                    "problems": json.loads(r[17]),
                    "aliases": aliases.get((int(r[0]), int(r[1])), []),
                }
            )
        return out

    def mentions_of(
        self, entity_key: str, allow: Sequence[str] | None
    ) -> list[tuple[str, str | None, int, int, str]]:
        """(path, date, count, line, title) of the notes mentioning an entity, newest first."""
        where, params = allow_sql(allow)
        return [
            (str(p), d, int(c), int(ln), str(t))
            for p, d, c, ln, t in self.query(
                "SELECT n.path, n.date, m.count, m.line, n.title FROM entity_mentions m"
                " JOIN notes n ON n.id = m.note_id WHERE m.entity_key = %s"
                f"{where} ORDER BY n.date IS NULL, n.date DESC, n.path",
                [entity_key, *params],
            )
        ]

    def latest_mentions(
        self, allow: Sequence[str] | None, until: str
    ) -> dict[str, tuple[str, str, int]]:
        """entity key → (latest date, path, line) over the notes that mention it and carry a
        date of their own (front matter or file name: a file's mtime is not a dated mention),
        up to `until`."""
        where, params = allow_sql(allow)
        out: dict[str, tuple[str, str, int]] = {}
        for key, date, path, line in self.query(
            "SELECT m.entity_key, n.date, n.path, m.line FROM entity_mentions m"
            " JOIN notes n ON n.id = m.note_id WHERE n.date <= %s"
            " AND n.date_source IN ('frontmatter', 'filename')"
            f"{where} ORDER BY m.entity_key, n.date DESC, n.path",
            [until, *params],
        ):
            out.setdefault(str(key), (str(date), str(path), int(line)))
        return out

    def mention_totals(self, allow: Sequence[str] | None) -> dict[str, tuple[int, int]]:
        """entity key → (notes mentioning it, mentions in all)."""
        where, params = allow_sql(allow)
        return {
            str(k): (int(n), int(c))
            for k, n, c in self.query(
                "SELECT m.entity_key, count(*), sum(m.count) FROM entity_mentions m"
                f" JOIN notes n ON n.id = m.note_id WHERE true{where} GROUP BY m.entity_key",
                params,
            )
        }

    def edges(self, allow: Sequence[str] | None) -> list[dict[str, Any]]:
        where, params = allow_sql(allow)
        return [
            {
                "path": str(p),
                "source": str(s),
                "relation": str(r),
                "target": str(t),
                "target_key": str(k),
                "line": int(ln),
                "kind": str(kd),
            }
            for p, s, r, t, k, ln, kd in self.query(
                "SELECT n.path, e.source, e.relation, e.target, e.target_key, e.line, e.kind"
                f" FROM entity_edges e JOIN notes n ON n.id = e.note_id WHERE true{where}"
                " ORDER BY n.path, e.seq",
                params,
            )
        ]

    def note_keys(self, allow: Sequence[str] | None) -> list[tuple[str, str, str]]:
        """(path, title, date) of every note the rules allow: what a link may resolve to."""
        where, params = allow_sql(allow)
        return [
            (str(p), str(t), d)
            for p, t, d in self.query(
                f"SELECT n.path, n.title, n.date FROM notes n WHERE true{where} ORDER BY n.path",
                params,
            )
        ]

    def entries(
        self,
        allow: Sequence[str] | None,
        *,
        kinds: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
        since: str | None = None,
    ) -> list[dict[str, Any]]:
        """Memory entries (daily-note sections and items, core-file lines), by path and order."""
        where, params = allow_sql(allow)
        if kinds:
            where += " AND e.kind = ANY(%s)"
            params.append(list(kinds))
        if paths is not None:
            if not paths:
                return []
            where += " AND n.path = ANY(%s)"
            params.append(list(paths))
        if since:
            where += " AND e.date >= %s"
            params.append(since)
        cols = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
        out = []
        for row in self.query(
            f"SELECT n.path, n.priority, n.frontmatter, {cols} FROM memory_entries e"
            f" JOIN notes n ON n.id = e.note_id WHERE true{where} ORDER BY n.path, e.seq",
            params,
        ):
            item = dict(zip(ENTRY_COLUMNS, row[3:], strict=True))
            item["entities"] = json.loads(item["entities"])
            item["path"] = str(row[0])
            item["priority"] = row[1]
            item["pinned"] = json.loads(row[2]).get("pinned") is True
            out.append(item)
        return out

    def dated_notes(
        self, allow: Sequence[str] | None, since: str, until: str
    ) -> list[tuple[str, str, str, int | None, bool]]:
        """(path, title, date, priority, pinned) of notes dated in [since, until], newest first."""
        where, params = allow_sql(allow)
        return [
            (str(p), str(t), str(d), pr, json.loads(fm).get("pinned") is True)
            for p, t, d, pr, fm in self.query(
                "SELECT n.path, n.title, n.date, n.priority, n.frontmatter FROM notes n"
                f" WHERE n.date >= %s AND n.date <= %s{where} ORDER BY n.date DESC, n.path",
                [since, until, *params],
            )
        ]

    def note_bodies(self, paths: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        """path → (body, body_line, headings JSON) for the given paths."""
        out: dict[str, tuple[str, int, str]] = {}
        for p, b, bl, h in self.query(
            "SELECT path, body, body_line, headings FROM notes WHERE path = ANY(%s)",
            (sorted(set(paths)),),
        ):
            out[str(p)] = (str(b), int(bl), str(h))
        return out
