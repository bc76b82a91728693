"""Memory settings: the `[memory]` and `[access]` tables of `<vault>/.lore/config.toml`.

Precedence as everywhere in lore: defaults < config file < `LORE_*` environment.

    [memory]
    dir = "memory"            # daily notes: memory/YYYY-MM-DD.md
    entities = "entities"     # a file per entity card
    core = "MEMORY.md"        # the core file: conclusions with anchors
    half_life_days = 30       # activity decay; pinned or priority >= pinned_priority never decay
    decay_floor = 0.9         # the lowest weight decay can give (rank is lowered, never zero)
    pinned_priority = 4
    stale_days = 30           # `lore check`: claimed statuses older than this
    today = "2026-11-30"      # optional fixed "today" for reproducible runs (LORE_TODAY)

    [access]                  # principal → path globs it may see (`--as PRINCIPAL`)
    agent = ["memory/**", "entities/**", "MEMORY.md"]

Changing `dir`, `entities` or `core` changes what the index derives: run `lore rebuild`.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..config import config_table, number_in, read_config
from ..errors import ConfigError

MAX_DAYS = 36_500  # a hundred years: any longer span overflows dates
MAX_ACCESS_GLOBS = 100  # per principal: each is a GLOB in every query's WHERE clause
MAX_GLOB_CHARS = 1024

ENV = {
    "LORE_TODAY": "today",
    "LORE_HALF_LIFE_DAYS": "half_life_days",
}


@dataclass(frozen=True)
class MemorySettings:
    dir: str = "memory"
    entities: str = "entities"
    core: str = "MEMORY.md"
    half_life_days: float = 30.0
    decay_floor: float = 0.9  # a nudge: relevance still decides (see bench/results/memory.md)
    pinned_priority: int = 4
    stale_days: int = 30
    today: str | None = None
    access: dict[str, tuple[str, ...]] = field(default_factory=dict)
    has_access_table: bool = False

    def today_date(self) -> dt.date:
        """lore's clock: the fixed `today` when set (LORE_TODAY, the file, the Python
        API), else the machine's date."""
        return dt.date.fromisoformat(self.today) if self.today else dt.date.today()

    def now(self) -> dt.datetime:
        """The local time now, on the day `today_date` says."""
        now = dt.datetime.now()
        return dt.datetime.combine(self.today_date(), now.time()) if self.today else now

    @property
    def layout(self) -> str:
        """What the derived tables depend on (recorded in meta; a change needs a rebuild)."""
        return f"{self.dir}|{self.entities}|{self.core}"


def _folder(value: Any, name: str, origin: str) -> str:
    text = str(value).replace("\\", "/").strip().strip("/")
    parts = text.split("/")
    if not text or value is None or ".." in parts or text.startswith(("~", ".lore")):
        raise ConfigError(f"{origin}: memory.{name} {value!r} must be a path inside the vault")
    return text


def _coerce(name: str, value: Any, origin: str) -> Any:
    try:
        if name in ("dir", "entities", "core"):
            return _folder(value, name, origin)
        if name == "half_life_days":
            return number_in(float, 0, MAX_DAYS, open_low=True)(value)
        if name == "decay_floor":
            number = float(value)
            if not 0.0 <= number <= 1.0:
                raise ValueError("must be in [0, 1]")
            return number
        if name in ("pinned_priority", "stale_days"):
            return number_in(int, 0, MAX_DAYS)(value)
        if name == "today":
            return dt.date.fromisoformat(str(value).strip()).isoformat()
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: invalid value {value!r} for memory.{name}: {exc}") from None
    raise ConfigError(f"{origin}: unknown setting memory.{name}")


def _access(table: Any, origin: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(table, dict):
        raise ConfigError(f"{origin}: [access] must be a table of principal = [path globs]")
    rules: dict[str, tuple[str, ...]] = {}
    for principal, globs in table.items():
        if isinstance(globs, str):
            globs = [globs]
        if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise ConfigError(
                f"{origin}: access.{principal} must be a list of path globs, not {globs!r}"
            )
        kept = tuple(g for g in globs if g.strip())
        if len(kept) > MAX_ACCESS_GLOBS or any(len(g) > MAX_GLOB_CHARS for g in kept):
            raise ConfigError(
                f"{origin}: access.{principal} has {len(kept)} globs; at most"
                f" {MAX_ACCESS_GLOBS}, each at most {MAX_GLOB_CHARS} characters"
            )
        rules[str(principal)] = kept
    return rules


def _separate(values: dict[str, Any], origin: str, base: MemorySettings) -> None:
    """The daily notes folder, the entity card folder and the core file are three places:
    none can be another, or lie inside another (`dir = "MEMORY.md"` made `remember` try to
    create a folder where the core file is)."""
    places = {k: values.get(k, getattr(base, k)) for k in ("dir", "entities", "core")}
    for a, b in (("dir", "entities"), ("dir", "core"), ("entities", "core")):
        x, y = places[a].casefold(), places[b].casefold()
        if x == y or y.startswith(x + "/") or x.startswith(y + "/"):
            raise ConfigError(
                f"{origin}: memory.{a} {places[a]!r} and memory.{b} {places[b]!r} overlap",
                hint="the daily notes, entity cards and core file need places of their own",
            )


def load_memory_settings(vault_root: Path) -> MemorySettings:
    values: dict[str, Any] = {}
    config_path, data = read_config(vault_root)
    if data is not None:
        for key, value in config_table(config_path, data, "memory").items():
            values[key] = _coerce(key, value, str(config_path))
        if "access" in data:
            values["access"] = _access(data["access"], str(config_path))
            values["has_access_table"] = True
        _separate(values, str(config_path), MemorySettings())
    for env, name in ENV.items():
        if os.environ.get(env):
            values[name] = _coerce(name, os.environ[env], env)
    return MemorySettings(**values)


def with_overrides(settings: MemorySettings, overrides: Mapping[str, Any]) -> MemorySettings:
    """`settings` with `overrides` (name → value, None: not given; `access` a table of
    principal → globs), each checked as a value from the file is."""
    values: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue
        if key == "access":
            values.update(access=_access(value, "access"), has_access_table=True)
        else:
            values[key] = _coerce(key, value, "memory")
    _separate(values, "memory", settings)
    return replace(settings, **values)
