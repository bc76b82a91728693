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
from dataclasses import fields
from typing import Any

from ..config import ProviderSettings
from ..config import with_overrides as checked_overrides

__all__ = ["PROVIDER_NAMES", "ProviderSettings", "with_overrides"]

PROVIDER_NAMES = frozenset(f.name for f in fields(ProviderSettings))


def with_overrides(settings: ProviderSettings, overrides: Mapping[str, Any]) -> ProviderSettings:
    """`settings` with `overrides` (name → value; None means "not given"), each checked as
    a value from a file is; a name that is not a provider setting is a ConfigError."""
    return checked_overrides(settings, overrides, PROVIDER_NAMES, "provider setting")
