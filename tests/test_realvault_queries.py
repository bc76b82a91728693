"""The hand-written real-vault query sets (bench/realvault_queries) and their loader.

The vault archives live outside the repo (../shared/data/vaults): where they are absent, the
check that every relevant path is a note of its vault is skipped here (bench.realvault makes
it on every run).
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench import realvault_data as data

VALID = {"id": "q1", "kind": "topic", "query": "怎么看端口", "relevant": ["a/b.md"]}


@pytest.mark.parametrize("vault", data.VAULTS)
def test_query_file_parses_with_known_kinds_and_enough_queries(vault: str) -> None:
    queries = data.load_queries(data.query_file(vault))
    assert len(queries) >= data.MIN_QUERIES
    assert {q.kind for q in queries} <= set(data.KINDS)
    assert len({q.id for q in queries}) == len(queries)
    # Every kind the vault uses is measured on enough queries to mean something.
    per_kind = {k: sum(q.kind == k for q in queries) for k in {q.kind for q in queries}}
    assert min(per_kind.values()) >= 10, per_kind


def test_chinese_vault_has_mixed_and_english_vault_has_common_queries() -> None:
    mynote = {q.kind for q in data.load_queries(data.query_file("mynote"))}
    hub = {q.kind for q in data.load_queries(data.query_file("obsidian-hub"))}
    assert {"known_item", "topic", "mixed", "deep"} <= mynote
    assert {"known_item", "topic", "common", "deep"} <= hub and "mixed" not in hub


def test_mynote_has_long_spoken_chinese_questions() -> None:
    # The issue saw lore return nothing or a handful of hits for questions like these.
    queries = data.load_queries(data.query_file("mynote"))
    long_zh = [q for q in queries if q.kind == "topic" and sum(map(_is_cjk, q.query)) >= 10]
    assert len(long_zh) >= 5, [q.query for q in long_zh]


def _is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


@pytest.mark.parametrize("vault", data.VAULTS)
def test_relevant_paths_are_notes_of_the_archive(vault: str) -> None:
    if not data.archive_path(vault).is_file():
        pytest.skip(f"{data.archive_path(vault)} is not here")
    queries = data.load_queries(data.query_file(vault))
    assert data.missing_relevant(queries, data.archive_note_paths(vault)) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "known"}, "kind 'known' is not one of"),
        ({"query": " "}, "`query` must be a non-empty string"),
        ({"query": "x" * 81}, "over 80"),
        ({"relevant": []}, "non-empty list"),
        ({"relevant": ["../a.md"]}, "not a clean vault-relative path"),
        ({"relevant": ["/a.md"]}, "not a clean vault-relative path"),
        ({"relevant": ["a\\b.md"]}, "not a clean vault-relative path"),
        ({"relevant": ["a.md", "a.md"]}, "listed twice"),
        ({"extra": 1}, "unknown field(s) ['extra']"),
        ({"note": 3}, "`note` must be a string"),
    ],
)
def test_bad_query_lines_are_refused_with_file_and_line(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(VALID) + "\n" + json.dumps({**VALID, **change}) + "\n")
    with pytest.raises(ValueError, match="^v.jsonl:2: ") as err:
        data.load_queries(path, min_count=1)
    assert message in str(err.value)


def test_duplicate_ids_and_too_few_queries_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps(VALID) + "\n\n" + json.dumps(VALID) + "\n")
    with pytest.raises(ValueError, match=r"v.jsonl:3: duplicate id 'q1'"):
        data.load_queries(path, min_count=1)
    path.write_text(json.dumps(VALID) + "\n")
    with pytest.raises(ValueError, match="1 queries, at least 60 needed"):
        data.load_queries(path)


@given(st.text(max_size=200))
def test_any_line_either_parses_or_raises_value_error(line: str) -> None:
    try:
        query = data.parse_query("f:1", line)
    except ValueError as exc:
        assert str(exc).startswith("f:1: ")
    else:
        assert query.kind in data.KINDS and query.relevant


@given(
    st.text(min_size=1, max_size=data.MAX_QUERY_CHARS).filter(str.strip),
    st.sampled_from(sorted(data.KINDS)),
    st.lists(st.from_regex(r"[a-z0-9_ 中文]{1,8}(/[a-z0-9_]{1,8}){0,2}\.md", fullmatch=True),
             min_size=1, max_size=4, unique=True),
)  # fmt: skip
def test_valid_queries_round_trip(text: str, kind: str, relevant: list[str]) -> None:
    row = {"id": "x", "kind": kind, "query": text, "relevant": relevant}
    query = data.parse_query("f:1", json.dumps(row, ensure_ascii=False))
    assert (query.query, query.kind, list(query.relevant)) == (text, kind, relevant)


def _tar(path: Path, members: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            raw = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))


def test_unpack_and_scan_a_vault_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data" / "vaults").mkdir(parents=True)
    monkeypatch.setenv("LORE_BENCH_DATA", str(tmp_path / "data"))
    _tar(
        data.archive_path("v"),
        {"v/a.md": "# A\n", "v/sub/b.markdown": "b", "v/.git/x.md": "x", "v/c.txt": "c"},
    )
    root = data.unpack("v", work_dir=tmp_path / "work")
    docs = data.scan_notes(root)
    assert [(d.id, d.title, d.text) for d in docs] == [
        ("a.md", "a", "# A\n"),
        ("sub/b.markdown", "b", "b"),
    ]
    assert data.archive_note_paths("v") == {"a.md", "sub/b.markdown"}
    # A second unpack of an unchanged archive reuses the tree (an edit there survives).
    (root / "a.md").write_text("edited")
    assert data.unpack("v", work_dir=tmp_path / "work") == root
    assert (root / "a.md").read_text() == "edited"


def test_unpack_refuses_members_that_leave_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data" / "vaults").mkdir(parents=True)
    monkeypatch.setenv("LORE_BENCH_DATA", str(tmp_path / "data"))
    _tar(data.archive_path("bad"), {"v/a.md": "a", "v/../../evil.md": "x"})
    with pytest.raises(ValueError, match="leaves the archive folder"):
        data.unpack("bad", work_dir=tmp_path / "work")
    assert not (tmp_path / "evil.md").exists()
