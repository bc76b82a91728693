"""The `.loreignore` matcher (lore.ingest.ignore): git's semantics, in polynomial time.

git itself is the oracle: random rules (negations, classes, `**`, anchors, folder-only
rules) and random trees are checked with `git check-ignore`. The bound is shown by rules
that take a backtracking matcher (the regex pathspec builds) longer than the age of the
universe against a 250-character name: here they give their answer at once."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lore.ingest.ignore import MAX_RULE_CHARS, MAX_RULES, IgnoreRules

_PIECES = ["a", "b", "*", "**", "?", "/", "[ab]", "[!a]", ".md", "x", "\\*"]
_NAMES = ["a", "b", "ab", "ba", "x", "aa"]
rules = st.lists(
    st.tuples(st.booleans(), st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5)).map(
        lambda r: ("!" if r[0] else "") + "".join(r[1])
    ),
    min_size=1,
    max_size=4,
)
trees = st.lists(
    st.lists(st.sampled_from(_NAMES), max_size=3).flatmap(
        lambda folders: st.sampled_from(_NAMES).map(lambda n: "/".join([*folders, n + ".md"]))
    ),
    min_size=1,
    max_size=10,
)


def git_ignored(lines: list[str], paths: list[str]) -> tuple[list[str], set[str]]:
    """(paths that could be created, the ones git ignores) in a scratch repository."""
    work = Path(tempfile.mkdtemp(prefix="lore-ignore-"))
    try:
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        made = []
        for path in sorted(set(paths)):
            target = work / path
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                continue  # a name used both as a folder and as a file
            made.append(path)
        (work / ".gitignore").write_text("\n".join(lines) + "\n")
        out = subprocess.run(
            ["git", "-C", str(work), "-c", "core.excludesFile=/dev/null", "check-ignore"]
            + ["--no-index", "--stdin"],
            input="\n".join(made),
            capture_output=True,
            text=True,
        )
        assert out.returncode in (0, 1), out.stderr
        return made, set(out.stdout.split())
    finally:
        shutil.rmtree(work)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is the oracle")
@settings(max_examples=60)
@given(lines=rules, paths=trees)
# git matches a path rule's text before its first wildcard literally, so this `**` spans
# folders although a letter precedes it
@example(lines=["a**/a.md"], paths=["a/a/a.md", "a/a.md", "ab/c/a.md", "aa.md", "b/a.md"])
@example(lines=["x/a**", "!x/ab/keep"], paths=["x/a", "x/ab/c", "x/ab/keep", "x/b"])
@example(lines=["a**/**"], paths=["a.md", "a/b.md", "ab/c/d.md", "b.md"])  # "a" then anything
def test_rules_decide_like_git(lines: list[str], paths: list[str]) -> None:
    made, ignored = git_ignored(lines, paths)
    matcher = IgnoreRules.from_lines(lines)
    assert {p for p in made if matcher.match_file(p)} == ignored


@pytest.mark.parametrize(
    ("lines", "path", "expected"),
    [
        (["drafts/"], "drafts/", True),
        (["drafts/"], "drafts", False),  # a folder rule never matches a file
        (["drafts/"], "a/drafts/x.md", True),
        (["/drafts"], "a/drafts/x.md", False),  # anchored at the root
        (["a/**/b.md"], "a/x/y/b.md", True),
        (["a/**/b.md"], "a/b.md", True),
        (["**/tmp/**"], "x/tmp/y.md", True),
        (["*.md", "!keep.md"], "keep.md", False),
        (["notes/", "!notes/keep.md"], "notes/keep.md", True),  # as git: the folder wins
        (["\\#hash.md"], "#hash.md", True),
        (["# comment"], "# comment", False),
        (["name\\ "], "name ", True),
        (["[!a]*.md"], "x/b.md", True),
        (["a[!b]c"], "a/c", False),  # a class never matches '/'
    ],
)
def test_git_rules_by_example(lines: list[str], path: str, expected: bool) -> None:
    assert IgnoreRules.from_lines(lines).match_file(path) is expected


def test_backtracking_rules_answer_at_once() -> None:
    """Each of these takes a backtracking matcher time exponential in its stars."""
    name = "a" * 250
    cases = {
        "*a" * 60 + "*b": (name, False),
        "*a" * 60 + "*": (name, True),
        "**/" + "*a/" * 20 + "**/b": ("/".join(["aa"] * 40) + "/c", False),
        "a/**/" * 30 + "b": ("a/" * 60 + "c", False),
        "?" * 200 + "*" * 50 + "a" * 10: (name, True),
    }
    for line, (path, expected) in cases.items():
        assert IgnoreRules.from_lines([line]).match_file(path) is expected, line


def test_lines_that_cannot_be_used_are_reported_and_the_rest_apply() -> None:
    lines = ["ok.md", "broken\\", "[z-a]", "x" * (MAX_RULE_CHARS + 1), "#" * 5000, "[abc"]
    matcher = IgnoreRules.from_lines(lines)
    assert matcher.match_file("ok.md")
    assert matcher.problems == [
        "line 2: an escape '\\' at the end; not used",
        "line 3: not a valid pattern (bad character range z-a); not used",
        f"line 4: longer than {MAX_RULE_CHARS:,} characters; not used",
        "line 6: a '[' without its ']'; not used",
    ]
    many = IgnoreRules.from_lines([f"n{i}.md" for i in range(MAX_RULES + 10)])
    assert len(many.rules) == MAX_RULES
    assert many.problems == [
        f"more than {MAX_RULES:,} rules; lines from {MAX_RULES + 1} on not used"
    ]
    assert many.match_file(f"n{MAX_RULES - 1}.md") and not many.match_file(f"n{MAX_RULES}.md")
