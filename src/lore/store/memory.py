"""SQL for the agent-memory tables (schema m002_memory). Writes run inside the sync
transaction; reads return plain tuples and dicts. Path access rules arrive here as SQLite
GLOB patterns and are applied in the WHERE clause, never after the fact."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .rows import NoteText
from .sqlite_base import SqliteBase

# Notes read per query when texts are streamed (and the SQLite variable limit's share).
_CHUNK = 500
MEMORY_TABLES = (
    "entity_defs",
    "entity_aliases",
    "entity_edges",
    "entity_mentions",
    "memory_entries",
)


def allow_sql(allow: Sequence[str] | None, column: str = "n.path") -> tuple[str, list[Any]]:
    """' AND (path GLOB ? OR ...)' for a principal's rules; '' for no rules at all (the
    owner). An empty rule list allows nothing."""
    if allow is None:
        return "", []
    if not allow:
        return " AND 0", []
    return " AND (" + " OR ".join(f"{column} GLOB ?" for _ in allow) + ")", list(allow)


ENTRY_COLUMNS = (
    "kind",
    "anchor",
    "heading",
    "line",
    "end_line",
    "text_line",
    "date",
    "time",
    "status",
    "trust",
    "source",
    "target",
    "entities",
    "text",
)


class MemorySql(SqliteBase):
    # -- writes (inside the sync transaction) -----------------------------------------------------

    def delete_for(self, note_ids: Iterable[int]) -> None:
        rows = [(int(i),) for i in note_ids]
        for table in MEMORY_TABLES:
            self.db.executemany(f"DELETE FROM {table} WHERE note_id = ?", rows)

    def delete_all(self) -> None:
        for table in MEMORY_TABLES:
            self.db.execute(f"DELETE FROM {table}")

    def delete_mentions(self, note_ids: Iterable[int] | None) -> None:
        if note_ids is None:
            self.db.execute("DELETE FROM entity_mentions")
        else:
            self.db.executemany(
                "DELETE FROM entity_mentions WHERE note_id = ?", [(int(i),) for i in note_ids]
            )

    def insert_rows(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            marks = ",".join("?" * len(rows[0]))
            self.db.executemany(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", rows)

    def note_ids(self, paths: Iterable[str] | None) -> list[int]:
        """The ids of the notes at `paths` (every note when None), in path order."""
        if paths is None:
            return [int(r[0]) for r in self.query("SELECT id FROM notes ORDER BY path")]
        wanted = sorted(set(paths))
        rows: list[tuple[Any, ...]] = []
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows += self.query(f"SELECT id, path FROM notes WHERE path IN ({marks})", chunk)
        return [int(r[0]) for r in sorted(rows, key=lambda r: str(r[1]))]

    def notes_matching(self, phrases: Iterable[str]) -> dict[str, set[int]]:
        """phrase → ids of the notes whose full text holds it (phrases are token streams,
        letters and digits only, so quoting is safe): the full-text index as a prefilter."""
        return {
            phrase: {
                int(r[0])
                for r in self.query("SELECT rowid FROM fts WHERE fts MATCH ?", [f'"{phrase}"'])
            }
            for phrase in phrases
        }

    def note_texts_by_id(self, ids: Sequence[int]) -> Iterator[NoteText]:
        """The stored text of notes by id, in the order given, read a chunk at a time: a first
        sync of a large vault never holds every note's text at once."""
        for start in range(0, len(ids), _CHUNK):
            chunk = [int(i) for i in ids[start : start + _CHUNK]]
            marks = ",".join("?" * len(chunk))
            found = {
                int(row[0]): row
                for row in self.query(
                    "SELECT id, path, title, date, frontmatter, body, body_line FROM notes"
                    f" WHERE id IN ({marks})",
                    chunk,
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
            # CROSS JOIN: walk the (small) definitions table, never every note.
            " FROM entity_defs d CROSS JOIN notes n ON n.id = d.note_id ORDER BY n.path, d.seq"
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
                " JOIN notes n ON n.id = m.note_id WHERE m.entity_key = ?"
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
            " JOIN notes n ON n.id = m.note_id WHERE n.date <= ?"
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
                f" JOIN notes n ON n.id = m.note_id WHERE 1{where} GROUP BY m.entity_key",
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
                f" FROM entity_edges e CROSS JOIN notes n ON n.id = e.note_id WHERE 1{where}"
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
                f"SELECT n.path, n.title, n.date FROM notes n WHERE 1{where} ORDER BY n.path",
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
            where += f" AND e.kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        if paths is not None:
            if not paths:
                return []
            where += f" AND n.path IN ({','.join('?' * len(paths))})"
            params += list(paths)
        if since:
            where += " AND e.date >= ?"
            params.append(since)
        cols = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
        # Given paths, find those notes first; else walk the entries, never every note.
        join = "JOIN" if paths is not None else "CROSS JOIN"
        out = []
        for row in self.query(
            f"SELECT n.path, n.priority, n.frontmatter, {cols} FROM memory_entries e"
            f" {join} notes n ON n.id = e.note_id WHERE 1{where} ORDER BY n.path, e.seq",
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
                f" WHERE n.date >= ? AND n.date <= ?{where} ORDER BY n.date DESC, n.path",
                [since, until, *params],
            )
        ]

    def note_bodies(self, paths: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        """path → (body, body_line, headings JSON) for the given paths."""
        out: dict[str, tuple[str, int, str]] = {}
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for p, b, bl, h in self.query(
                f"SELECT path, body, body_line, headings FROM notes WHERE path IN ({marks})", chunk
            ):
                out[str(p)] = (str(b), int(bl), str(h))
        return out
