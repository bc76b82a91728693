"""Tool parameters: one declaration gives both the JSON schema a client shows the model and
the normaliser that reads what the model actually sent.

Models slip. Each slip with one obvious reading is read that way:
- another name for an argument: `q` for `query`, `tag` for `tags`, `file` for `path`;
  camelCase or kebab-case (`startLine`, `start-line`), singular for plural and back;
- a value of a near kind: "5" for 5, 7.0 for 7, "true"/"yes"/1 for true, one string where a
  list is wanted ("a, b" → ["a", "b"]), null or "" for "not given";
- a number above an argument's maximum is lowered to it (and the result says so).
Everything else is refused with one line that names the tool, the argument and what is
accepted: an unknown argument, a value of the wrong kind, a missing required argument, two
spellings of one argument with different values.

Pure Python (no MCP SDK), so it is tested on its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import QueryError

Kind = Literal["string", "integer", "boolean", "strings"]

_TRUE = {"true", "yes", "y", "on", "1"}
_FALSE = {"false", "no", "n", "off", "0"}
_INT = re.compile(r"^[+-]?\d+$")


class ArgumentError(QueryError):
    """A tool argument that cannot be read (names the tool and the argument)."""


@dataclass(frozen=True)
class Param:
    """One tool argument."""

    name: str
    kind: Kind
    description: str
    required: bool = False
    default: Any = None
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    synonyms: Mapping[str, str] = field(default_factory=dict)  # other spellings of a choice
    minimum: int | None = None
    maximum: int | None = None  # a larger number is lowered to this, with a notice
    max_length: int | None = None  # for strings

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {"type": "array", "items": {"type": "string"}}
            if self.kind == "strings"
            else {"type": self.kind}
        )
        out["description"] = self.description
        if self.choices:
            out["enum"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.default is not None:
            out["default"] = self.default
        return out


LIMIT_ALIASES = ("k", "top_k", "n", "max_results", "count", "num_results", "size")


def limit_param(description: str, default: int, maximum: int) -> Param:
    """The `limit` argument every listing tool takes, with the spellings models use for it."""
    return Param(
        "limit",
        "integer",
        description,
        default=default,
        aliases=LIMIT_ALIASES,
        minimum=1,
        maximum=maximum,
    )


def budget_param(what: str, default: int, minimum: int, maximum: int) -> Param:
    """The `budget` argument (bytes) of the tools that return a bounded text."""
    return Param(
        "budget",
        "integer",
        f"The most bytes (UTF-8) the {what} may take.",
        default=default,
        aliases=("max_bytes", "bytes", "size", "budget_bytes", "limit"),
        minimum=minimum,
        maximum=maximum,
    )


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    """The JSON schema of a tool's arguments. Extra properties are not forbidden, so that a
    slip (`q` for `query`) reaches the server and is read, rather than refused by a strict
    client before the server sees it."""
    return {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "required": [p.name for p in params if p.required],
    }


def _key(text: str) -> str:
    """`startLine`, `start-line`, `--start_line`, `Start Line` → `start_line`."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text.strip().lstrip("-"))
    return re.sub(r"[\s\-.]+", "_", snake).casefold()


def _variants(name: str) -> set[str]:
    key = _key(name)
    out = {key, key + "s"}
    if key.endswith("s") and len(key) > 3:
        out.add(key[:-1])
    if key.endswith("ies"):
        out.add(key[:-3] + "y")
    if key.endswith("y"):
        out.add(key[:-1] + "ies")
    return out


def lookup_table(params: Sequence[Param]) -> dict[str, Param]:
    """Every accepted spelling → its parameter. Raises ValueError when two parameters
    would share a spelling (a bug in a tool declaration, caught by the tests)."""
    table: dict[str, Param] = {}
    for param in params:
        for name in (param.name, *param.aliases):
            for variant in _variants(name):
                other = table.get(variant)
                if other is not None and other.name != param.name:
                    raise ValueError(f"{variant!r} would name both {other.name} and {param.name}")
                table[variant] = param
    return table


