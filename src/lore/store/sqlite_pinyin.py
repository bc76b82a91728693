"""The pinyin of note names and tags in SQLite (schema m008_pinyin; lore.derive.pinyin says
what a row holds): one row per name with its units, and the candidate keys a query word is
looked up by as a prefix. Writes run inside the sync transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

from .query import Filters
from .rows import NameSource, PinyinName
from .sqlite_base import SqliteBase, chunks, marks
from .sqlite_search import allow_clause, filter_sql

# A key is lower-case ASCII letters: every key that starts with a word lies in [word, word+"{").
_AFTER_Z = "{"


class PinyinSql(SqliteBase):
    def pinyin_sources(self, ids: Sequence[int] | None) -> Iterator[NameSource]:
        """The names of these notes (every note when None), by id, a chunk at a time."""
        if ids is None:
            ids = [int(r[0]) for r in self.query("SELECT id FROM notes ORDER BY id")]
        for chunk in chunks([int(i) for i in ids]):
            tags = self._by_note("SELECT note_id, tag FROM tags", "position", chunk)
            entities = self._by_note(
                "SELECT note_id, alias FROM entity_aliases", "seq, position", chunk
            )
            for nid, title, fm, path in self.query(
                f"SELECT id, title, frontmatter, path FROM notes WHERE id IN ({marks(chunk)})"
                " ORDER BY id",
                chunk,
            ):
                n = int(nid)
                yield NameSource(
                    n, str(title), json.loads(fm), str(path), tags.get(n, []), entities.get(n, [])
                )

    def _by_note(self, select: str, order: str, ids: Sequence[int]) -> dict[int, list[str]]:
        """note id → the values of `select` (note_id, value) for these notes, in order."""
        out: dict[int, list[str]] = {}
        for nid, value in self.query(
            f"{select} WHERE note_id IN ({marks(ids)}) ORDER BY note_id, {order}", ids
        ):
            out.setdefault(int(nid), []).append(str(value))
        return out

    def clear_pinyin(self, note_ids: Iterable[int] | None) -> None:
        """Drop the pinyin rows of these notes (of every note when None)."""
        if note_ids is None:
            self.db.execute("DELETE FROM name_pinyin; DELETE FROM pinyin_keys;")
            return
        rows = [(int(i),) for i in note_ids]
        self.db.executemany("DELETE FROM name_pinyin WHERE note_id = ?", rows)
        self.db.executemany("DELETE FROM pinyin_keys WHERE note_id = ?", rows)

    def add_pinyin(self, note_id: int, names: Sequence[PinyinName], keys: Iterable[str]) -> None:
        """A note's names in order and its candidate keys."""
        self.db.executemany(
            "INSERT INTO name_pinyin(note_id, seq, kind, name, units) VALUES (?,?,?,?,?)",
            [(note_id, seq, n.kind, n.name, n.units) for seq, n in enumerate(names)],
        )
        self.db.executemany(
            "INSERT OR IGNORE INTO pinyin_keys(key, note_id) VALUES (?, ?)",
            [(key, note_id) for key in sorted(keys)],
        )

    def pinyin_candidates(self, words: Sequence[str], filters: Filters, limit: int) -> list[int]:
        """Up to `limit` notes per word with a key that starts with the word, that pass the
        filters (in the order the words bring them)."""
        where, params = filter_sql(filters)
        found: dict[int, None] = {}
        for word in words:
            for (nid,) in self.query(
                "SELECT DISTINCT k.note_id FROM pinyin_keys k JOIN notes n ON n.id = k.note_id"
                f" WHERE k.key >= ? AND k.key < ?{where} LIMIT ?",
                [word, word + _AFTER_Z, *params, limit],
            ):
                found.setdefault(int(nid))
        return list(found)

    def pinyin_names(self, ids: Sequence[int]) -> dict[int, list[PinyinName]]:
        """note id → its names with their units, in order."""
        out: dict[int, list[PinyinName]] = {}
        for chunk in chunks([int(i) for i in ids]):
            for nid, kind, name, units in self.query(
                f"SELECT note_id, kind, name, units FROM name_pinyin WHERE note_id IN"
                f" ({marks(chunk)}) ORDER BY note_id, seq",
                chunk,
            ):
                out.setdefault(int(nid), []).append(PinyinName(str(kind), str(name), str(units)))
        return out

    def pinyin_name_count(self, allow: Sequence[str] | None = None) -> int:
        """Names and tags with pinyin (a name spelled two ways counts once) of the notes
        `allow` lets through (None: every note)."""
        sql = "SELECT DISTINCT p.note_id, p.kind, p.name FROM name_pinyin p"
        params: list[str] = []
        if allow is not None:
            sql += f" JOIN notes n ON n.id = p.note_id WHERE {allow_clause(list(allow))}"
            params = list(allow)
        return int(self.query(f"SELECT count(*) FROM ({sql})", params)[0][0])
