"""The `lore` command line, in-process through click's CliRunner, plus a few real runs of the
installed console script."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import lore_process
from click.testing import CliRunner, Result
from conftest import json_strict, one_line_naming, write_files

from lore.cli import main

MakeVault = Callable[..., Path]

NOTES = {
    "rules/dedupe v2.md": (
        "---\ntitle: Dedupe rules v2\ndate: 2026-10-15\ntags: [rules]\nowner: Zhang San\n---\n"
        "# Dedupe rules v2\n\n## Rule\n\nSame phone and same email means same customer.\n"
    ),
    "meetings/2026-10-10-sync.md": "# Sync\n\nJIRA-1234 agreed. 客户去重规则 discussed.\n",
}

COMMANDS = ["index", "rebuild", "search", "show", "status", "doctor"]


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_error(result: Result, *named: str) -> str:
    """Exit 1, nothing on stdout, exactly one line 'lore: error: …' on stderr."""
    assert result.exit_code == 1, (result.stdout, result.stderr, result.exception)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("lore: error: ")
    for name in named:
        assert name in lines[0]
    return lines[0]


@pytest.fixture
def vault(make_vault: MakeVault) -> Path:
    return make_vault(NOTES, name="notes")


@pytest.fixture
def indexed(vault: Path) -> Path:
    result = run("index", vault)
    assert result.exit_code == 0, result.output
    return vault


# -- index / rebuild --------------------------------------------------------------------------


def test_index_reports_what_it_did(vault: Path) -> None:
    first = run("index", vault)
    assert first.exit_code == 0
    assert first.stdout.startswith("added 2, changed 0, deleted 0, unchanged 0")
    second = run("index", "--vault", vault, "--json")
    assert second.exit_code == 0
    data = json.loads(second.stdout)
    assert data["added"] == [] and data["unchanged"] == 2


def test_index_lists_skipped_and_warned_files(vault: Path) -> None:
    write_files(vault, {"bad.md": b"caf\xe9", "empty.md": ""})
    result = run("index", vault)
    assert result.exit_code == 0
    assert "skipped bad.md: not valid UTF-8" in result.stdout
    assert "warning empty.md: empty note" in result.stdout


def test_index_uses_the_current_folder_by_default(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault)
    assert run("index").exit_code == 0
    assert (vault / ".lore" / "index.sqlite").is_file()


def test_rebuild_json(indexed: Path) -> None:
    result = run("rebuild", indexed, "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert sorted(data["added"]) == sorted(NOTES)
    assert set(data) >= {"added", "changed", "deleted", "unchanged", "skipped", "warnings"}


# -- search / show ----------------------------------------------------------------------------


def test_search_json_shape(indexed: Path) -> None:
    result = run("search", "same", "email", "--vault", indexed, "--json", "--explain")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["query"] == "same email"
    assert data["reason"] is None
    hit = data["hits"][0]
    assert hit["path"] == "rules/dedupe v2.md"
    assert hit["title"] == "Dedupe rules v2"
    assert hit["date"] == "2026-10-15"
    assert isinstance(hit["score"], float) and hit["score"] > 0
    assert "«" in hit["snippet"]
    assert hit["heading"] == "Rule"
    assert hit["line"] == 11
    assert hit["frontmatter"] == {
        "title": "Dedupe rules v2",
        "date": "2026-10-15",
        "tags": ["rules"],
        "owner": "Zhang San",
    }
    assert set(hit["explain"]["fields"]) == {"title", "tags", "summary", "body"}


@pytest.mark.parametrize(
    "command",
    [
        ["search", "JIRA-1234"],
        ["lookup", "Zhang San"],
        ["status"],
        ["show", "rules/dedupe v2.md"],
        ["report"],
        ["remember", "a fact"],
        ["mcp"],
    ],
)
def test_no_command_but_index_makes_a_first_index(vault: Path, command: list[str]) -> None:
    """A first index is an explicit act: every other command says, in one line, how to make
    one, and leaves the folder as it was."""
    result = run(*command, "--vault", vault)
    assert result.exit_code == 1
    one_line_naming(result.stderr.strip(), "has no lore index yet", f"lore index {vault}")
    assert not (vault / ".lore").exists()
    assert not (vault / "memory").exists()
    assert run("index", vault).exit_code == 0
    assert run("search", "JIRA-1234", "--vault", vault).exit_code == 0


def test_index_of_a_home_folder_or_the_root_is_asked_twice(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(vault))
    refused = run("index", vault)
    assert refused.exit_code == 1
    one_line_naming(refused.stderr.strip(), str(vault), "home folder", "--yes")
    assert not (vault / ".lore").exists()
    assert run("index", vault, "--yes").exit_code == 0
    assert (vault / ".lore" / "index.sqlite").is_file()
    root = run("index", "/", "--json")
    assert root.exit_code == 1
    one_line_naming(root.stderr.strip(), "root of the file system", "--yes")


def test_search_human_output(indexed: Path) -> None:
    result = run("search", "JIRA-1234", "--vault", indexed)
    assert result.exit_code == 0
    assert "1. meetings/2026-10-10-sync.md  Sync" in result.stdout
    assert "«JIRA-1234»" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when not a terminal


def test_search_no_results_says_why(indexed: Path) -> None:
    result = run("search", "zzyzx", "--vault", indexed)
    assert result.exit_code == 0
    assert "no results for 'zzyzx': nothing matched" in result.stdout
    filtered = run("search", "JIRA-1234", "--vault", indexed, "--path", "nowhere/", "--json")
    assert "filtered out" in json.loads(filtered.stdout)["reason"]


def test_search_sync_flag_picks_up_new_notes(indexed: Path) -> None:
    write_files(indexed, {"new.md": "a fresh zeppelin note"})
    assert json.loads(run("search", "zeppelin", "--vault", indexed, "--json").stdout)["hits"] == []
    synced = run("search", "zeppelin", "--vault", indexed, "--json", "--sync")
    assert [h["path"] for h in json.loads(synced.stdout)["hits"]] == ["new.md"]


def test_search_json_is_strict_json(vault: Path) -> None:
    write_files(vault, {"odd.md": "---\nweight: .nan\nratio: .inf\n---\nquasar\n"})
    assert run("index", vault).exit_code == 0
    result = run("search", "quasar", "--vault", vault, "--json")
    assert result.exit_code == 0
    json_strict(result.stdout)


def test_show(indexed: Path) -> None:
    result = run("show", "rules/dedupe v2.md", "--vault", indexed)
    assert result.exit_code == 0
    assert "title: Dedupe rules v2" in result.stdout
    assert "  - ## Rule (line 9)" in result.stdout
    assert "tags: 1\n  - rules (frontmatter)" in result.stdout
    assert "Same phone and same email" in result.stdout
    data = json.loads(run("show", "rules/dedupe v2.md", "--vault", indexed, "--json").stdout)
    assert data["path"] == "rules/dedupe v2.md"
    assert data["tags"] == [{"tag": "rules", "origin": "frontmatter"}]
    assert [h["text"] for h in data["headings"]] == ["Dedupe rules v2", "Rule"]


# -- status / doctor --------------------------------------------------------------------------


def test_status(indexed: Path) -> None:
    data = json.loads(run("status", "--vault", indexed, "--json").stdout)
    assert data["notes"] == 2
    assert data["vault"] == str(indexed.resolve())
    assert data["db"] == str(indexed.resolve() / ".lore" / "index.sqlite")
    assert data["last_sync"]
    human = run("status", "--vault", indexed)
    assert human.exit_code == 0 and "notes: 2" in human.stdout


def test_doctor_ok(indexed: Path) -> None:
    result = run("doctor", "--vault", indexed)
    assert result.exit_code == 0
    assert "index is consistent with the files" in result.stdout


def test_doctor_finds_a_changed_file_and_names_the_repair(indexed: Path) -> None:
    note = indexed / "meetings/2026-10-10-sync.md"
    note.write_text(note.read_text() + "more\n")
    result = run("doctor", "--vault", indexed)
    assert result.exit_code == 1
    assert "meetings/2026-10-10-sync.md" in result.stdout
    assert "run: lore index" in result.stdout
    data = json.loads(run("doctor", "--vault", indexed, "--json").stdout)
    assert data["ok"] is False
    assert data["stale"] == ["meetings/2026-10-10-sync.md"]
    assert data["repair"] == "lore index"
    assert run("index", indexed).exit_code == 0
    assert run("doctor", "--vault", indexed).exit_code == 0


def test_doctor_finds_missing_and_orphaned_notes(indexed: Path) -> None:
    (indexed / "rules/dedupe v2.md").unlink()
    write_files(indexed, {"added-later.md": "x"})
    data = json.loads(run("doctor", "--vault", indexed, "--json").stdout)
    assert data["missing"] == ["added-later.md"]
    assert data["orphaned"] == ["rules/dedupe v2.md"]


# -- help and errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [[], *([c] for c in COMMANDS)], ids=lambda c: c[0] if c else "lore"
)
def test_help(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: ")
    if command:
        assert "--vault" in result.stdout and "--db" in result.stdout


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert "lore" in result.stdout


def test_error_missing_vault(tmp_path: Path) -> None:
    assert_error(run("index", tmp_path / "nope"), str(tmp_path / "nope"))
    assert_error(run("search", "x", "--vault", tmp_path / "nope"), "does not exist")


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [("--since", "yesterday", "--since"), ("--until", "2026-13", "--until")],
)
def test_error_bad_date(indexed: Path, option: str, value: str, named: str) -> None:
    assert_error(run("search", "x", "--vault", indexed, option, value), named, value)


def test_error_index_of_another_vault(make_vault: MakeVault, tmp_path: Path) -> None:
    db = tmp_path / "one.sqlite"
    first = make_vault({"a.md": "a"}, name="first")
    second = make_vault({"b.md": "b"}, name="second")
    assert run("index", first, "--db", db).exit_code == 0
    assert_error(run("index", second, "--db", db), str(db), "belongs to the vault")


def test_error_index_location_unusable(vault: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    assert_error(run("index", vault, "--db", blocker / "index.sqlite"), str(blocker))


def test_error_show_outside_the_vault(indexed: Path) -> None:
    assert_error(run("show", "../secret.md", "--vault", indexed), "../secret.md")
    assert_error(run("show", "not-indexed.md", "--vault", indexed), "not-indexed.md")


def test_error_bad_setting_from_environment(indexed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LORE_FIELD_WEIGHTS", "titel=3")
    assert_error(run("search", "x", "--vault", indexed), "LORE_FIELD_WEIGHTS", "titel")


def test_usage_errors_exit_2(indexed: Path) -> None:
    assert run("search", "--vault", indexed).exit_code == 2  # no query
    assert run("search", "x", "--limit", "0", "--vault", indexed).exit_code == 2
    assert run("frobnicate").exit_code == 2


def test_debug_env_shows_the_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LORE_DEBUG", "1")
    result = run("index", tmp_path / "nope")
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "VaultError"


# -- the real console script ------------------------------------------------------------------


def test_console_script_index(vault: Path, tmp_path: Path) -> None:
    done = lore_process("index", vault, "--db", tmp_path / "idx.sqlite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("added 2,")
    assert done.stderr == ""


def test_console_script_search_json(vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "idx.sqlite"
    assert lore_process("index", vault, "--db", db, cwd=tmp_path).returncode == 0
    done = lore_process(
        "search", "same", "email", "--vault", vault, "--db", db, "--json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits[0]["path"] == "rules/dedupe v2.md"
    assert {"path", "title", "date", "score", "snippet", "heading", "frontmatter"} <= set(hits[0])


def test_console_script_error(tmp_path: Path) -> None:
    done = lore_process("search", "x", "--vault", tmp_path / "missing", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [f"lore: error: vault {tmp_path / 'missing'} does not exist"]
