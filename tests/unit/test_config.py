"""Settings precedence: defaults < <vault>/.lore/config.toml < LORE_* environment < arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import one_line_naming

import lore
from lore.config import LoreSettings, load_lore_settings


def _config(root: Path, text: str) -> None:
    (root / ".lore").mkdir(parents=True, exist_ok=True)
    (root / ".lore" / "config.toml").write_text(text, encoding="utf-8")


def test_defaults(tmp_path: Path) -> None:
    assert load_lore_settings(tmp_path) == LoreSettings()


def test_precedence_file_env_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, '[lore]\nmax_file_bytes = 20000\nhighlight = ["[", "]"]\n')
    from_file = load_lore_settings(tmp_path)
    assert from_file.max_file_bytes == 20000
    assert from_file.highlight == ("[", "]")

    monkeypatch.setenv("LORE_MAX_FILE_BYTES", "30000")
    assert load_lore_settings(tmp_path).max_file_bytes == 30000
    assert load_lore_settings(tmp_path, max_file_bytes=40000).max_file_bytes == 40000
    assert load_lore_settings(tmp_path, max_file_bytes=None).max_file_bytes == 30000


def test_field_weights_merge_with_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LORE_FIELD_WEIGHTS", "title=9")
    assert load_lore_settings(tmp_path).field_weights == {
        "title": 9.0,
        "tags": 3.0,
        "summary": 1.0,
        "body": 1.0,
    }


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("LORE_MAX_FILE_BYTES", "12"),
        ("LORE_MAX_FILE_BYTES", "a lot"),
        ("LORE_FIELD_WEIGHTS", "title=heavy"),
        ("LORE_FIELD_WEIGHTS", "colour=1"),
    ],
)
def test_bad_environment_values_name_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str, value: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(lore.ConfigError) as caught:
        load_lore_settings(tmp_path)
    one_line_naming(str(caught.value), env)


def test_broken_config_file_names_the_file(tmp_path: Path) -> None:
    _config(tmp_path, "[lore\nmax_file_bytes = ")
    with pytest.raises(lore.ConfigError) as caught:
        lore.open(tmp_path)
    one_line_naming(str(caught.value), str(tmp_path / ".lore" / "config.toml"))


def test_unknown_argument_is_refused(tmp_path: Path) -> None:
    with pytest.raises(lore.ConfigError) as caught:
        lore.open(tmp_path, max_file_byte=10)
    one_line_naming(str(caught.value), "max_file_byte")


def test_note_field_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(
        tmp_path,
        '[lore]\ncategories = ["规则", " Travel  notes ", "travel notes", "宠物"]\n'
        "llm_summary_chars = 400\nllm_claims = 3\nllm_context_tokens = 2048\n",
    )
    settings = load_lore_settings(tmp_path)
    assert settings.categories == ("规则", "Travel notes", "宠物")  # each once, case aside
    assert (settings.llm_summary_chars, settings.llm_claims) == (400, 3)
    assert settings.llm_context_tokens == 2048 and settings.llm_budget is None
    monkeypatch.setenv("LORE_CATEGORIES", "a, b")
    monkeypatch.setenv("LORE_LLM_BUDGET", "25")
    assert load_lore_settings(tmp_path).categories == ("a", "b")
    assert load_lore_settings(tmp_path).llm_budget == 25
    assert load_lore_settings(tmp_path, llm_budget="none").llm_budget is None


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("LORE_LLM_BUDGET", "-1"),
        ("LORE_LLM_BUDGET", "lots"),
        ("LORE_LLM_SUMMARY_CHARS", "10"),
        ("LORE_LLM_CLAIMS", "99"),
        ("LORE_LLM_CONTEXT_TOKENS", "100"),
        ("LORE_CATEGORIES", "x" * 41),
        ("LORE_CATEGORIES", ",".join(f"c{i}" for i in range(51))),
    ],
)
def test_bad_note_field_values_name_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str, value: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(lore.ConfigError) as caught:
        load_lore_settings(tmp_path)
    one_line_naming(str(caught.value), env)


def test_a_vault_may_spend_fewer_model_calls_never_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("LORE_HOME", str(home))
    (home / "config.toml").write_text("llm_budget = 50\nllm_fields = false\n", encoding="utf-8")
    vault = tmp_path / "vault"
    _config(vault, "[lore]\nllm_budget = 1000\nllm_fields = true\n")
    raised = load_lore_settings(vault)
    assert raised.llm_budget == 50 and raised.llm_fields is False  # both ignored
    assert "llm_budget (LORE_LLM_BUDGET), llm_fields (LORE_LLM_FIELDS)" in raised.notices[0]
    _config(vault, "[lore]\nllm_budget = 10\n")
    assert load_lore_settings(vault).llm_budget == 10 and not load_lore_settings(vault).notices
    (home / "config.toml").write_text("", encoding="utf-8")
    _config(vault, "[lore]\nllm_fields = false\nllm_budget = 3\n")
    lowered = load_lore_settings(vault)
    assert lowered.llm_fields is False and lowered.llm_budget == 3 and not lowered.notices
    # Bigger requests would send more of each long note: only smaller ones are taken.
    _config(vault, "[lore]\nllm_context_tokens = 65536\n")
    bigger = load_lore_settings(vault)
    assert bigger.llm_context_tokens == 4096 and "llm_context_tokens" in bigger.notices[0]
    _config(vault, "[lore]\nllm_context_tokens = 2048\n")
    assert load_lore_settings(vault).llm_context_tokens == 2048


def test_the_config_file_is_parsed_once_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lore, memory and interest settings read one file: it is parsed once, again
    only when it changes, and every reader gets its own copy of the tables."""
    import os
    import tomllib

    from lore.config import read_config
    from lore.interest.settings import load_interest_settings
    from lore.memory.settings import load_memory_settings

    parsed: list[str] = []
    real = tomllib.loads

    def counting(text: str) -> dict[str, object]:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(tomllib, "loads", counting)
    _config(
        tmp_path, "[lore]\nmax_df_ratio = 0.5\n[memory]\nstale_days = 9\n[interest]\nmin_size = 4\n"
    )
    assert load_lore_settings(tmp_path).max_df_ratio == 0.5
    assert load_memory_settings(tmp_path).stale_days == 9
    assert load_interest_settings(tmp_path).min_size == 4
    assert len(parsed) == 1

    _path, data = read_config(tmp_path)
    assert data is not None
    data["memory"]["stale_days"] = 1  # a reader changing its copy changes nobody else's
    assert load_memory_settings(tmp_path).stale_days == 9

    config = tmp_path / ".lore" / "config.toml"
    config.write_text("[memory]\nstale_days = 12\n", encoding="utf-8")
    st = config.stat()
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert load_memory_settings(tmp_path).stale_days == 12
    assert len(parsed) == 2
