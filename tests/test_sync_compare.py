"""The sync's comparison of its scan with the index (lore.index.compare): it decides what
the former comparison decided (every note's stored stats held in a dict), from the notes'
stamps read a page at a time, and reads whole only the notes it re-derives or deletes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import build_vault
from hypothesis import given, settings
from hypothesis import strategies as st

import lore
from lore.index import compare as compare_mod
from lore.index.compare import Comparison, compare
from lore.ingest.scan import FileStat, ScannedFiles, scan_vault
from lore.store import notes as store_notes
from lore.store import sql_base
from lore.store.note_rows import Unreadable

PATHS = ["a.md", "b.md", "b/c.md", "b-c.md", "d.md", "e.md"]
STATS = [(1, 10), (2, 10), (1, 20)]


def former(
    files: ScannedFiles,
    stored: dict[str, tuple[int, int]],
    bad: dict[str, Unreadable],
    rebuild: bool,
) -> Comparison:
    """The comparison as lore.index.sync made it before the stamps: a dict of every stored
    note, a file pending unless its stat matches its note's or its unreadable record's."""
    out = Comparison()
    for f in files:
        known = bad.get(f.path)
        as_found = known is not None and (known.mtime_ns, known.size) == (f.mtime_ns, f.size)
        changed = f.path not in stored or stored[f.path] != (f.mtime_ns, f.size)
        if rebuild or (not as_found and changed):
            out.pending.append(f)
            if f.path in stored:
                out.indexed.add(f.path)
        elif f.path in bad:
            out.unreadable.append((f.path, f.path in stored))
        elif f.path in stored:
            out.unchanged += 1
    scanned = {f.path for f in files}
    out.gone = sorted(p for p in stored if p not in scanned)
    out.unreadable_gone = sorted(p for p in bad if p not in scanned)
    return out


stat_of = st.sampled_from(STATS)
INT64 = st.integers(-(2**63), 2**63 - 1)


@given(st.lists(st.builds(FileStat, st.text(), INT64, INT64)))
def test_scanned_files_give_back_what_a_list_of_them_holds(stats: list[FileStat]) -> None:
    held = ScannedFiles(stats)
    assert len(held) == len(stats) and list(held) == stats
    assert [held[i] for i in range(-len(stats), len(stats))] == stats + stats
    assert list(held[1::2]) == stats[1::2]
    paths = [s.path for s in stats]
    assert held.in_order == all(a < b for a, b in zip(paths, paths[1:], strict=False))
    assert held[1::2].in_order == all(a < b for a, b in zip(paths[1::2], paths[3::2], strict=False))
    assert held == ScannedFiles(stats) and (held == ScannedFiles(stats[1:])) == (stats == stats[1:])
    with pytest.raises(IndexError):
        held[len(stats)]


@settings(max_examples=600, deadline=None)
@given(
    files=st.dictionaries(st.sampled_from(PATHS), stat_of),
    stored=st.dictionaries(st.sampled_from(PATHS), stat_of),
    bad=st.dictionaries(st.sampled_from(PATHS), stat_of),
    rebuild=st.booleans(),
    scan_sorted=st.booleans(),
    stamps_sorted=st.integers(0, len(PATHS)),
    order=st.randoms(use_true_random=False),
)
def test_the_comparison_decides_what_the_dict_of_every_note_decided(
    files: dict[str, tuple[int, int]],
    stored: dict[str, tuple[int, int]],
    bad: dict[str, tuple[int, int]],
    rebuild: bool,
    scan_sorted: bool,
    stamps_sorted: int,
    order: Any,
) -> None:
    scanned = sorted(files.items())
    if not scan_sorted:
        order.shuffle(scanned)
    scan = ScannedFiles(FileStat(p, m, s) for p, (m, s) in scanned)
    unreadable = {p: Unreadable(m, s, "not UTF-8") for p, (m, s) in bad.items()}
    stamps = sorted((p, m, s) for p, (m, s) in stored.items())
    # A database's order of paths need not be Python's: in order up to some stamp, then not.
    tail = stamps[stamps_sorted:]
    order.shuffle(tail)
    stamps[stamps_sorted:] = tail
    got = compare(scan, iter(stamps), unreadable, rebuild=rebuild)
    assert got == former(scan, stored, unreadable, rebuild)
    assert got.nothing_to_do == (not got.pending and not got.gone and not got.unreadable_gone)


def test_files_in_path_order_are_compared_without_a_map_of_their_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk beside the stamps places them all; the map is for stamps out of order."""
    scan = ScannedFiles(FileStat(p, 1, 10) for p in sorted(PATHS))
    stamps = [(p, 1, 10 if p != "d.md" else 11) for p in sorted(PATHS) if p != "b/c.md"]
    built: list[int] = []
    real = compare_mod._merge

    def counting(*args: Any) -> Any:
        rest = real(*args)
        built.append(0 if rest is None else 1)
        return rest

    monkeypatch.setattr(compare_mod, "_merge", counting)
    got = compare(scan, stamps + [("zz.md", 1, 1)], {})
    assert built == [0]
    assert [s.path for s in got.pending] == ["b/c.md", "d.md"] and got.indexed == {"d.md"}
    assert got.gone == ["zz.md"] and got.unchanged == 4
    out_of_order = compare(scan, [("zz.md", 1, 1), *stamps], {})
    assert built == [0, 1] and out_of_order == got


