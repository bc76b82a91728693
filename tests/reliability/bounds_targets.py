"""Generated hostile inputs for issue 13's classes 3, 4, 5 and 7, shared by
tests/reliability/test_one_line_errors.py (a few of each) and bench/reliability_hostile.py
(many). Each `check_*` returns None when lore held, else what went wrong in one line.

- numbers: every int/float option of every command (found by walking the click tree, not
  listed by hand) and every numeric setting (environment and config file), given values
  at and past every edge: each run ends with exit 0, or 1/2 and one line, never a traceback;
- filters and queries: tag lists, path globs and queries of any length through the API;
- snippets: notes holding tokens longer than any window, queries of such tokens.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

import lore
from lore.cli import main

EDGE_VALUES = ["-1", "0", "1", "nan", "inf", "-inf", "1e308", "99999999999999999999", "2.5"]
# Commands that serve or watch until stopped are covered by click's own ranges only.
LONG_RUNNING = {"mcp", "watch"}
POSITIONALS = {"query": "alpha", "task": "alpha", "sources": "SOURCE", "cluster_id": "1"}

NUMERIC_ENV = [
    "LORE_MAX_FILE_BYTES", "LORE_EMBED_BATCH", "LORE_EMBED_TIMEOUT", "LORE_LLM_TIMEOUT",
    "LORE_LLM_RETRIES", "LORE_LLM_BACKOFF", "LORE_EMBED_RETRIES", "LORE_EMBED_BACKOFF",
    "LORE_TAG_VEC_FRACTION", "LORE_TAG_LOG_ALPHA", "LORE_MAX_DF_RATIO", "LORE_HALF_LIFE_DAYS",
    "LORE_INTEREST_TAG_WEIGHT", "LORE_INTEREST_MIN_SIZE", "LORE_INTEREST_MAX_CLUSTERS",
    "LORE_INTEREST_KMEANS_N_INIT", "LORE_INTEREST_KMEANS_MAX_ITER",
    "LORE_INTEREST_KMEANS_RANDOM_STATE", "LORE_INTEREST_RECENT_WEEKS",
    "LORE_INTEREST_LEXICAL_VOCAB", "LORE_INTEREST_TREND_RATIO",
]  # fmt: skip
TOML_NUMBERS = ["-1", "0", "nan", "inf", "9223372036854775807", "1e308"]
TOML_SETTINGS = {
    "lore": ["max_file_bytes", "embed_batch", "embed_timeout", "tag_log_alpha", "max_df_ratio"],
    "memory": ["half_life_days", "decay_floor", "pinned_priority", "stale_days"],
    "interest": ["kmeans_n_init", "recent_weeks", "max_clusters", "lexical_vocab", "min_size"],
}


def number_vault(root: Path, db: str | None = None) -> Path:
    """Index a small vault at `root` (in `db`, else its own file) for the number sweeps;
    the file `lore ingest` is given (beside the vault) is returned."""
    root.mkdir(parents=True)
    for i in range(8):
        (root / f"n{i}.md").write_text(
            f"---\ntags: [t{i % 2}]\ndate: 2026-11-0{i + 1}\n---\nalpha {i}\n"
        )
    source = root.parent / "source.md"
    source.write_text("# Source\nalpha source\n")
    with lore.open(root, db=db) as vault:
        vault.sync()
    return source


def _commands(
    group: click.Group = main, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    commands = main.all_commands() if group is main else group.commands  # main loads lazily
    for name, command in sorted(commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


def numeric_cli_cases(values: list[str] = EDGE_VALUES) -> list[tuple[str, ...]]:
    """(command words..., option, value) for every numeric option of every command."""
    cases = []
    for words, command in _commands():
        if words[0] in LONG_RUNNING:
            continue
        for param in command.params:
            if not isinstance(param.type, click.types.IntParamType | click.types.FloatParamType):
                continue
            for value in values:
                if isinstance(param, click.Argument):
                    cases.append((*words, "=" + (param.name or ""), value))
                else:
                    cases.append((*words, param.opts[0], value))
    return cases


def _argv(case: tuple[str, ...], vault: Path, source: Path) -> list[str]:
    *words, option, value = case
    command = main
    for word in words:
        assert isinstance(command, click.Group)
        command = command.commands[word]  # type: ignore[assignment]
    argv = list(words)
    for param in command.params:
        if isinstance(param, click.Argument) and param.name != option.lstrip("="):
            given = POSITIONALS.get(param.name or "")
            if param.name == "vault":
                argv.append(str(vault))
            elif given is not None:
                argv.append(str(source) if given == "SOURCE" else given)
    if option.startswith("="):
        argv.append(value)
    else:
        argv += [option, value]
    if "vault" not in [p.name for p in command.params if isinstance(p, click.Argument)]:
        argv += ["--vault", str(vault)]
    return argv


def one_line_or_success(result: Any) -> str | None:
    """None if a CLI run ended well: exit 0, or 1/2 with one line on stderr."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"{type(result.exception).__name__}: {str(result.exception)[:200]}"
    if result.exit_code == 0:
        return None
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("lore: error: "):
        return None
    if result.exit_code == 2 and lines and lines[-1].startswith("Error: "):
        return None  # click's usage error (the usage line, then the error)
    return f"exit {result.exit_code}: {result.stderr.strip()[-300:]!r}"


