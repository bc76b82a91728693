"""Every setting of one vault, in sections, read at the composition root (lore.vault) and
handed to the services: nothing below the vault reads a config file.

    lore       the [lore] table: what is indexed, how it ranks (lore.config)
    memory     [memory] and [access], and the clock: `today` (lore.memory.settings)
    interest   [interest]: how the interest map is built (lore.interest.settings)
    providers  the embedding model and the LLM, their endpoints and how much of them a
               sync may use (lore.providers.settings): in the files they are [lore]
               settings, so the section is built from the [lore] section as read, after
               the trust rules of lore.config; `lore` keeps a copy of them (which
               `replace` keeps in step), and only `providers` is read by the providers

Each section: defaults < the user's config file < <vault>/.lore/config.toml < LORE_* <
what a flag or the Python API gives. A `Settings` given to `lore.open(..., settings=...)`
is used as it is: the config files and the environment are not read for it.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import LoreSettings, load_lore_settings
from .config import with_overrides as lore_with
from .providers.settings import PROVIDER_NAMES, ProviderSettings
from .providers.settings import with_overrides as providers_with

if TYPE_CHECKING:
    # The [memory] and [interest] sections are imported when they are first read: a
    # `lore search` process reads neither (lore.vault.core reads them on first use).
    from .interest.settings import InterestSettings
    from .memory.settings import MemorySettings


def _memory_defaults() -> MemorySettings:
    from .memory.settings import MemorySettings

    return MemorySettings()


def _interest_defaults() -> InterestSettings:
    from .interest.settings import InterestSettings

    return InterestSettings()


@dataclass(frozen=True)
class Settings:
    lore: LoreSettings = field(default_factory=LoreSettings)
    memory: MemorySettings = field(default_factory=_memory_defaults)
    interest: InterestSettings = field(default_factory=_interest_defaults)
    providers: ProviderSettings = field(default_factory=ProviderSettings)

    def __post_init__(self) -> None:
        # `Settings(lore=LoreSettings(embed_provider=...))`: the providers section follows
        # the [lore] values it was not given on its own (the files keep them in [lore]).
        if self.providers == ProviderSettings():
            object.__setattr__(self, "providers", ProviderSettings.of(self.lore))

    def today(self) -> dt.date:
        """The date lore takes as today (memory.today, else the machine's)."""
        return self.memory.today_date()

    def replace(
        self,
        *,
        lore: Mapping[str, Any] | None = None,
        memory: Mapping[str, Any] | None = None,
        interest: Mapping[str, Any] | None = None,
        providers: Mapping[str, Any] | None = None,
    ) -> Settings:
        """These settings with some changed, by section and name
        (`memory={"today": "2026-11-30"}`), each checked as a value from a file is: a bad
        one is a ConfigError naming it. A provider setting given in `lore` (its section
        in the files) changes `providers` too, and one given in `providers` the copy in
        `lore`."""
        from .interest.settings import with_overrides as interest_with
        from .memory.settings import with_overrides as memory_with

        lore = dict(lore or {})
        given = {**{k: v for k, v in lore.items() if k in PROVIDER_NAMES}, **(providers or {})}
        return Settings(
            lore=lore_with(self.lore, {**lore, **given}),
            memory=memory_with(self.memory, memory or {}),
            interest=interest_with(self.interest, interest or {}),
            providers=providers_with(self.providers, given),
        )


def load_settings(vault: str | os.PathLike[str], **lore: Any) -> Settings:
    """Every section of the vault's settings, from the files and the environment; `lore`:
    [lore] settings by name, as `lore.open` takes them."""
    from .interest.settings import load_interest_settings
    from .memory.settings import load_memory_settings

    root = Path(vault).expanduser().resolve()
    read = load_lore_settings(root, **lore)
    return Settings(
        lore=read,
        memory=load_memory_settings(root),
        interest=load_interest_settings(root),
        providers=ProviderSettings.of(read),
    )
