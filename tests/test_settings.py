"""One `Settings` in sections, read at the composition root, and one clock (issue 14):
LORE_TODAY names the day of `remember` and of a capture too, through the command line and
the Python API; settings given by the Python API are used as they are."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import lore
from lore.capture.ingest import capture
from lore.config import LoreSettings
from lore.providers.settings import ProviderSettings
from lore.vault.settings import SettingsSource

MakeVault = Callable[..., Path]
OpenVault = Callable[..., lore.Vault]
DAY = "2024-02-29"  # a day no test run falls on


def lore_cli(*args: str, cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}
    done = subprocess.run(
        [sys.executable, "-m", "lore", *args],
        cwd=cwd,
        env={**clean, **env},
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _captured(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "inbox").glob("*.md"))


def test_lore_today_dates_remember_and_ingest_in_a_real_process(make_vault: MakeVault) -> None:
    root = make_vault({"a.md": "# A\n\nalpha\n"}, index=True)
    env = {"LORE_TODAY": DAY, "LORE_HOME": str(root.parent / "home")}
    lore_cli("remember", "the v2 rule was approved", "--vault", str(root), cwd=root, env=env)
    daily = root / "memory" / f"{DAY}.md"
    assert "the v2 rule was approved" in daily.read_text(encoding="utf-8")
    assert [p.name for p in (root / "memory").glob("*.md")] == [f"{DAY}.md"]

    lore_cli("ingest", "-", "--title", "会议纪要", "--vault", str(root), cwd=root, env=env,
             stdin="结论：按 v2 执行。\n")  # fmt: skip
    [name] = _captured(root)
    assert name.startswith(f"{DAY}-")
    assert f"fetched: {DAY}" in (root / "inbox" / name).read_text(encoding="utf-8")


def test_the_python_api_takes_the_day_from_the_settings_it_is_given(
    make_vault: MakeVault, open_vault: OpenVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault({"a.md": "# A\n\nalpha\n"})
    monkeypatch.setenv("LORE_TODAY", "2001-01-01")  # given settings are used as they are
    settings = lore.Settings().replace(memory={"today": DAY})
    vault = open_vault(root, settings=settings)
    assert vault.today().isoformat() == DAY
    memory = vault.remember("a fixed day")
    assert memory.path == f"memory/{DAY}.md"
    capture(vault, "-", stdin=b"clipped text\n")
    [name] = _captured(root)
    assert name.startswith(f"{DAY}-")
    assert vault.recent(days=1).today == DAY


def test_settings_read_from_the_vault_have_every_section(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault(
        {".lore/config.toml": "[lore]\nmax_df_ratio = 0.5\n[memory]\nstale_days = 9\n"}
    )
    monkeypatch.setenv("LORE_INTEREST_MIN_SIZE", "3")
    settings = lore.load_settings(root)
    assert (settings.lore.max_df_ratio, settings.memory.stale_days) == (0.5, 9)
    assert settings.interest.min_size == 3
    assert lore.load_settings(root, max_df_ratio=0.25).lore.max_df_ratio == 0.25


def test_replace_checks_each_value_and_names_it() -> None:
    with pytest.raises(lore.ConfigError, match="today"):
        lore.Settings().replace(memory={"today": "yesterday"})
    with pytest.raises(lore.ConfigError, match="min_size"):
        lore.Settings().replace(interest={"min_size": 0})
    with pytest.raises(lore.ConfigError, match="nonsense"):
        lore.Settings().replace(lore={"nonsense": 1})
    with pytest.raises(lore.ConfigError, match="overlap"):
        lore.Settings().replace(memory={"dir": "MEMORY.md"})
    kept = lore.Settings().replace(memory={"access": {"agent": ["memory/**"]}})
    assert kept.memory.access == {"agent": ("memory/**",)} and kept.memory.has_access_table


def test_given_settings_reach_the_services(make_vault: MakeVault, open_vault: OpenVault) -> None:
    """The interest section given is what a build uses; the [lore] section given is the
    vault's, with keyword overrides on top."""
    notes = {f"n{i}.md": f"# Note {i}\n\nalpha beta {i}\n" for i in range(6)}
    root = make_vault({**notes, ".lore/config.toml": "[interest]\nmin_size = 50\n"})
    given = lore.Settings().replace(interest={"min_size": 1, "max_clusters": 2})
    vault = open_vault(root, settings=given, max_df_ratio=0.3)
    assert vault.settings.max_df_ratio == 0.3
    vault.sync()
    built = vault.build_clusters()
    assert built.params["min_size"] == 1 and len(built.clusters) <= 2


