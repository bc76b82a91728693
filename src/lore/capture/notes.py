"""Write a captured note: YAML front matter + Markdown body, under a readable file name,
atomically, never over another file (lore.safe_write).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from ..errors import CaptureError, PathError
from ..safe_write import open_folder

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


def write_note(root: Path, folder: str, stem: str, text: str, *, label: str) -> str:
    """Write `text` as folder/stem.md under `root` (or stem-2.md, stem-3.md, ... when
    taken), never over another file and never through a symlink (lore.safe_write); the
    path written, relative to `root`.

    The note appears whole or not at all: readers and `lore watch` never see half of it.
    `label` names the capture in error messages."""
    names = (f"{stem}.md" if n == 1 else f"{stem}-{n}.md" for n in range(1, 10_000))
    try:
        with open_folder(root, folder) as out:
            return out.shown(out.create(names, text.encode("utf-8")))
    except PathError as exc:
        raise CaptureError(f"{label}: {exc}") from None
