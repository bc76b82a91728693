"""Settings and their one loader. Precedence: defaults < <vault>/.lore/config.toml <
LORE_* environment < explicit arguments (CLI flags or API keywords)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import ConfigError

CONFIG_FILE = Path(".lore") / "config.toml"


@dataclass(frozen=True)
class Settings:
    db: Path | None = None
    max_file_bytes: int = 8 * 1024 * 1024
    field_weights: dict[str, float] = field(
        default_factory=lambda: {"title": 4.0, "tags": 3.0, "summary": 1.0, "body": 1.0}
    )
    highlight: tuple[str, str] = ("«", "»")
    max_df_ratio: float = 0.1


_ENV = {
    "LORE_DB": "db",
    "LORE_MAX_FILE_BYTES": "max_file_bytes",
    "LORE_FIELD_WEIGHTS": "field_weights",
    "LORE_MAX_DF_RATIO": "max_df_ratio",
}


def _coerce(name: str, value: Any, origin: str) -> Any:
    try:
        if name == "db":
            return Path(str(value)).expanduser()
        if name == "max_file_bytes":
            number = int(value)
            if number < 1024:
                raise ValueError("must be at least 1024")
            return number
        if name == "field_weights":
            if isinstance(value, str):
                pairs = (item.split("=", 1) for item in value.split(",") if item.strip())
                value = {k.strip(): v for k, v in pairs}
            weights = {str(k): float(v) for k, v in dict(value).items()}
            unknown = set(weights) - {"title", "tags", "summary", "body"}
            if unknown:
                raise ValueError(f"unknown field(s) {', '.join(sorted(unknown))}")
            return {**Settings().field_weights, **weights}
        if name == "max_df_ratio":
            ratio = float(value)
            if not 0.0 < ratio <= 1.0:
                raise ValueError("must be in (0, 1]")
            return ratio
        if name == "highlight":
            start, end = value
            return (str(start), str(end))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: invalid value {value!r} for {name}: {exc}") from None
    return value


def load_settings(vault_root: Path, **overrides: Any) -> Settings:
    settings = Settings()
    known = {f.name for f in fields(Settings)}
    config_path = vault_root / CONFIG_FILE
    if config_path.is_file():
        try:
            data = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_path}: {exc}") from None
        section = data.get("lore", data)
        for key, value in section.items():
            if key in known:
                settings = replace(settings, **{key: _coerce(key, value, str(config_path))})
        if settings.db is not None and not settings.db.is_absolute():
            settings = replace(settings, db=vault_root / settings.db)  # relative to the vault
    for env, name in _ENV.items():
        if os.environ.get(env):
            settings = replace(settings, **{name: _coerce(name, os.environ[env], env)})
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in known:
            raise ConfigError(f"unknown setting {key!r}")
        settings = replace(settings, **{key: _coerce(key, value, key)})
    return settings