def test_the_source_reads_memory_and_interest_again_when_they_change(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_vault({})
    source = SettingsSource(root, LoreSettings())
    first = source.interest()
    assert source.interest() is first and first.min_size == 5
    monkeypatch.setenv("LORE_INTEREST_MIN_SIZE", "2")
    assert source.interest().min_size == 2
    assert source.get().interest.min_size == 2


def test_the_providers_section_is_built_after_the_trust_rules(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vault's config may lower the spending, never pick a remote provider or a URL: the
    providers section is what is left, and the user's environment still counts."""
    root = make_vault(
        {
            ".lore/config.toml": "[lore]\nllm_provider = 'openai'\n"
            "llm_base_url = 'http://192.0.2.1/v1'\nllm_budget = 4\ncategories = ['ops']\n"
        }
    )
    monkeypatch.setenv("LORE_LLM_BUDGET", "9")
    monkeypatch.setenv("LORE_EMBED_PROVIDER", "local")
    settings = lore.load_settings(root)
    providers = settings.providers
    assert (providers.llm_provider, providers.llm_base_url) == ("none", None)
    assert (providers.embed_provider, providers.categories) == ("local", ("ops",))
    assert providers.llm_budget == 9  # the environment comes after the vault's file
    assert providers == ProviderSettings.of(settings.lore)
    assert "llm_base_url" in settings.lore.notices[0]


def test_retries_and_backoff_are_the_users_and_reach_the_endpoint(
    make_vault: MakeVault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How often and how fast a failed request goes again is set by the user (a vault
    cannot make lore hammer an endpoint or sleep), and the provider's endpoint gets it."""
    from lore.providers.registry import _endpoint_for

    root = make_vault(
        {".lore/config.toml": "[lore]\nllm_retries = 10\nllm_backoff = 60\nembed_retries = 9\n"}
    )
    monkeypatch.setenv("LORE_LLM_PROVIDER", "openai")
    monkeypatch.setenv("LORE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LORE_LLM_MODEL", "m")
    monkeypatch.setenv("LORE_LLM_BACKOFF", "0")
    settings = lore.load_settings(root)
    providers = settings.providers
    assert (providers.llm_retries, providers.llm_backoff, providers.embed_retries) == (2, 0.0, 2)
    assert all(name in settings.lore.notices[0] for name in ("llm_retries", "embed_retries"))
    endpoint = _endpoint_for(providers, "llm")
    assert (endpoint.retries, endpoint.backoff) == (2, 0.0)


def test_replace_checks_the_providers_section_and_keeps_lore_in_step() -> None:
    with pytest.raises(lore.ConfigError, match="embed_batch"):
        lore.Settings().replace(providers={"embed_batch": 0})
    with pytest.raises(lore.ConfigError, match="max_df_ratio"):
        lore.Settings().replace(providers={"max_df_ratio": 0.5})  # a [lore] setting
    changed = lore.Settings().replace(providers={"llm_budget": "3"}, lore={"llm_claims": 2})
    assert (changed.providers.llm_budget, changed.providers.llm_claims) == (3, 2)
    assert (changed.lore.llm_budget, changed.lore.llm_claims) == (3, 2)
    assert ProviderSettings() == ProviderSettings.of(LoreSettings())  # one set of defaults


def test_the_vault_reads_its_providers_from_the_providers_section(
    make_vault: MakeVault, open_vault: OpenVault
) -> None:
    """The copy in `lore` is not what the providers read: a section given with only
    `providers` set is the one a sync spends by, and keyword overrides apply on top."""
    root = make_vault({"a.md": "# A\n\nalpha\n"})
    given = lore.Settings(providers=ProviderSettings(llm_fields=False, llm_budget=7))
    status = open_vault(root, settings=given).llm_status()
    assert (status["fields"], status["budget"]) == ("off", 7)
    assert open_vault(root, settings=given, llm_budget=2).llm_status()["budget"] == 2
    remote = lore.Settings(providers=ProviderSettings(embed_provider="openai"))
    with pytest.raises(lore.ConfigError, match="LORE_EMBED_BASE_URL"):
        open_vault(root, settings=remote).capabilities.embedder()


def test_settings_built_from_a_lore_section_carry_its_provider_values() -> None:
    """Settings made directly from a [lore] section use its provider values: the
    providers section is never silently left at its defaults."""
    made = lore.Settings(lore=LoreSettings(llm_budget=7, embed_provider="local"))
    assert made.providers == ProviderSettings.of(made.lore)
    assert made.providers.llm_budget == 7 and made.providers.embed_provider == "local"
    given = ProviderSettings.of(LoreSettings(llm_budget=3))
    assert lore.Settings(lore=LoreSettings(llm_budget=7), providers=given).providers == given
