"""Write a captured note: YAML front matter + Markdown body, under a readable file name,
atomically (a temporary file in the same folder, then a link/rename), never over another file.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from ..errors import CaptureError

MAX_SLUG_CHARS = 60
_UNSAFE = re.compile(r"[\\/:*?\"<>|#^\[\]{}`$%&=+;,!@~'\u0000-\u001f\u007f]+")
_DASHES = re.compile(r"[\s\-_.·•—–]+")


class _NoteDumper(yaml.SafeDumper):
    """Block style for nested values; multi-line strings as literal blocks (`|`)."""


_LINE_BREAKS = frozenset("\r\x85\u2028\u2029")


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Unicode line breaks other than \n would be read back as \n from a plain or block
    # scalar: quote (and escape) those values so that the text survives exactly.
    if any(ch in _LINE_BREAKS for ch in value):
        style: str | None = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_NoteDumper.add_representer(str, _str_representer)


def render_note(frontmatter: dict[str, Any], body: str) -> str:
    """The text of a note: `---` front matter `---` and the body."""
    header = yaml.dump(
        frontmatter,
        Dumper=_NoteDumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=100,
    )
    return f"---\n{header}---\n\n{body.lstrip(chr(10))}"


def slugify(title: str) -> str:
    """A file-name-safe form of a title: CJK kept, Latin lower-cased, separators → '-'."""
    text = unicodedata.normalize("NFKC", title)
    text = _UNSAFE.sub(" ", text)
    text = _DASHES.sub("-", text).strip("-").lower()
    if len(text) > MAX_SLUG_CHARS:
        cut = text.rfind("-", MAX_SLUG_CHARS // 2, MAX_SLUG_CHARS)
        text = text[: cut if cut > 0 else MAX_SLUG_CHARS].strip("-")
    return text or "note"


def note_stem(title: str, day: dt.date) -> str:
    return f"{day.isoformat()}-{slugify(title)}"


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _place(tmp: Path, target: Path) -> bool:
    """Give the temporary file its final name unless that name is taken; True if placed."""
    try:
        os.link(tmp, target)  # atomic and fails when the target exists
    except FileExistsError:
        return False
    except OSError:
        # A file system without hard links: check, then rename (the window is tiny).
        if target.exists():
            return False
        os.replace(tmp, target)
        return True
    tmp.unlink()
    return True


def write_note(folder: Path, stem: str, text: str, *, label: str) -> Path:
    """Write `text` to folder/stem.md (or stem-2.md, stem-3.md, ... when taken) atomically.

    The note appears whole or not at all: readers and `lore watch` never see half of it.
    `label` names the capture in error messages."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, tmp_name = tempfile.mkstemp(prefix=".lore-capture-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise CaptureError(f"{label}: cannot write to {folder}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        for n in range(1, 10_000):
            target = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
            if _place(tmp, target):
                _fsync_dir(folder)
                return target
        raise CaptureError(f"{label}: too many notes named {stem}*.md in {folder}")
    except OSError as exc:
        raise CaptureError(f"{label}: cannot write to {folder}: {exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
