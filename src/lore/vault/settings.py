"""The settings of one opened vault (lore.settings has the sections): read at the
composition root (lore.vault.core) and handed to the services from here. Apart from
lore.settings so that opening a vault does not make the `Settings` dataclass a one-shot
search never builds.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import CONFIG_FILE, LoreSettings
from ..providers.settings import ProviderSettings

if TYPE_CHECKING:
    from ..interest.settings import InterestSettings
    from ..memory.settings import MemorySettings
    from ..settings import Settings


class SettingsSource:
    """The settings of one opened vault. The [lore] and providers sections are read when it
    opens. The memory and interest sections are read on first use (a vault whose [memory]
    is wrong still opens and searches, and says so where it counts), and again when the
    config file or their LORE_* variables change: a long-running server sees an edited
    [access].
    Settings given by the Python API are used as they are, and never re-read."""

    def __init__(
        self,
        root: Path,
        lore: LoreSettings,
        given: Settings | None = None,
        providers: ProviderSettings | None = None,
    ) -> None:
        self.root = root
        self.lore = lore
        self.providers = ProviderSettings.of(lore) if providers is None else providers
        self._given = given
        self._stamp: object = None
        self._sections: tuple[MemorySettings | None, InterestSettings | None] = (None, None)

    def _current_stamp(self) -> object:
        from ..interest.settings import ENV_PREFIX
        from ..memory.settings import ENV as MEMORY_ENV

        lore_dir = self.root / CONFIG_FILE.parent
        try:
            st = os.stat(self.root / CONFIG_FILE)
            file: tuple[int, ...] | None = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            file = None
        env = sorted(
            (name, value)
            for name, value in os.environ.items()
            if name in MEMORY_ENV or name.startswith(ENV_PREFIX)
        )
        return lore_dir.is_symlink(), file, tuple(env)

    def _fresh(self) -> tuple[MemorySettings | None, InterestSettings | None]:
        stamp = self._current_stamp()
        if stamp != self._stamp:
            self._sections, self._stamp = (None, None), stamp
        return self._sections

    def memory(self) -> MemorySettings:
        if self._given is not None:
            return self._given.memory
        memory, interest = self._fresh()
        if memory is None:
            from ..memory.settings import load_memory_settings

            memory = load_memory_settings(self.root)  # raises again until fixed
            self._sections = (memory, interest)
        return memory

    def interest(self) -> InterestSettings:
        if self._given is not None:
            return self._given.interest
        memory, interest = self._fresh()
        if interest is None:
            from ..interest.settings import load_interest_settings

            interest = load_interest_settings(self.root)
            self._sections = (memory, interest)
        return interest

    def today(self) -> dt.date:
        """The one clock every part of an opened vault asks for the date."""
        return self.memory().today_date()

    def get(self) -> Settings:
        from ..settings import Settings

        return Settings(
            lore=self.lore,
            memory=self.memory(),
            interest=self.interest(),
            providers=self.providers,
        )