NAME = st.text(st.sampled_from("ab-._0Z中 "), min_size=1, max_size=4).filter(
    lambda n: not n.startswith(".")  # hidden: not a note's folder or name
)


@settings(max_examples=60, deadline=None)
@given(tree=st.lists(st.lists(NAME, min_size=1, max_size=3), min_size=1, max_size=12))
def test_a_scan_lists_files_in_the_order_of_their_paths_as_strings(
    tmp_path_factory: pytest.TempPathFactory, tree: list[list[str]]
) -> None:
    """What the comparison's walk relies on: "b.md" < "b/c.md" < "b0.md", whatever the
    folders (a scan that listed a folder's files before its subfolders did not)."""
    root = tmp_path_factory.mktemp("v")
    made: set[str] = set()
    for parts in tree:
        *folders, name = parts
        rel = "/".join([*folders, f"{name}.md"])
        target = root / rel
        if any(p.is_file() for p in [*target.parents, target]) or target.is_dir():
            continue  # a file where a folder goes, or the other way round
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x", encoding="utf-8")
        made.add(rel)
    paths = [f.path for f in scan_vault(root, [])]
    assert paths == sorted(made)


def _touch(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**10))


def test_a_sync_reads_whole_only_the_notes_it_changes_with_stamps_paged(
    tmp_path: Path, on_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_notes, "STAMP_PAGE", 3)  # 14 notes: five pages
    files = {f"n{i:02d}.md": f"# Note {i}\n\nplain words {i}\n" for i in range(12)}
    files |= {"deep/z.md": "# Deep\n", "deep-a.md": "# Dash\n"}
    vault = build_vault(tmp_path / "v", files)
    with lore.open(vault) as opened:
        assert len(opened.sync().added) == 14
        stamps = list(opened.store.note_stamps())
        assert sorted(p for p, _m, _s in stamps) == sorted(files)
        assert len({p for p, _m, _s in stamps}) == 14  # no page repeats or skips a note

        asked: list[list[str]] = []
        whole = opened.store.stored_notes_of
        monkeypatch.setattr(
            opened.store,
            "stored_notes_of",
            lambda paths, hashes=True: asked.append(list(paths)) or whole(paths, hashes=hashes),
        )
        monkeypatch.setattr(opened.store, "stored_notes", lambda: pytest.fail("every note read"))
        nothing = opened.sync()
        assert (nothing.added, nothing.changed, nothing.deleted, asked) == ([], [], [], [])
        assert nothing.unchanged == 14

        _touch(vault / "n03.md", "# Note 3\n\nedited again\n")
        _touch(vault / "deep/z.md", "# Deep\n\nedited too\n")
        (vault / "n07.md").unlink()
        (vault / "n11.md").unlink()
        (vault / "new.md").write_text("# New\n", encoding="utf-8")
        report = opened.sync()
        assert report.changed == ["deep/z.md", "n03.md"]
        assert report.deleted == ["n07.md", "n11.md"]
        assert report.added == ["new.md"]
        assert report.unchanged == 10
        assert asked == [["deep/z.md", "n03.md", "n07.md", "n11.md"]]
        assert sorted(h.path for h in opened.search("edited", limit=5)) == ["deep/z.md", "n03.md"]
        found = {h.path for h in opened.search("plain words", limit=20)}
        assert found == {f"n{i:02d}.md" for i in range(12)} - {"n03.md", "n07.md", "n11.md"}


def test_doctor_compares_the_files_from_the_stamps_as_a_sync_does(
    tmp_path: Path, on_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_notes, "STAMP_PAGE", 3)
    files = {f"n{i}.md": f"# Note {i}\n\nwords {i}\n" for i in range(8)}
    vault = build_vault(tmp_path / "v", files, index=True)
    _touch(vault / "n2.md", "# Note 2\n\nedited\n")
    _touch(vault / "n5.md", "# Note 5\n\nedited\n")
    (vault / "n6.md").unlink()
    (vault / "new.md").write_text("# New\n", encoding="utf-8")
    with lore.open(vault) as opened:
        monkeypatch.setattr(opened.store, "stored_notes", lambda: pytest.fail("every note read"))
        report = opened.doctor()
    messages = sorted(p.message for p in report.problems if p.check == "files")
    assert messages == [
        "1 note file(s) indexed but gone",
        "1 note file(s) not indexed",
        "2 note file(s) changed since the last sync",
    ]
    with lore.open(vault) as opened:
        synced = opened.sync()
        assert (synced.added, synced.changed, synced.deleted) == (
            ["new.md"],
            ["n2.md", "n5.md"],
            ["n6.md"],
        )
        assert opened.doctor().ok


