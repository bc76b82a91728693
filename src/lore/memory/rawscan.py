"""L3 of the lookup path: read the note files themselves, for what the index missed.

The index can miss what was written since the last sync, the tail of a note larger than
the indexing limit, and text inside words (a substring the tokenizer never cut out). This
scan reads every note file the caller may see, looks for the query, its words and the
spellings of the entities it names (case-insensitive substrings), and ranks files by how
much of that they hold. It never writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..ingest.markdown import HEADING, date_from_name
from ..ingest.safe_read import FileRefused, open_in_vault, read_at_most
from ..ingest.scan import scan_vault
from ..model.sync import Skipped
from ..retrieve.query import plan
from .access import Access
from .model import MemoryHit

if TYPE_CHECKING:
    from .services import MemoryServices

RAW_LIMIT = 32 * 1024 * 1024  # bytes read per file
WINDOW = 60  # characters of context each side of the first match
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_STOP = frozenset("a an the of to in on at by for and or is are was what who how why".split())


def needles(query: str, spellings: list[str]) -> list[str]:
    found: list[str] = []
    if len(query.strip()) >= 2:
        found.append(query.strip())
    for chunk in query.split():
        chunk = _EDGE.sub("", chunk)
        if len(chunk) >= 2 and chunk.lower() not in _STOP:
            found.append(chunk)
    for term in plan(query).terms:
        text = term.text
        if (term.kind == "cjk_word" and len(text) >= 2) or (term.kind == "word" and len(text) >= 3):
            found.append(text)
    found += [s for s in spellings if len(s.strip()) >= 2]
    unique: dict[str, str] = {}
    for needle in found:
        unique.setdefault(needle.casefold(), needle)
    return sorted(unique.values(), key=lambda n: (-len(n), n))


def _snippet(text: str, start: int, end: int, markers: tuple[str, str]) -> str:
    lo = max(0, start - WINDOW)
    hi = min(len(text), end + WINDOW)
    body = text[lo:start] + markers[0] + text[start:end] + markers[1] + text[end:hi]
    body = re.sub(r"\s+", " ", body).strip()
    return ("…" if lo else "") + body + ("…" if hi < len(text) else "")


def _title_and_heading(text: str, offset: int, fallback: str) -> tuple[str, str | None]:
    title = fallback
    heading = None
    position = 0
    for line in text.split("\n"):
        match = HEADING.match(line.rstrip("\r"))
        if match:
            if title == fallback and len(match.group(1)) == 1:
                title = match.group(2)
            if position <= offset:
                heading = match.group(2)
        position += len(line) + 1
        if position > offset and title != fallback:
            break
    return title, heading


def _read(root: Path, rel: str) -> str:
    """The head of a vault file, read like the sync reads it (no planted link followed, no
    FIFO waited on); OSError when it cannot be read."""
    try:
        fd, _stat = open_in_vault(root, rel)
    except FileRefused as exc:
        raise OSError(str(exc)) from None
    try:
        return read_at_most(fd, RAW_LIMIT).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def raw_scan(
    services: MemoryServices,
    query: str,
    spellings: list[str],
    access: Access,
    limit: int,
    markers: tuple[str, str],
    keep: Callable[[str], bool] = lambda _text: True,
) -> tuple[list[MemoryHit], int]:
    """(hits best first, files read). A file that holds the query verbatim always counts;
    otherwise `keep(text)` decides (lookup passes its coverage test)."""
    wanted = needles(query, spellings)
    if not wanted:
        return [], 0
    pattern = re.compile("|".join(re.escape(n) for n in wanted), re.IGNORECASE)
    weights = {n.casefold(): len(n) for n in wanted}
    scored: list[tuple[float, str, int, int]] = []
    skipped: list[Skipped] = []
    scanned = 0
    for stat in scan_vault(services.root, skipped, gitignore=services.gitignore):
        if not access.allows(stat.path):
            continue
        try:
            text = _read(services.root, stat.path)
        except OSError:
            continue
        scanned += 1
        matched: dict[str, tuple[int, int]] = {}
        for match in pattern.finditer(text):
            matched.setdefault(match.group(0).casefold(), (match.start(), match.end()))
        verbatim = query.strip().casefold() in matched
        if matched and (verbatim or keep(text)):
            score = float(sum(weights.get(k, len(k)) for k in matched))
            start, end = min(matched.values())
            scored.append((score, stat.path, start, end))
    scored.sort(key=lambda s: (-s[0], s[1]))
    hits: list[MemoryHit] = []
    for score, path, start, end in scored[:limit]:
        try:
            text = _read(services.root, path)
        except OSError:
            continue
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        title, heading = _title_and_heading(text, start, stem)
        hits.append(
            MemoryHit(
                path=path,
                title=title,
                date=date_from_name(stem),
                score=score,
                snippet=_snippet(text, start, end, markers),
                heading=heading,
                line=text.count("\n", 0, start) + 1,
                frontmatter={},
                tags=[],
                mode="raw",
                kind="file",
                level="L3",
            )
        )
    return hits, scanned
