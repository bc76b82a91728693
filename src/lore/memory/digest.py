"""`digest`: turn a day's raw material (a transcript as JSONL or plain text, a document)
into a section of that day's daily note: decisions, conclusions, open items, lessons.

The section's anchor is made from the input's content (`{#d-…}`), so digesting the same
input twice writes nothing the second time, wherever and whenever it is run (and calls no
model). Extraction is by the configured LLM when there is one (`memory.digest_llm`: fixed
versioned prompt, strict validation, grounding, answers cached per input hash, model and
prompt version), else heuristic (`memory.extract`). When the LLM fails (endpoint down,
timeout, HTTP error, prose or an answer out of shape), the heuristic extractor is used and
the report carries one notice saying what failed. The report and the section's metadata
line name the extractor (`heuristic` or `llm:<provider>:<model>`).

JSONL: one JSON object a line, the text under `content` / `text` / `message` / `body`
(a string, or a list of `{"type": "text", "text": ...}` parts), the speaker under `role` /
`speaker` / `author` / `name`, the time under `timestamp` / `time` / `ts` / `created_at` /
`date`. System and tool messages are left out. The note's date is `--date`, else the
latest date in the timestamps, else today.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, LoreError
from ..ingest.markdown import as_date
from ..providers.none import Absent
from .entries import TRUST_LEVELS
from .extract import KINDS, LABELS, extract
from .model import DigestReport
from .write import MAX_TEXT_BYTES, body_lines, continuation, one_line, sync_written, write_daily

if TYPE_CHECKING:
    from .services import MemoryServices

MAX_INPUT_BYTES = 64 * MAX_TEXT_BYTES
_TEXT_KEYS = ("content", "text", "message", "body")
_ROLE_KEYS = ("role", "speaker", "author", "name", "from")
_TIME_KEYS = ("timestamp", "time", "ts", "created_at", "date")
_SKIP_ROLES = {"system", "tool", "function"}


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") not in (None, "text", "input_text", "output_text"):
            return ""
        return _text_of(value.get("text", ""))
    return ""


def _time_of(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    return as_date(value)[0] if isinstance(value, str) else None


def read_transcript(data: str, name: str) -> tuple[str, str | None, int]:
    """(plain text, latest date seen or None, lines read) of a JSONL or plain transcript."""
    lines = data.replace("\r\n", "\n").split("\n")
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    if not first.startswith("{"):
        return data, None, len([ln for ln in lines if ln.strip()])
    out: list[str] = []
    dates: list[str] = []
    count = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        count += 1
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{name} line {number}: not a JSON object ({exc.msg})") from None
        if not isinstance(item, dict):
            raise ConfigError(f"{name} line {number}: not a JSON object")
        role = next((str(item[k]) for k in _ROLE_KEYS if isinstance(item.get(k), str)), "")
        date = next((d for k in _TIME_KEYS if (d := _time_of(item.get(k)))), None)
        if date:
            dates.append(date)
        if role.lower() in _SKIP_ROLES:
            continue
        text = next((_text_of(item[k]) for k in _TEXT_KEYS if k in item), "").strip()
        if text:
            out.append(f"{role}: {text}" if role else text)
    return "\n".join(out), max(dates) if dates else None, count


def _extract(
    services: MemoryServices, text: str, use_llm: bool
) -> tuple[dict[str, list[str]], str, list[dict[str, str]], list[str]]:
    """(items, extractor, dropped items, notices): the LLM's when configured and working,
    else the heuristic's (with a notice, the first time the LLM fails in this session)."""
    caps = services.capabilities
    chat = caps.chat() if use_llm else None
    if chat is not None and not isinstance(chat, Absent) and caps.llm_state()[0]:
        from .digest_llm import llm_extract

        try:
            found = llm_extract(services.store, chat, text)
        except LoreError as exc:
            told = caps.fail("llm", exc)
            notices = [f"digest used the heuristic extractor: {told}"] if told else []
            return extract(text), "heuristic", [], notices
        return found.items, f"llm:{chat.identity}", found.dropped, []
    return extract(text), "heuristic", [], []


def _holds(path: Path, anchor: str) -> bool:
    try:
        return f"{{#{anchor}}}" in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def digest(
    services: MemoryServices,
    data: str,
    *,
    name: str = "stdin",
    date: str | None = None,
    trust: str = "inferred",
    use_llm: bool = True,
) -> DigestReport:
    if not isinstance(data, str):
        raise ConfigError(f"digest: {name}: the input must be text")
    size = len(data.encode("utf-8"))
    if size > MAX_INPUT_BYTES:
        raise ConfigError(f"digest: {name} is {size:,} bytes; at most {MAX_INPUT_BYTES:,}")
    if trust not in TRUST_LEVELS:
        raise ConfigError(f"--trust: {trust!r} is not one of {', '.join(TRUST_LEVELS)}")
    if "\x00" in data:
        raise ConfigError(f"digest: {name} is binary (contains NUL bytes), not a transcript")
    if date is not None:
        day, _raw = as_date(date)
        if day is None or not re.fullmatch(r"\s*\d{4}-\d{1,2}-\d{1,2}\s*", date):
            raise ConfigError(f"--date: {date!r} is not a date (YYYY-MM-DD)")
        date = day
    text, seen_date, count = read_transcript(data, name)
    settings = services.settings
    day = date or seen_date or settings.today_date().isoformat()
    normalised = re.sub(r"\s+", " ", text).strip()
    anchor = "d-" + hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:10]
    source = one_line(name) or "stdin"
    rel = f"{settings.dir}/{day}.md"
    # The index may lag the files (a daily note deleted since the last sync): an earlier
    # digest counts only while its note still holds its anchor.
    earlier = [
        e
        for e in services.store.entries(None, kinds=("digest",))
        if e["anchor"] == anchor and _holds(services.root / str(e["path"]), anchor)
    ]
    if earlier:  # no model is asked: the items shown are the heuristic's
        return DigestReport(
            earlier[0]["path"],
            anchor,
            str(earlier[0]["date"] or day),
            source,
            False,
            extract(text),
            lines_read=count,
            reason="this input was digested before; nothing written",
        )
    items, method, dropped, notices = _extract(services, text, use_llm)
    if not any(items.values()):
        return DigestReport(
            rel,
            anchor,
            day,
            source,
            False,
            items,
            method=method,
            lines_read=count,
            reason=f"nothing worth keeping: no decision, conclusion, open item or lesson in "
            f"{count} line(s)",
            dropped=dropped,
            notices=notices,
        )
    created: dict[str, bool] = {}

    def build(current: str) -> str | None:
        if f"{{#{anchor}}}" in current:
            return None
        parts = [f"\n## Digest · {source} {{#{anchor}}}\n"]
        for kind in KINDS:
            if items[kind]:
                parts.append(f"\n### {LABELS[kind]}\n\n")
                box = "[ ] " if kind == "open_items" else ""
                parts += [f"- {box}{body_lines(item)}\n" for item in items[kind]]
        parts.append(
            f"\nsource: {source} · trust: {trust} · status: claimed · extractor: {method}\n"
        )
        created["yes"] = True
        return continuation(current, day) + "".join(parts)

    write_daily(services.root, rel, build)  # never through a link (lore.safe_write)
    indexed, told = sync_written(services, rel)
    notices += told
    return DigestReport(
        rel,
        anchor,
        day,
        source,
        bool(created),
        items,
        method=method,
        lines_read=count,
        indexed=indexed,
        reason=None if created else "this input was digested before; nothing written",
        dropped=dropped,
        notices=notices,
    )