def test_a_rebuild_reads_the_ids_of_the_notes_without_their_hashes(
    tmp_path: Path, on_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"n{i}.md": f"# Note {i}\n\nwords {i}\n" for i in range(5)}
    vault = build_vault(tmp_path / "v", files, index=True)
    with lore.open(vault) as opened:
        ids = {p: opened.store.stored_notes()[p].id for p in files}
        asked: list[bool] = []
        whole = opened.store.stored_notes_of

        def spied(paths: list[str], *, hashes: bool = True) -> Any:
            found = whole(paths, hashes=hashes)
            asked.append(hashes)
            assert {p: n.hash for p, n in found.items()} == dict.fromkeys(files, "")
            return found

        monkeypatch.setattr(opened.store, "stored_notes_of", spied)
        report = opened.rebuild()
        assert asked == [False]
        assert sorted(report.added + report.changed) == sorted(files)
        assert {p: opened.store.stored_notes()[p].id for p in files} == ids  # ids kept
        assert [h.path for h in opened.search("words 3", limit=1)] == ["n3.md"]
        assert opened.doctor().ok


DERIVED_TABLES = ("entity_defs", "entity_aliases", "entity_mentions", "name_pinyin", "pinyin_keys")


def _derived(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables a sync derives after the notes (memory views, pinyin)."""
    return {t: sorted(map(tuple, store.query(f"SELECT * FROM {t}"))) for t in DERIVED_TABLES}


def test_every_notes_ids_are_read_a_page_at_a_time_with_the_same_rows(
    tmp_path: Path, on_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = "---\ntype: person\naliases: [{}]\n---\n# {}\n\n{}\n"
    files = {
        "entities/张三.md": card.format("Zhang San, zs", "张三", "工程师。"),
        "entities/李四.md": card.format("Li Si, 四哥", "李四", "负责人。"),
    }
    files |= {f"笔记/第{i}篇.md": f"# 张三的笔记{i}\n\n张三和李四开会。\n" for i in range(5)}
    # Paths other collations order otherwise (case, "/" against "." and digits).
    files |= {name: "# x\n" for name in ("B.md", "a.md", "a/b.md", "a0.md", "a b.md")}
    vault = build_vault(tmp_path / "v", files, index=True)
    with lore.open(vault) as opened:
        whole = _derived(opened.store)
        in_path_order = [opened.store.stored_notes()[p].id for p in sorted(files)]
        assert whole["name_pinyin"] and whole["entity_mentions"]  # something derived
        monkeypatch.setattr(sql_base, "ID_PAGE", 2)
        assert list(opened.store.note_ids(None)) == in_path_order
        # Some notes' ids, in path order, whatever the order (and repeats) they are asked in,
        # read a chunk of paths at a time: a path no note has is left out.
        monkeypatch.setattr(opened.store, "CHUNK", 3)
        asked = [*reversed(sorted(files)), "a.md", "nowhere.md", "B.md"]
        assert list(opened.store.note_ids(asked)) == in_path_order
        by_path = dict(zip(sorted(files), in_path_order, strict=True))
        assert list(opened.store.note_ids(["a0.md", "a/b.md"])) == [
            by_path["a/b.md"],
            by_path["a0.md"],
        ]
        assert [n for page in opened.store.note_id_pages(by_path=False) for n in page] == sorted(
            in_path_order
        )
        opened.rebuild()  # every note's memory rows and pinyin derived again, 2 ids a page
        assert _derived(opened.store) == whole


def test_a_sync_compares_once_unless_a_write_lands_between_its_look_and_its_lock(
    tmp_path: Path, on_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"n{i}.md": f"# Note {i}\n\nplain words {i}\n" for i in range(4)}
    vault = build_vault(tmp_path / "v", files)
    with lore.open(vault) as opened, lore.open(vault) as other:
        opened.sync()
        stamps_read = []
        stamps = opened.store.note_stamps
        monkeypatch.setattr(opened.store, "note_stamps", lambda: stamps_read.append(1) or stamps())
        _touch(vault / "n1.md", "# Note 1\n\nedited once\n")
        assert opened.sync().changed == ["n1.md"]
        assert len(stamps_read) == 1  # the look's comparison was taken under the lock

        # Another writer commits after the look: the comparison is made again under the lock.
        _touch(vault / "n2.md", "# Note 2\n\nzebracorn\n")
        (vault / "n3.md").unlink()
        transaction = opened.store.transaction

        def after_the_other(*args: Any, **kwargs: Any) -> Any:
            assert other.sync().changed == ["n2.md"]  # the other took n2 and n3 first
            return transaction(*args, **kwargs)

        monkeypatch.setattr(opened.store, "transaction", after_the_other)
        stamps_read.clear()
        report = opened.sync()
        assert len(stamps_read) == 2
        assert (report.added, report.changed, report.deleted) == ([], [], [])
        assert report.unchanged == 3
        monkeypatch.undo()
        assert opened.sync().wrote is False
        assert [h.path for h in opened.search("zebracorn", limit=5)] == ["n2.md"]
        assert sorted(p for p, _m, _s in opened.store.note_stamps()) == ["n0.md", "n1.md", "n2.md"]
