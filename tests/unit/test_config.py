"""Settings precedence: defaults < <vault>/.lore/config.toml < LORE_* environment < arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import one_line_naming

import lore
from lore.config import Settings, load_settings


def _config(root: Path, text: str) -> None:
    (root / ".lore").mkdir(parents=True, exist_ok=True)
    (root / ".lore" / "config.toml").write_text(text, encoding="utf-8")


def test_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path) == Settings()


def test_precedence_file_env_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _config(tmp_path, '[lore]\nmax_file_bytes = 20000\nhighlight = ["[", "]"]\n')
    from_file = load_settings(tmp_path)
    assert from_file.max_file_bytes == 20000
    assert from_file.highlight == ("[", "]")

    monkeypatch.setenv("LORE_MAX_FILE_BYTES", "30000")
    assert load_settings(tmp_path).max_file_bytes == 30000
    assert load_settings(tmp_path, max_file_bytes=40000).max_file_bytes == 40000
    assert load_settings(tmp_path, max_file_bytes=None).max_file_bytes == 30000


def test_field_weights_merge_with_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LORE_FIELD_WEIGHTS", "title=9")
    assert load_settings(tmp_path).field_weights == {
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
        load_settings(tmp_path)
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
