"""`remember`: write a conclusion into today's daily note at once, and index it at once.

An entry looks like this in `memory/2026-11-22.md`:

    ## 14:03:12 Redis 迁移定在 11 月底 {#m-140312-3f2a}

    Redis 迁移定在 11 月底，张三负责。

    status: claimed · trust: inferred · source: chat 2026-11-22 · entities: [[张三]]

The `{#m-…}` heading id is the entry's stable anchor (`memory/2026-11-22.md#m-140312-3f2a`):
made once from the time and the text, never recomputed. Entity names are normalised on
write (an alias such as "zs" is written as the card's name, 张三). The same entry written
twice the same day (same text, status, trust, source, entities) is written once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import (
    AccessError,
    ConfigError,
    IndexBusyError,
    IndexFullError,
    IndexReadOnlyError,
    PathError,
)
from ..ingest.markdown import iter_lines, open_fence
from ..safe_write import append_locked
from .access import access_for
from .entries import STATUSES, TRUST_LEVELS, parse_daily
from .keys import fold_key
from .model import Memory
from .registry import Registry

if TYPE_CHECKING:
    from .services import MemoryServices

MAX_TEXT_BYTES = 64 * 1024
MAX_ENTITIES = 64
TITLE_CHARS = 48


def check_text(text: object, what: str = "remember") -> str:
    if not isinstance(text, str):
        raise ConfigError(f"{what}: the text must be a string, not {type(text).__name__}")
    clean = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not clean:
        raise ConfigError(f"{what}: the text is empty; nothing to remember")
    if "\x00" in clean:
        raise ConfigError(f"{what}: the text contains a NUL character")
    size = len(clean.encode("utf-8"))
    if size > MAX_TEXT_BYTES:
        raise ConfigError(
            f"{what}: the text is {size:,} bytes; at most {MAX_TEXT_BYTES:,} fit one entry",
            hint="write a longer document as a note and remember a conclusion pointing at it",
        )
    return clean


def one_line(value: str) -> str:
    """A metadata value on one line, without the ' · ' that separates the fields."""
    return re.sub(r"\s+", " ", value).replace(" · ", " - ").strip()


def body_lines(text: str) -> str:
    """The entry text as Markdown that cannot break the note: a line that would start a
    heading is escaped, and an unclosed code fence is closed."""
    out: list[str] = []
    for line in iter_lines(text, 1):
        escape = not line.code and line.text.lstrip().startswith("#")
        out.append(("\\" + line.text.lstrip() if escape else line.text).rstrip())
    fence = open_fence(text)
    if fence is not None:
        out.append(fence)
    return "\n".join(out)


def continuation(current: str, date: str) -> str:
    """What goes before a block appended to the daily note `current`: a new note's front
    matter and title, else a line break when the note does not end with one, and the
    closing fence of a code block left open (the block would be read as code otherwise:
    never found, and written again by the next call)."""
    if not current:
        return f"---\ndate: {date}\n---\n# {date}\n"
    head = "" if current.endswith("\n") else "\n"
    fence = open_fence(current)
    return head + (f"{fence}\n" if fence is not None else "")


def sync_written(services: MemoryServices, rel: str) -> tuple[bool, list[str]]:
    """Sync after writing the note `rel`: (is it in the index now, what to tell). A busy
    or read-only index, or a note the ignore rules leave out, is said, never hidden."""
    try:
        report = services.sync()
    except IndexBusyError:
        return False, ["the index is busy; the entry is saved and the next sync indexes it"]
    except IndexFullError:
        return False, ["the disk is full; the entry is saved and the next sync indexes it"]
    except IndexReadOnlyError as exc:
        return False, [f"saved but not indexed: {exc.message}"]
    if services.store.has_note(rel):
        return True, list(report.notices)
    why = next((s.reason for s in report.skipped if s.path == rel), None) or (
        "the vault ignores it (.loreignore or an always-ignored folder)"
    )
    return False, [*report.notices, f"{rel} is saved but not indexed: {why}; search cannot find it"]


def entry_title(text: str) -> str:
    first = re.sub(r"\s+", " ", text.split("\n", 1)[0]).strip()
    first = re.sub(r"[{}#`]", "", first).strip() or "memory"
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


def normalise_entities(
    names: list[str] | tuple[str, ...], registry: Registry
) -> tuple[list[str], list[str]]:
    """(canonical names, notes): an alias becomes its entity's name."""
    if len(names) > MAX_ENTITIES:
        raise ConfigError(f"--entity: {len(names):,} given; an entry names at most {MAX_ENTITIES}")
    out: list[str] = []
    notes: list[str] = []
    for raw in names:
        if not isinstance(raw, str) or not raw.strip() or not fold_key(raw):
            raise ConfigError(f"--entity: {raw!r} is not a name")
        name = one_line(raw).strip("[]")
        key, claimants = registry.resolve(name)
        if key is not None:
            canonical = registry.entities[key].name
            if fold_key(canonical) != fold_key(name) or canonical != name:
                notes.append(f"entity {name!r} written as {canonical!r}")
            name = canonical
        elif len(claimants) > 1:
            owners = ", ".join(registry.entities[c].name for c in claimants)
            notes.append(f"entity {name!r} is an alias of {owners}; kept as written")
        else:
            notes.append(f"entity {name!r} has no card yet; kept as written")
        if fold_key(name) not in {fold_key(n) for n in out}:
            out.append(name)
    return out, notes


