"""SQL for the agent-memory tables (schema m002_memory), on both backends (lore.store.sql_base):
entity cards, aliases, edges, mentions and memory entries. Writes run inside the sync
transaction; reads return plain tuples and dicts. Path access rules are applied in the WHERE
clause (`allow_sql`), never after the fact. Each backend adds how a batch of rows replaces
rows with the same key and how the full-text index finds a phrase (sqlite_memory,
pg_memory)."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any

from .sql_base import SqlBase

if TYPE_CHECKING:  # made where it is read (lore.store.rows)
    from .note_rows import NoteText

# Notes read per query when texts are streamed: a first sync never holds every text at once.
_CHUNK = 500
MEMORY_TABLES = (
    "entity_defs",
    "entity_aliases",
    "entity_edges",
    "entity_mentions",
    "memory_entries",
)


Allow = Sequence[str] | None  # access globs (None: the owner, every note)
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


class MemorySql(SqlBase):
    # -- writes (inside the sync transaction) -----------------------------------------------------

    def delete_for(self, note_ids: Iterable[int]) -> None:
        ids = [int(i) for i in note_ids]
        for table in MEMORY_TABLES:
            for chunk in self.chunks(ids):
                where, params = self.in_list("note_id", chunk)
                self.execute(f"DELETE FROM {table} WHERE {where}", params)

    def delete_all(self) -> None:
        self.empty_tables(*MEMORY_TABLES)

    def delete_mentions(self, note_ids: Iterable[int] | None) -> None:
        if note_ids is None:
            self.empty_tables("entity_mentions")
            return
        for chunk in self.chunks([int(i) for i in note_ids]):
            where, params = self.in_list("note_id", chunk)
            self.execute(f"DELETE FROM entity_mentions WHERE {where}", params)

    def note_ids(self, paths: Iterable[str] | None) -> Sequence[int]:
        every = array("q")  # a million notes: 8 MB of ids, never a row object each
        if paths is None:
            for page in self.note_id_pages(by_path=True):
                every.extend(page)
            return every
        # Chunks of the sorted paths, each in the database's order of paths, which is
        # Python's (code points, on both backends): the ids alone, in path order. Reading
        # (id, path) rows and sorting them peaked at 17 MB for 100,000 notes (3 MB now).
        for chunk in self.chunks([path for path, _same in groupby(sorted(paths))]):
            where, params = self.in_list("path", chunk)
            sql = f"SELECT id FROM notes WHERE {where} ORDER BY path"
            every.extend(int(row[0]) for row in self.query(sql, params))
        return every

    def note_texts_by_id(self, ids: Sequence[int]) -> Iterator[NoteText]:
        from .note_rows import NoteText

        for chunk in self.chunks(ids, _CHUNK):  # not copied whole: a million ids in a sync
            where, params = self.in_ids("id", chunk)
            found = {
                int(row[0]): row
                for row in self.query(
                    "SELECT id, path, title, date, frontmatter, body, body_line FROM notes"
                    f" WHERE {where}",
                    params,
                )
            }
            for note_id in chunk:
                if note_id in found:
                    i, p, t, d, fm, b, bl = found[note_id]
                    yield NoteText(int(i), str(p), str(t), d, json.loads(fm), str(b), int(bl))

    # -- reads --------------------------------------------------------------------------------

    def entity_rows(self) -> list[dict[str, Any]]:
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
            # walk the (small) definitions table, never every note
            f" FROM entity_defs d {self.DRIVING_JOIN} notes n ON n.id = d.note_id"
            " ORDER BY n.path, d.seq"
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
        self, entity_key: str, allow: Allow
    ) -> list[tuple[str, str | None, int, int, str]]:
        where, params = self.allow_sql(allow)
        return [
            (str(p), d, int(c), int(ln), str(t))
            for p, d, c, ln, t in self.query(
                "SELECT n.path, n.date, m.count, m.line, n.title FROM entity_mentions m"
                " JOIN notes n ON n.id = m.note_id WHERE m.entity_key = ?"
                f"{where} ORDER BY n.date IS NULL, n.date DESC, n.path",
                [entity_key, *params],
            )
        ]

    def latest_mentions(self, allow: Allow, until: str) -> dict[str, tuple[str, str, int]]:
        where, params = self.allow_sql(allow)
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

    def mention_totals(self, allow: Allow) -> dict[str, tuple[int, int]]:
        where, params = self.allow_sql(allow)
        return {
            str(k): (int(n), int(c))
            for k, n, c in self.query(
                "SELECT m.entity_key, count(*), sum(m.count) FROM entity_mentions m"
                f" JOIN notes n ON n.id = m.note_id WHERE {self.TRUE}{where}"
                " GROUP BY m.entity_key",
                params,
            )
        }

    def edges(self, allow: Allow) -> list[dict[str, Any]]:
        where, params = self.allow_sql(allow)
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
                f" FROM entity_edges e {self.DRIVING_JOIN} notes n ON n.id = e.note_id"
                f" WHERE {self.TRUE}{where} ORDER BY n.path, e.seq",
                params,
            )
        ]

    def note_keys(self, allow: Allow) -> list[tuple[str, str, str]]:
        where, params = self.allow_sql(allow)
        return [
            (str(p), str(t), d)
            for p, t, d in self.query(
                f"SELECT n.path, n.title, n.date FROM notes n WHERE {self.TRUE}{where}"
                " ORDER BY n.path",
                params,
            )
        ]

    def entries(
        self, allow: Allow, *, kinds: Allow = None, paths: Allow = None, since: str | None = None
    ) -> list[dict[str, Any]]:
        where, params = self.allow_sql(allow)
        if kinds:
            clause, values = self.in_list("e.kind", kinds)
            where += f" AND {clause}"
            params += values
        if paths is not None:
            if not paths:
                return []
            clause, values = self.in_list("n.path", paths)
            where += f" AND {clause}"
            params += values
        if since:
            where += " AND e.date >= ?"
            params.append(since)
        cols = ", ".join(f"e.{c}" for c in ENTRY_COLUMNS)
        # Given paths, find those notes first; else walk the entries, never every note.
        join = "JOIN" if paths is not None else self.DRIVING_JOIN
        out = []
        for row in self.query(
            f"SELECT n.path, n.priority, n.frontmatter, {cols} FROM memory_entries e"
            f" {join} notes n ON n.id = e.note_id WHERE {self.TRUE}{where} ORDER BY n.path, e.seq",
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
        self, allow: Allow, since: str, until: str
    ) -> list[tuple[str, str, str, int | None, bool]]:
        where, params = self.allow_sql(allow)
        return [
            (str(p), str(t), str(d), pr, json.loads(fm).get("pinned") is True)
            for p, t, d, pr, fm in self.query(
                "SELECT n.path, n.title, n.date, n.priority, n.frontmatter FROM notes n"
                f" WHERE n.date >= ? AND n.date <= ?{where} ORDER BY n.date DESC, n.path",
                [since, until, *params],
            )
        ]

    def note_bodies(self, paths: Sequence[str]) -> dict[str, tuple[str, int, str]]:
        out: dict[str, tuple[str, int, str]] = {}
        for chunk in self.chunks(sorted(set(paths))):
            where, params = self.in_list("path", chunk)
            for p, b, bl, h in self.query(
                f"SELECT path, body, body_line, headings FROM notes WHERE {where}", params
            ):
                out[str(p)] = (str(b), int(bl), str(h))
        return out
