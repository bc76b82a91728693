"""Reading a request's arguments strictly: a query string or a JSON body. An unknown
argument, a value of the wrong kind or out of range is a 400 naming it; nothing is
guessed (the MCP tools forgive a model's slips; a script gets told)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .errors import HTTPError

Kind = Literal["str", "int", "bool", "strs"]
MAX_TEXT_ARG = 2000  # characters of a query-string value (a query is capped lower by lore)


@dataclass(frozen=True)
class Arg:
    name: str
    kind: Kind = "str"
    required: bool = False
    default: Any = None
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    max_chars: int = MAX_TEXT_ARG
    description: str = ""


def _bad(message: str) -> HTTPError:
    return HTTPError(400, "bad_request", message)


def _check_text(arg: Arg, value: str) -> str:
    if "\x00" in value:
        raise _bad(f"{arg.name}: cannot contain NUL")
    if len(value) > arg.max_chars:
        raise _bad(f"{arg.name}: longer than {arg.max_chars} characters")
    if arg.choices and value not in arg.choices:
        raise _bad(f"{arg.name}: {value[:40]!r} is not one of {', '.join(arg.choices)}")
    return value


def _one(arg: Arg, value: Any, *, from_text: bool) -> Any:
    if arg.kind == "str":
        if not isinstance(value, str):
            raise _bad(f"{arg.name}: must be a string")
        return _check_text(arg, value)
    if arg.kind == "int":
        if from_text and isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            value = int(value.strip()) if len(value) < 12 else None
        if not isinstance(value, int) or isinstance(value, bool):
            raise _bad(f"{arg.name}: must be a whole number")
        if (arg.low is not None and value < arg.low) or (arg.high is not None and value > arg.high):
            raise _bad(f"{arg.name}: {value} is not in {arg.low}-{arg.high}")
        return value
    if arg.kind == "bool":
        if from_text and isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("1", "true", "yes", "on", ""):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
        if not isinstance(value, bool):
            raise _bad(f"{arg.name}: must be true or false")
        return value
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise _bad(f"{arg.name}: must be a list of strings")
    if len(items) > 64:
        raise _bad(f"{arg.name}: at most 64 values")
    return [_check_text(arg, v) for v in items]


def from_query(pairs: Sequence[tuple[str, str]], spec: Sequence[Arg]) -> dict[str, Any]:
    known = {a.name: a for a in spec}
    seen: dict[str, list[str]] = {}
    for key, value in pairs:
        if key not in known:
            names = ", ".join(known) or "none"
            raise _bad(f"unknown parameter {key[:40]!r} (this endpoint takes: {names})")
        seen.setdefault(key, []).append(value)
    out: dict[str, Any] = {}
    for arg in spec:
        values = seen.get(arg.name)
        if values is None:
            if arg.required:
                raise _bad(f"{arg.name}: required")
            out[arg.name] = arg.default
        elif arg.kind == "strs":
            out[arg.name] = _one(arg, values, from_text=True)
        elif len(values) > 1:
            raise _bad(f"{arg.name}: given {len(values)} times; once only")
        else:
            out[arg.name] = _one(arg, values[0], from_text=True)
    return out


def from_json(raw: bytes, spec: Sequence[Arg]) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise HTTPError(400, "bad_json", f"the body is not JSON: {str(exc)[:120]}") from None
    if not isinstance(data, dict):
        raise HTTPError(400, "bad_json", "the body must be a JSON object")
    return from_mapping(data, spec)


def from_mapping(data: Mapping[str, Any], spec: Sequence[Arg]) -> dict[str, Any]:
    known = {a.name: a for a in spec}
    for key in data:
        if key not in known:
            raise _bad(f"unknown field {str(key)[:40]!r} (this endpoint takes: {', '.join(known)})")
    out: dict[str, Any] = {}
    for arg in spec:
        value = data.get(arg.name)
        if value is None:
            if arg.required:
                raise _bad(f"{arg.name}: required")
            out[arg.name] = arg.default
        else:
            out[arg.name] = _one(arg, value, from_text=False)
    return out