def check_cli_number(case: tuple[str, ...], vault: Path, source: Path) -> str | None:
    result = CliRunner().invoke(main, _argv(case, vault, source))
    failure = one_line_or_success(result)
    return None if failure is None else f"lore {' '.join(case)}: {failure}"


def check_env_number(name: str, value: str, vault: Path) -> str | None:
    argv = (
        ["clusters", "build", str(vault)]
        if "INTEREST" in name
        else ["search", "alpha", "--vault", str(vault)]
    )
    failure = one_line_or_success(CliRunner().invoke(main, argv, env={name: value}))
    return None if failure is None else f"{name}={value}: {failure}"


def check_toml_number(table: str, key: str, value: str, vault: Path) -> str | None:
    config = vault / ".lore" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"[{table}]\n{key} = {value}\n", encoding="utf-8")
    try:
        argv = (
            ["clusters", "build", str(vault)]
            if table == "interest"
            else ["search", "alpha", "--vault", str(vault)]
        )
        failure = one_line_or_success(CliRunner().invoke(main, argv))
    finally:
        config.unlink()
    return None if failure is None else f"[{table}] {key} = {value}: {failure}"


def check_filters(vault: lore.Vault, tags: int, glob_chars: int, query_chars: int) -> str | None:
    """A search with `tags` tag filters, a path glob and a query of these lengths: hits or
    one QueryError line."""
    try:
        vault.search(
            "字" * query_chars,
            tags=[f"t{i}" for i in range(tags)],
            path="a*" * (glob_chars // 2),
        )
    except lore.QueryError as exc:
        if "\n" in str(exc):
            return f"not one line: {exc!r}"
    except Exception as exc:  # noqa: BLE001 - any other error is the defect counted
        return f"tags={tags} glob={glob_chars} query={query_chars}: {type(exc).__name__}: {exc}"
    return None


def check_long_token(vault: lore.Vault, token: str, query: str) -> str | None:
    """A note holding `token`; `query` through search, lookup and context."""
    (vault.root / "long-token.md").write_text(f"# Long\n\nbefore {token} after\n")
    vault.sync()
    try:
        for hit in vault.search(query):
            if len(hit.snippet) > 2000:
                return f"snippet of {len(hit.snippet)} characters"
        vault.lookup(query)
        vault.context(query)
    except lore.LoreError as exc:
        if "\n" in str(exc):
            return f"not one line: {exc!r}"
    except Exception as exc:  # noqa: BLE001 - any other error is the defect counted
        return f"token {len(token)} / query {len(query)}: {type(exc).__name__}: {exc}"
    return None