def signature(params: Sequence[Param]) -> str:
    return ", ".join(f"{p.name} (required)" if p.required else p.name for p in params)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _convert(tool: str, param: Param, value: Any) -> Any:
    where = f"{tool}: `{param.name}`"
    if param.kind == "string":
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ArgumentError(f"{where} must be a string, got {_show(value)}")
        text = str(value).strip()
        if param.max_length is not None and len(text) > param.max_length:
            raise ArgumentError(
                f"{where} is too long ({len(text)} characters; at most {param.max_length})"
            )
        return _choice(where, param, text) if param.choices else text
    if param.kind == "integer":
        number: int
        if isinstance(value, bool):
            raise ArgumentError(f"{where} must be a whole number, got {_show(value)}")
        if isinstance(value, int):
            number = value
        elif isinstance(value, float) and math.isfinite(value) and value == int(value):
            number = int(value)
        elif isinstance(value, str) and _INT.match(value.strip()):
            number = int(value.strip())
        else:
            raise ArgumentError(f"{where} must be a whole number, got {_show(value)}")
        if param.minimum is not None and number < param.minimum:
            raise ArgumentError(f"{where} must be at least {param.minimum}, got {number}")
        return number
    if param.kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().casefold() in _TRUE | _FALSE:
            return value.strip().casefold() in _TRUE
        raise ArgumentError(f"{where} must be true or false, got {_show(value)}")
    # strings
    items: list[Any]
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise ArgumentError(f"{where} must be a list of strings, got {_show(value)}")
    out: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise ArgumentError(f"{where} must be a list of strings, got item {_show(item)}")
        text = str(item).strip()
        if text and text not in out:
            out.append(text)
    return out


def _fold(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).casefold()


def _choice(where: str, param: Param, text: str) -> str:
    folded = _fold(text)
    for choice in param.choices:
        if _fold(choice) == folded:
            return choice
    for other, choice in param.synonyms.items():
        if _fold(other) == folded:
            return choice
    raise ArgumentError(f"{where} must be one of {', '.join(param.choices)}, got {_show(text)}")


def normalise(
    tool: str, params: Sequence[Param], raw: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """Read `raw` (what the client sent) as the arguments of `tool`.

    Returns every parameter by its own name (the default when not given) and the notices to
    show with the result; raises ArgumentError for what cannot be read."""
    if raw is not None and not isinstance(raw, Mapping):
        raise ArgumentError(f"{tool}: arguments must be an object, got {_show(raw)}")
    table = lookup_table(params)
    given: dict[str, list[tuple[str, Any]]] = {}
    unknown: list[str] = []
    for key, sent in (raw or {}).items():
        param = table.get(_key(str(key)))
        if param is None:
            unknown.append(str(key))
        else:
            given.setdefault(param.name, []).append((str(key), sent))
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        plural = "s" if len(unknown) > 1 else ""
        raise ArgumentError(
            f"{tool}: unknown argument{plural} {names}; it takes {signature(params)}"
        )
    out: dict[str, Any] = {}
    notices: list[str] = []
    for param in params:
        values = [
            (k, converted)
            for k, v in given.get(param.name, [])
            if not _absent(v)
            # a string in a list (["  "]) is read as the string: blank is not given either
            and not _absent(converted := _convert(tool, param, v))
        ]
        if param.kind == "strings":
            merged = [item for _, items in values for item in items]
            value: Any = list(dict.fromkeys(merged)) if values else None
        elif len({repr(v) for _, v in values}) > 1:
            spelled = " and ".join(f"{k}={_show(v)}" for k, v in values)
            raise ArgumentError(
                f"{tool}: `{param.name}` given twice with different values ({spelled})"
            )
        else:
            value = values[0][1] if values else None
        if value is None or value == []:
            if param.required:
                raise ArgumentError(
                    f"{tool}: `{param.name}` is required ({param.description.split('.')[0]})"
                )
            value = param.default
        if (
            param.kind == "integer"
            and value is not None
            and param.maximum is not None
            and value > param.maximum
        ):
            notices.append(f"{param.name} {value} lowered to its maximum {param.maximum}")
            value = param.maximum
        out[param.name] = value
    return out, notices
