"""The pinyin of note names and tags (schema m008_pinyin on SQLite, pg_schema's m002_pinyin
on PostgreSQL; lore.derive.pinyin says what a row holds): one row per name with its units,
and the candidate keys a query word is looked up by as a prefix. The same statements on
both backends (lore.store.sql_base); writes run inside the sync transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from .query import Filters
from .rows import PinyinName
from .sql_base import SqlBase

if TYPE_CHECKING:  # made where it is read (lore.store.rows)
    from .note_rows import NameSource

# A key is lower-case ASCII letters: every key that starts with a word lies in [word, word+"{").
_AFTER_Z = "{"


class PinyinSql(SqlBase):
    def pinyin_sources(self, ids: Sequence[int] | None) -> Iterator[NameSource]:
        """The names of these notes (every note when None), by id, a chunk at a time."""
        from .note_rows import NameSource

        pages = self.note_id_pages(by_path=False) if ids is None else [[int(i) for i in ids]]
        for chunk in (chunk for page in pages for chunk in self.chunks(page)):
            tags = self._by_note("SELECT note_id, tag FROM tags", "position", chunk)
            entities = self._by_note(
                "SELECT note_id, alias FROM entity_aliases", "seq, position", chunk
            )
            among, params = self.in_ids("id", chunk)
            for nid, title, fm, path in self.query(
                f"SELECT id, title, frontmatter, path FROM notes WHERE {among} ORDER BY id", params
            ):
                n = int(nid)
                yield NameSource(
                    n, str(title), json.loads(fm), str(path), tags.get(n, []), entities.get(n, [])
                )

    def _by_note(self, select: str, order: str, ids: Sequence[int]) -> dict[int, list[str]]:
        """note id → the values of `select` (note_id, value) for these notes, in order."""
        out: dict[int, list[str]] = {}
        among, params = self.in_ids("note_id", ids)
        for nid, value in self.query(f"{select} WHERE {among} ORDER BY note_id, {order}", params):
            out.setdefault(int(nid), []).append(str(value))
        return out

    def clear_pinyin(self, note_ids: Iterable[int] | None) -> None:
        """Drop the pinyin rows of these notes (of every note when None)."""
        if note_ids is None:
            self.empty_tables("name_pinyin", "pinyin_keys")
            return
        for chunk in self.chunks([int(i) for i in note_ids]):
            among, params = self.in_ids("note_id", chunk)
            self.execute(f"DELETE FROM name_pinyin WHERE {among}", params)
            self.execute(f"DELETE FROM pinyin_keys WHERE {among}", params)

    def add_pinyin(self, note_id: int, names: Sequence[PinyinName], keys: Iterable[str]) -> None:
        """A note's names in order and its candidate keys."""
        self.append_rows(
            "name_pinyin",
            ("note_id", "seq", "kind", "name", "units"),
            [(note_id, seq, n.kind, n.name, n.units) for seq, n in enumerate(names)],
        )
        self.append_rows(
            "pinyin_keys", ("key", "note_id"), [(key, note_id) for key in sorted(set(keys))]
        )

    def pinyin_candidates(self, words: Sequence[str], filters: Filters, limit: int) -> list[int]:
        """Up to `limit` notes per word with a key that starts with the word, that pass the
        filters (in the order the words bring them): those whose keys come first in
        alphabetical order (the word itself first), then by id. A word such as "go" begins
        the keys of thousands of notes: which of them come is the index's answer, on
        either backend, not the order a plan happens to read them in."""
        where, params = self.filter_sql(filters)
        found: dict[int, None] = {}
        for word in words:
            brought: set[int] = set()
            offset = 0
            while len(brought) < limit:  # a note's keys may start alike: pages until enough
                rows = self.query(
                    "SELECT k.note_id FROM pinyin_keys k JOIN notes n ON n.id = k.note_id"
                    f" WHERE k.key >= ? AND k.key < ?{where} ORDER BY k.key, k.note_id"
                    " LIMIT ? OFFSET ?",
                    [word, word + _AFTER_Z, *params, limit, offset],
                )
                for (nid,) in rows:
                    if len(brought) < limit and int(nid) not in brought:
                        brought.add(int(nid))
                        found.setdefault(int(nid))
                if len(rows) < limit:
                    break
                offset += limit
        return list(found)

    def pinyin_names(self, ids: Sequence[int]) -> dict[int, list[PinyinName]]:
        """note id → its names with their units, in order."""
        out: dict[int, list[PinyinName]] = {}
        for chunk in self.chunks([int(i) for i in ids]):
            among, params = self.in_ids("note_id", chunk)
            for nid, kind, name, units in self.query(
                f"SELECT note_id, kind, name, units FROM name_pinyin WHERE {among}"
                " ORDER BY note_id, seq",
                params,
            ):
                out.setdefault(int(nid), []).append(PinyinName(str(kind), str(name), str(units)))
        return out

    def pinyin_name_count(self, allow: Sequence[str] | None = None) -> int:
        """Names and tags with pinyin (a name spelled two ways counts once) of the notes
        `allow` lets through (None: every note)."""
        where, params = self.allow_sql(allow)
        join = "" if allow is None else " JOIN notes n ON n.id = p.note_id"
        return int(
            self._scalar(
                "SELECT count(*) FROM (SELECT DISTINCT p.note_id, p.kind, p.name"
                f" FROM name_pinyin p{join} WHERE {self.TRUE}{where}) d",
                params,
            )
        )
