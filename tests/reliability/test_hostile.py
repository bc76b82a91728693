"""Hostile input through the whole pipeline (files → sync → search → show → doctor) and
every place a path is accepted. tests/unit fuzzes the parser, tokenizer and query planner
one by one, and tests/test_bad_input.py covers broken files; here the same kinds of input
go end to end, through the API and the CLI, and paths are fuzzed.

Rules checked everywhere: nothing crashes, nothing escapes the vault, every rejection is a
LoreError with a one-line message, and nothing printed for a human carries a raw control
character (a note cannot recolour, retitle or clear the user's terminal).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fuzz_targets as ft
import pytest
from backend_support import child_env
from click.testing import CliRunner
from conftest import isolated_module, json_strict, one_line_naming
from fuzz_targets import RAW_CONTROL, SECRET
from hypothesis import example, given, settings

import lore
from lore.cli import main
from lore.index.sync import sync as core_sync
from lore.retrieve import snippet

HOSTILE = {
    "ctrl.md": (
        '---\ntitle: "bell\\a esc\\e[31m red"\n---\n'
        "body \x1b]0;pwned\x07 osc \x1b[2J clear \r carriage \x0b vt \x7f del ctrlword\n"
    ),
    "rtl.md": '---\ntitle: "\u202eevil\u202c \u200fשלום"\n---\n\u2067iso\u2069 مرحبا rtlword\n',
    "nul-late.md": "x" * 9000 + "\x00 nulword after the binary probe\n",
    "fts-title.md": (
        "---\ntitle: 'NEAR(rank fusion, 2) OR title:x AND \"unclosed * ^ -'\n"
        "tags: ['NEAR(', 'a OR b', '\"', 'x*', '[[y]]']\n---\nplain body ftsword\n"
    ),
    "fts-heading.md": '# ) OR ( AND NOT " * {col}:x\nsecond ftsheading\n',
    "bomb.md": (
        "---\na: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n---\n# Bomb\nbombword\n"
    ),
    "nested.md": "---\nroot: " + "[" * 3000 + "1" + "]" * 3000 + "\n---\n# Nested\nnestword\n",
    "nested-block.md": "---\n"
    + "".join(f"{'  ' * i}k{i}:\n" for i in range(200))
    + "---\nblocknest\n",
    "types.md": (
        "---\ntitle: [1, 2]\ntags: {a: 1}\ndate: [2026]\npriority: 1e400\naliases: 5\n"
        "status: {x: y}\nsummary: null\n---\ntypesword\n"
    ),
    "huge-int.md": "---\npriority: 99999999999999999999999\nid: 1e400\n---\nhugeint\n",
    "ctl\x1b[2Jname.md": "ctlname in a file name that clears the screen\n",
    "new\nline.md": "newlinename\n",
    "rtl\u202egpj.md": "rtlname\n",
}
# A word each note can be found by, and the note it must find.
FINDS = {
    "ctrlword": "ctrl.md",
    "rtlword": "rtl.md",
    "nulword": "nul-late.md",
    "ftsword": "fts-title.md",
    "ftsheading": "fts-heading.md",
    "bombword": "bomb.md",
    "nestword": "nested.md",
    "blocknest": "nested-block.md",
    "typesword": "types.md",
    "hugeint": "huge-int.md",  # a priority past 64 bits once stopped every sync
    "clears the screen": "ctl\x1b[2Jname.md",
    "newlinename": "new\nline.md",
    "rtlname": "rtl\u202egpj.md",
}


def run(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_one_error_line(result: Any, *named: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lore: error: "), result.stderr
    assert not RAW_CONTROL.search(lines[0]), lines[0]
    for name in named:
        assert name in lines[0], (name, lines[0])
    return str(lines[0])


@pytest.fixture(scope="module")
def hostile_index(
    backend: str, backend_db: Any, tmp_path_factory: pytest.TempPathFactory, user_cache: Path
) -> tuple[Path, lore.SyncReport]:
    """The hostile vault, indexed once for the module on its backend; its tests only read
    it (an `index` finds nothing changed)."""
    base = tmp_path_factory.mktemp("hostile")
    root = base / "vault"
    root.mkdir()
    for name, text in HOSTILE.items():
        (root / name).write_bytes(text.encode("utf-8"))
    os.mkdir(os.fsencode(root) + b"/\xfe-folder")
    (Path(os.fsdecode(os.fsencode(root) + b"/\xfe-folder")) / "inside.md").write_text("x")
    Path(os.fsdecode(os.fsencode(root) + b"/\xffname.md")).write_text("undecodable name")
    (base / "secret.md").write_text(SECRET)
    (base / "outside").mkdir()
    (base / "outside" / "secret.md").write_text(SECRET)
    (root / "door").symlink_to(base / "outside", target_is_directory=True)
    (root / "link.md").symlink_to(base / "secret.md")
    db = None if backend == "sqlite" else str(backend_db)
    with isolated_module(base, user_cache), lore.open(root, db=db) as vault:
        report = vault.sync()
    return root, report


@pytest.fixture
def hostile(
    hostile_index: tuple[Path, lore.SyncReport], on_module_backend: str
) -> tuple[Path, lore.SyncReport]:
    return hostile_index


def test_hostile_notes_are_indexed_and_reported_in_one_line_each(
    hostile: tuple[Path, lore.SyncReport],
) -> None:
    root, report = hostile
    reported = {s.path: s.reason for s in report.skipped + report.warnings}
    for path, reason in reported.items():
        assert "\n" not in reason and "\n" not in path.replace("new\nline.md", ""), (path, reason)
    assert "alias" in reported["bomb.md"] and "nest" in reported["nested.md"]
    assert "not valid UTF-8" in reported["\ufffdname.md"]
    assert "not valid UTF-8" in reported["\ufffd-folder/"]
    assert "outside the vault" in reported["link.md"] and "door" in reported
    assert set(report.added) == set(HOSTILE)


@pytest.mark.parametrize("query", sorted(FINDS))
def test_each_hostile_note_is_found_by_its_word(
    hostile: tuple[Path, lore.SyncReport], query: str
) -> None:
    root, _ = hostile
    with lore.open(root) as vault:
        assert [h.path for h in vault.search(query)][:1] == [FINDS[query]]


def test_a_title_that_is_an_fts_expression_is_plain_text(
    hostile: tuple[Path, lore.SyncReport],
) -> None:
    root, _ = hostile
    with lore.open(root) as vault:
        title = vault.note("fts-title.md")["title"]
        assert title.startswith("NEAR(")
        assert [h.path for h in vault.search(title)][:1] == ["fts-title.md"]
        hits = vault.search(') OR ( AND NOT " * {col}:x', limit=50)
        assert "fts-heading.md" in [h.path for h in hits]
        # Operators in the title are words of it: the title's note ranks first for them.
        assert [h.path for h in vault.search("NEAR")][:1] == ["fts-title.md"]


def test_human_output_never_carries_raw_control_characters(
    hostile: tuple[Path, lore.SyncReport],
) -> None:
    root, _ = hostile
    outputs = [run("search", q, "--vault", root, "--explain").stdout for q in FINDS]
    outputs += [run("show", p, "--vault", root).stdout for p in HOSTILE]
    outputs += [run("doctor", "--vault", root).stdout, run("index", root).stdout]
    for out in outputs:
        assert out.strip()
        assert not RAW_CONTROL.search(out), repr(RAW_CONTROL.search(out))
    shown = run("show", "ctrl.md", "--vault", root).stdout
    assert "\\x1b]0;pwned\\x07" in shown  # visible, not obeyed


def test_json_output_keeps_the_text_exactly_and_is_strict(
    hostile: tuple[Path, lore.SyncReport],
) -> None:
    root, _ = hostile
    for path in HOSTILE:
        data = json_strict(run("show", path, "--vault", root, "--json").stdout)
        assert data["path"] == path
    body = json_strict(run("show", "nul-late.md", "--vault", root, "--json").stdout)["body"]
    assert "\ufffd nulword" in body and "\x00" not in body  # NUL is stored as U+FFFD (#15)
    for query in FINDS:
        json_strict(run("search", query, "--vault", root, "--json").stdout)


def test_doctor_is_content_with_a_hostile_vault(hostile: tuple[Path, lore.SyncReport]) -> None:
    root, _ = hostile
    with lore.open(root) as vault:
        report = vault.doctor()
    assert report.ok, report.to_dict()
    assert {s.path for s in report.skipped} >= {"link.md", "door", "\ufffdname.md"}


# -- paths (targets and strategies: fuzz_targets.py) -----------------------------------------


def test_vault_paths_never_escape(hostile: tuple[Path, lore.SyncReport]) -> None:
    root, _ = hostile
    with lore.open(root) as vault:

        @settings(max_examples=300)
        @given(path=ft.paths)
        def check(path: str) -> None:
            ft.check_path(vault, path)

        check()


@pytest.mark.parametrize(
    "path",
    ["../secret.md", "door/secret.md", "link.md", "/etc/passwd", "notes/../../secret.md",
     "a\x00b.md", "\x1b[2J.md", "new\nline.md/..", str(Path("/") / "tmp" / "..")],
)  # fmt: skip
def test_cli_show_refuses_paths_outside_in_one_line(
    hostile: tuple[Path, lore.SyncReport], path: str
) -> None:
    root, _ = hostile
    result = run("show", path, "--vault", root)
    assert_one_error_line(result)
    assert SECRET not in result.output


def test_cli_with_undecodable_bytes_in_arguments(hostile: tuple[Path, lore.SyncReport]) -> None:
    """argv bytes that are not UTF-8 (a real subprocess: the OS hands Python raw bytes)."""
    root, _ = hostile
    env = child_env()
    for argv in (
        [b"show", b"\xffname.md", b"--vault", os.fsencode(root)],
        [b"search", b"caf\xe9", b"--vault", os.fsencode(root)],
        [b"show", b"x.md", b"--vault", os.fsencode(root) + b"/\xfe-folder"],
    ):
        proc = subprocess.run(
            [os.fsencode(sys.executable), b"-m", b"lore", *argv],
            capture_output=True,
            env=env,
            timeout=60,
        )
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, err
        if proc.returncode:
            assert proc.returncode == 1 and err.startswith("lore: error: "), err
            assert len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "args",
    [["--vault", "\x1b[2J"], ["--vault", "nowhere/../.."], ["--vault", "\udcff"],
     ["--db", "\udcff"], ["--db", "."]],
    ids=repr,
)  # fmt: skip
def test_vault_and_db_options_refuse_hostile_values_in_one_line(
    hostile: tuple[Path, lore.SyncReport], args: list[str]
) -> None:
    """(A NUL cannot reach the CLI: argv is C strings. The API is checked for it below.)"""
    root, _ = hostile
    extra = ["--vault", str(root)] if args[0] == "--db" else []
    result = run("status", *args, *extra)
    if result.exit_code == 2:  # click's usage error, naming the option
        assert f"Invalid value for '{args[0]}'" in result.stderr
    else:
        assert_one_error_line(result)


def test_api_refuses_nul_in_vault_and_db_paths(hostile: tuple[Path, lore.SyncReport]) -> None:
    root, _ = hostile
    with pytest.raises(lore.VaultError) as caught:
        lore.open("vault\x00x")
    one_line_naming(str(caught.value), "NUL")
    with pytest.raises(lore.LoreError) as caught_db:
        lore.open(root, db="index\x00.sqlite")
    one_line_naming(str(caught_db.value), "NUL")


def test_mcp_read_note_paths_never_escape(hostile: tuple[Path, lore.SyncReport]) -> None:
    """read_note's own readings of a path (URL-decoded, `\\` as `/`, `.md` added) on top:
    tests/mcp/test_mcp_read_note_safety.py has the named cases, this the fuzz."""
    root, _ = hostile
    encoded = ft.paths.map(lambda p: p.replace("/", "%2f").replace(".", "%2e"))
    with lore.open(root) as vault:

        @settings(max_examples=200)
        @given(raw=ft.paths | encoded | ft.paths.map(lambda p: p.replace("/", "\\")))
        def check(raw: str) -> None:
            ft.check_read_note(vault, raw)

        check()


# -- queries and filters ----------------------------------------------------------------------


def test_search_filters_either_answer_or_refuse_in_one_line(
    hostile: tuple[Path, lore.SyncReport],
) -> None:
    root, _ = hostile
    with lore.open(root) as vault:

        @settings(max_examples=150)
        @given(args=ft.searches)
        def check(args: tuple[Any, ...]) -> None:
            ft.check_search(vault, *args)

        check()


# -- size -------------------------------------------------------------------------------------


@pytest.mark.usefixtures("on_backend")
def test_million_character_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One line of a million characters (Latin words and Chinese, no newline): indexed,
    searched and shown, the snippet cut from it short and from a bounded part of it (how
    fast: bench, not a clock here; the machine is shared)."""
    words = ["alpha", "客户去重规则", "v2", "JIRA-1234", "walrus", "中文"]
    line = " ".join(words[(i * 7) % len(words)] for i in range(170_000)) + " finalword"
    assert len(line) >= 1_000_000
    root = tmp_path / "vault"
    root.mkdir()
    (root / "long.md").write_text(f"# Long\n{line}\n", encoding="utf-8")
    (root / "cjk.md").write_text("客户去重规则" * 60_000 + "\n", encoding="utf-8")
    scanned: list[int] = []
    tokenize = snippet.wanted_spans

    def counted(text: str, wanted: frozenset[str], **options: bool) -> Any:
        scanned.append(len(text))
        return tokenize(text, wanted, **options)

    monkeypatch.setattr(snippet, "wanted_spans", counted)
    with lore.open(root) as vault:
        report = core_sync(vault.store, vault.root, views=vault.derived_views)  # semantic: bench
        assert sorted(report.added) == ["cjk.md", "long.md"]
        for query, first in (("finalword", "long.md"), ("客户去重", "cjk.md"), ("v2 walrus", None)):
            hits = vault.search(query)
            assert hits and (first is None or hits[0].path == first)
            assert all(len(h.snippet) < 400 for h in hits)
    assert scanned and max(scanned) <= snippet.SCAN_LIMIT_CHARS  # never the whole line
    shown = run("show", "long.md", "--vault", root)
    assert shown.exit_code == 0 and shown.stdout.rstrip().endswith("finalword")


@pytest.mark.usefixtures("on_backend")
def test_front_matter_of_any_yaml_type_is_indexed(tmp_path: Path) -> None:
    """Every known front-matter key with values of every YAML type: the note is indexed,
    its title is text, and it is found by a word of its body."""
    root = tmp_path / "vault"
    root.mkdir()
    with lore.open(root) as vault:

        @settings(max_examples=40)
        @given(fm=ft.front_matter)
        @example(fm={"priority": 2**70, "title": -(2**80)})
        def check(fm: dict[str, Any]) -> None:
            ft.check_front_matter(vault, fm)

        check()


@pytest.mark.usefixtures("on_backend")
def test_hostile_note_text_is_indexed_or_reported(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    with lore.open(root) as vault:

        @settings(max_examples=40)
        @given(text=ft.note_texts)
        @example(text="---\n\x1ftitle: x\n---\nbody\n")  # YAML's message spanned lines
        @example(text="---\ntitle: [\x1b[2J\n---\n# \u202e\x00late\n")
        def check(text: str) -> None:
            ft.check_note(vault, text)

        check()