def write_daily(root: Path, rel: str, build: Callable[[str], str | None]) -> None:
    """append_locked (never through a link), with a file-system failure (a file where the
    folder must be, a full disk, no permission) as one line naming the note."""
    try:
        append_locked(root, rel, build)
    except OSError as exc:
        raise PathError(f"{rel}: cannot write: {exc.strerror or exc}") from None


def _same(entry_text: str, text: str) -> bool:
    return re.sub(r"\s+", " ", entry_text).strip() == re.sub(r"\s+", " ", body_lines(text)).strip()


def remember(
    services: MemoryServices,
    text: str,
    *,
    entities: list[str] | tuple[str, ...] = (),
    status: str = "claimed",
    source: str | None = None,
    trust: str = "inferred",
    at: dt.datetime | None = None,
    principal: str | None = None,
) -> Memory:
    text = check_text(text)
    if status not in STATUSES:
        raise ConfigError(f"--status: {status!r} is not one of {', '.join(STATUSES)}")
    if trust not in TRUST_LEVELS:
        raise ConfigError(f"--trust: {trust!r} is not one of {', '.join(TRUST_LEVELS)}")
    source = one_line(source) if source else None
    if status == "verified" and not source:
        raise ConfigError(
            "--status verified needs --source: the evidence someone can check",
            hint="without evidence an entry can only be claimed",
        )
    if isinstance(entities, str):
        entities = [entities]
    settings = services.settings
    access = access_for(settings, principal)  # names resolve through visible cards only
    registry = services.registry(access)
    names, notes = normalise_entities(list(entities), registry)
    now = (at or settings.now()).replace(microsecond=0)  # LORE_TODAY names the day
    date, clock = now.date().isoformat(), now.strftime("%H:%M:%S")
    rel = f"{settings.dir}/{date}.md"
    if not access.allows(rel):
        raise AccessError(f"remember: {rel} is outside what {principal!r} may write")
    meta = [f"status: {status}", f"trust: {trust}"]
    if source:
        meta.append(f"source: {source}")
    if names:
        meta.append("entities: " + ", ".join(f"[[{n}]]" for n in names))
    digest = hashlib.sha1(f"{date} {clock} {text}".encode()).hexdigest()
    result: dict[str, object] = {}

    def build(current: str) -> str | None:
        for entry in parse_daily(current, 1, date):
            if (
                entry.kind == "remember"
                and _same(entry.text, text)
                and (entry.status, entry.trust, entry.source) == (status, trust, source)
                and [fold_key(e) for e in entry.entities] == [fold_key(n) for n in names]
            ):
                result.update(anchor=entry.anchor, line=entry.line, time=entry.time or "")
                return None
        anchor = f"m-{clock.replace(':', '')}-{digest[:4]}"
        n = 2
        while f"{{#{anchor}}}" in current:
            anchor = f"m-{clock.replace(':', '')}-{digest[:4]}-{n}"
            n += 1
        head = continuation(current, date)
        block = (
            f"\n## {clock} {entry_title(text)} {{#{anchor}}}\n\n"
            f"{body_lines(text)}\n\n{' · '.join(meta)}\n"
        )
        line = (current + head).count("\n") + 2
        result.update(anchor=anchor, line=line, time=clock, created=True)
        return head + block

    write_daily(services.root, rel, build)  # never through a link (lore.safe_write)
    indexed, told = sync_written(services, rel)
    notes += told
    return Memory(
        path=rel,
        anchor=str(result["anchor"]),
        line=int(str(result["line"])),
        date=date,
        text=text,
        time=str(result["time"]) or clock,
        status=status,
        trust=trust,
        source=source,
        entities=names,
        created=bool(result.get("created", False)),
        indexed=indexed,
        notes=notes,
    )
