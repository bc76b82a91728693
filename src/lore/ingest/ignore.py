"""Ignore rules (`.loreignore`, gitignore syntax) matched in polynomial time.

A vault's ignore file is untrusted input: translated naively to a regular expression, a
line such as `*a*a*a*a*a*a*a*b` backtracks exponentially against a long file name, and one
such line made every sync of the vault run for minutes. Here each rule compiles to a
regular expression that cannot backtrack more than polynomially:

- inside a path segment, the pieces between `*` have a fixed length; each piece but the
  last is matched at its earliest place in an atomic group (`(?>[^/]*?piece)`), which is
  the optimal choice for glob matching, so nothing is retried;
- across segments, every run of segments after a `**` is likewise matched at its earliest
  place, atomically.

A match costs at most (path length × rule length) steps per rule. Rules longer than
MAX_RULE_CHARS and rules past MAX_RULES are not used, and a line that is not a valid
pattern (an escape at the end, a bad range) is dropped like git drops it: each is reported
in one line, and the rest of the file applies.

Semantics are git's: blank lines and `#` comments do nothing; `!` re-includes; a trailing
`/` matches folders only; a rule with a `/` before its end is anchored at the vault root,
one without matches at any depth; `**` spans folders; the last rule that matches decides.
A rule that matches a folder matches everything under it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MAX_RULE_CHARS = 1024
MAX_RULES = 2000
_BOUNDARY = r"(?=/|\Z)"


@dataclass(frozen=True)
class Rule:
    text: str
    negate: bool
    regex: re.Pattern[str]


class BadRule(ValueError):
    """A line that is not a usable pattern; the message says why."""


def _bracket(glob: str, i: int) -> tuple[str, int]:
    """The regex class for the bracket expression starting after glob[i - 1] == '['."""
    j = i
    if j < len(glob) and glob[j] in "!^":
        j += 1
    if j < len(glob) and glob[j] == "]":
        j += 1
    while j < len(glob) and glob[j] != "]":
        j += 1
    if j >= len(glob):
        raise BadRule("a '[' without its ']'")
    body = glob[i:j]
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    members = body.replace("\\", "\\\\").replace("[", "\\[")
    # A negated class never matches '/': a segment glob stays inside its segment.
    return ("[^/" if negate else "[") + members + "]", j + 1


def _pieces(glob: str) -> list[str]:
    """A segment glob split at its `*`s into fixed-length regex pieces."""
    pieces: list[str] = [""]
    i = 0
    while i < len(glob):
        char = glob[i]
        i += 1
        if char == "\\":
            if i >= len(glob):
                raise BadRule("an escape '\\' at the end")
            pieces[-1] += re.escape(glob[i])
            i += 1
        elif char == "*":
            if pieces[-1] or len(pieces) == 1:
                pieces.append("")
        elif char == "?":
            pieces[-1] += "[^/]"
        elif char == "[":
            regex, i = _bracket(glob, i)
            pieces[-1] += regex
        else:
            pieces[-1] += re.escape(char)
    return pieces


def _segment(glob: str) -> str:
    pieces = _pieces(glob)
    if len(pieces) == 1:
        return pieces[0]
    if not any(pieces):
        return "[^/]+"  # a segment is never empty
    first, *middle, last = pieces
    return first + "".join(f"(?>[^/]*?{p})" for p in middle if p) + "[^/]*" + last


def _translate(segments: list[str], dir_only: bool) -> str:
    """The regex of a rule matching a path itself (a file, or a folder written with its
    trailing '/'); a `**` at either end means "any folders there"."""
    leading = segments[0] == "**"
    trailing = len(segments) > 1 and segments[-1] == "**"
    chunks: list[list[str]] = [[]]
    for seg in segments[int(leading) : len(segments) - int(trailing)]:
        if seg == "**":
            chunks.append([])
        else:
            chunks[-1].append(_segment(seg))
    out = "(?s)"
    for index, chunk in enumerate(chunks):
        regex = "/".join(chunk)
        if index == 0 and not leading:
            out += regex  # anchored at the root
            continue
        if index > 0:
            out += "/"
        if index == len(chunks) - 1 and not trailing:
            out += f"(?:[^/]*/)*?{regex}"  # the path's last segments: tried at each depth
        else:
            out += f"(?>(?:[^/]*/)*?{regex}{_BOUNDARY})"  # earliest place, never retried
    if trailing:
        out += "/.+"  # anything inside
    return out + ("/" if dir_only else "/?") + r"\Z"


_WILDCARD = re.compile(r"[*?\[\\]")


def _prefixed_starstar(segments: list[str], dir_only: bool) -> str | None:
    """git compares a path rule's text before its first wildcard literally and matches the
    rest on its own, so a `**` right after that text (`a**/b`, `x/y**`) spans folders as
    a leading `**` does: `a**/b` ignores `a/b`, `ab/b`, `a/c/b` and also `ab`. None when
    the rule has no such `**`."""
    text = "/".join(segments)
    found = _WILDCARD.search(text)
    if not found or segments[0] == "**" or text[found.start() : found.start() + 2] != "**":
        return None
    prefix, rest = text[: found.start()], text[found.start() :].lstrip("*")
    if prefix.endswith("/") or (rest and not rest.startswith("/")):
        return None  # a `**` after a `/` is the usual one; `a**b` is two `*`
    head = "(?s)" + re.escape(prefix)
    tail = rest[1:].split("/")
    if not rest or tail == ["**"]:  # `x/a**`, `a**/**`: anything after the text, folders too
        return head + ".*" + ("/" if dir_only else "/?") + r"\Z"
    if not tail or tail == [""]:
        return None
    body = _translate(["**", *tail] if tail[0] != "**" else tail, dir_only)[len("(?s)") :]
    return head + "(?:.*/)?" + body.removeprefix("(?:[^/]*/)*?")


def compile_rule(line: str) -> Rule | None:
    """One line of an ignore file as a rule; None for blanks and comments; BadRule when
    it cannot be a pattern."""
    text = line.rstrip("\n\r")
    if not text.endswith("\\ "):
        text = text.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    negate = text.startswith("!")
    segments = (text[1:] if negate else text).split("/")
    dir_only = len(segments) > 1 and segments[-1] == ""
    if dir_only:
        segments.pop()
    if segments[0] == "":
        del segments[0]  # anchored at the root
    elif len(segments) == 1:
        segments.insert(0, "**")  # no slash but a trailing one: at any depth
    if not segments:
        return None
    segments = [s for i, s in enumerate(segments) if s != "**" or segments[i - 1 : i] != ["**"]]
    if segments == ["**"]:  # `**`: everything; `**/`: every folder
        regex = "(?s).*/\\Z" if dir_only else "(?s)."
    else:
        regex = _prefixed_starstar(segments, dir_only) or _translate(segments, dir_only)
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise BadRule(f"not a valid pattern ({exc.msg})") from None
    return Rule(text, negate, compiled)


class IgnoreRules:
    """The rules of one ignore file, and the lines that were not used (with why)."""

    def __init__(self, rules: list[Rule], problems: list[str]) -> None:
        self.rules = rules
        self.problems = problems
        self._folders: dict[str, bool] = {}  # folder → ignored, for the folders above a path

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> IgnoreRules:
        rules: list[Rule] = []
        problems: list[str] = []
        for number, line in enumerate(lines, 1):
            if len(rules) >= MAX_RULES:
                problems.append(f"more than {MAX_RULES:,} rules; lines from {number} on not used")
                break
            if line.startswith("#"):
                continue  # a comment, however long
            if len(line) > MAX_RULE_CHARS:
                problems.append(
                    f"line {number}: longer than {MAX_RULE_CHARS:,} characters; not used"
                )
                continue
            try:
                rule = compile_rule(line)
            except BadRule as exc:
                problems.append(f"line {number}: {exc}; not used")
                continue
            if rule is not None:
                rules.append(rule)
        return cls(rules, problems)

    def decision(self, path: str) -> bool | None:
        """What the last rule matching `path` itself says (True: ignored, False: taken
        back), or None when no rule speaks; the folders above are not consulted."""
        for rule in reversed(self.rules):
            if rule.regex.match(path):
                return not rule.negate
        return None

    def _decides(self, path: str) -> bool:
        return bool(self.decision(path))

    def match_file(self, path: str) -> bool:
        """Is `path` (vault-relative, POSIX; a folder ends with '/') ignored, itself or by
        an ignored folder above it (which no later rule can re-include, as in git)?"""
        if not self.rules:
            return False
        cut = path.find("/")
        while 0 <= cut < len(path) - 1:
            folder = path[: cut + 1]
            ignored = self._folders.get(folder)
            if ignored is None:
                ignored = self._folders[folder] = self._decides(folder)
            if ignored:
                return True
            cut = path.find("/", cut + 1)
        return self._decides(path)


# --- what a scan leaves out --------------------------------------------------------------
# Like the tools users know: hidden files and folders (`.github`, `.vscode`: Obsidian shows
# none of them), the folders tools make (virtual environments, package caches, build
# output), the vault's `.gitignore` files (each for its own folder and below, as git reads
# them; switched off with `gitignore = false`), and the vault's `.loreignore`, read last so
# it can take back any of the above (`!build/`). A folder holding `pyvenv.cfg` is a Python
# virtual environment whatever its name. A `.gitignore` is as untrusted as `.loreignore`:
# read without following links, bounded, and matched by the same polynomial-time rules.

DEFAULT_IGNORED_DIRS = frozenset(
    {"venv", "node_modules", "__pycache__", "dist", "build", "vendor", "site-packages"}
)
GITIGNORE = ".gitignore"
MAX_GITIGNORE_BYTES = 256 * 1024  # a larger one is read up to here
VENV_MARKER = "pyvenv.cfg"


def _default(rel: str, *, folder: bool) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith(".") or (folder and name in DEFAULT_IGNORED_DIRS)


def _read_gitignore(root: Path, rel_folder: str) -> IgnoreRules | None:
    from .safe_read import FileRefused, open_in_vault, read_at_most

    try:
        fd, _stat = open_in_vault(root, rel_folder + GITIGNORE)
        try:
            data = read_at_most(fd, MAX_GITIGNORE_BYTES)
        finally:
            os.close(fd)
    except (FileRefused, OSError):  # none, unreadable or not a file: git would not apply it
        return None
    rules = IgnoreRules.from_lines(data.decode("utf-8", errors="replace").splitlines())
    return rules if rules.rules else None


@dataclass(frozen=True)
class Ignores:
    """The rules in force inside one folder of the vault: the defaults, then `layers`
    ((folder relative to the vault with a trailing slash or "", its .gitignore), outermost
    first), then `last`, the vault's .loreignore, which wins over every layer. The scan
    descends only into folders these rules keep, so each path is judged by itself."""

    root: Path
    layers: tuple[tuple[str, IgnoreRules], ...]
    last: IgnoreRules
    gitignore: bool

    @classmethod
    def for_vault(cls, root: Path, loreignore: IgnoreRules, *, gitignore: bool = True) -> Ignores:
        own = _read_gitignore(root, "") if gitignore else None
        return cls(root, (("", own),) if own is not None else (), loreignore, gitignore)

    def enter(self, rel_folder: str) -> Ignores:
        """The rules inside the vault-relative folder `rel_folder` (ending in "/")."""
        own = _read_gitignore(self.root, rel_folder) if self.gitignore else None
        if own is None:
            return self
        return Ignores(self.root, (*self.layers, (rel_folder, own)), self.last, self.gitignore)

    def ignored(self, rel: str, *, folder: bool) -> bool:
        """Is the vault-relative path `rel` left out? The last rule that speaks wins."""
        name = rel + "/" if folder else rel
        verdict = _default(rel, folder=folder)
        for prefix, rules in self.layers:
            if name.startswith(prefix):
                found = rules.decision(name[len(prefix) :])
                verdict = found if found is not None else verdict
        found = self.last.decision(name) if self.last.rules else None
        return found if found is not None else verdict


def is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, VENV_MARKER))
