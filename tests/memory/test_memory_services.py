"""What the vault hands the memory services: memory settings read once and again only when
the config (or LORE_TODAY) changes, and an entity registry kept until the index changes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_files
from memory_support import TODAY, write

import lore
from lore.config import LoreSettings
from lore.vault.settings import SettingsSource

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]


def _bump(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**10))


def test_memory_settings_are_read_once_until_the_file_changes(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(make_vault())
    config = root / ".lore" / "config.toml"
    source = SettingsSource(root, LoreSettings())
    first = source.memory()
    assert first.today == TODAY
    assert source.memory() is first  # nothing changed: the same object, the file not re-read

    _bump(config, config.read_text(encoding="utf-8").replace(TODAY, "2026-01-02"))
    assert source.memory().today == "2026-01-02"

    monkeypatch.setenv("LORE_TODAY", "2025-05-05")
    assert source.memory().today == "2025-05-05"  # the environment outranks the file

    monkeypatch.delenv("LORE_TODAY")
    _bump(config, "[memory]\nhalf_life_days = -1\n")
    with pytest.raises(lore.ConfigError, match="half_life_days"):
        source.memory()
    with pytest.raises(lore.ConfigError):  # a broken file is never served from the cache
        source.memory()


@pytest.mark.usefixtures("on_backend")  # on SQLite and on PostgreSQL
def test_alias_expansion_follows_a_card_added_while_the_vault_is_open(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    root = write(make_vault())
    write_files(root, {"meetings/sync.md": "# Sync\n\n王五 presented the rollout.\n"})
    vault = open_vault(root)
    vault.sync()
    assert "meetings/sync.md" not in [h.path for h in vault.search("quokka")]

    write_files(root, {"entities/王五.md": "---\ntitle: 王五\naliases: [quokka]\n---\n# 王五\n"})
    vault.sync()  # the index changed: the registry the searches use is built again
    assert "meetings/sync.md" in [h.path for h in vault.search("quokka")]
