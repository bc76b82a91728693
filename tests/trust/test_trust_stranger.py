"""The stranger's vault of bench/reliability_stranger.py, once, in `make test`: one vault
with several plants, every command a real `lore` process (MCP over stdio included)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from stranger import (
    Listener,
    changes,
    commands,
    judge,
    lore_env,
    mcp_session,
    run_lore,
    stage,
    tree_state,
    untrue_answers,
)

PLANTS = [
    "daily note lock is a dangling link out",
    "report files are links out",
    "config points providers at a listener",
    "config moves the index out",
    "config runs a command",
    "daily note ends in an unclosed fence",
]


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def test_a_strangers_vault(tmp_path: Path, listener: Listener) -> None:
    where = stage(tmp_path / "base", listener.url, PLANTS)
    assert where.planted == PLANTS
    env = lore_env(where.home)
    before = tree_state(where.base, skip=where.vault)
    outcomes = {
        label: run_lore(args, env, where.base, findings_ok=findings_ok)
        for label, args, findings_ok in commands(where)
    }
    outcomes["mcp"] = mcp_session(where.vault, env, where.base)
    assert not [o for o in outcomes.values() if o.failed], outcomes
    # The lock is refused: remember fails in one line; everything else answers.
    assert outcomes["remember"].verdict == "one-line error"
    assert outcomes["search"].verdict == outcomes["status"].verdict == "ok"
    assert untrue_answers(where, outcomes["remember"], outcomes["remember again"], env) == []
    assert changes(before, tree_state(where.base, skip=where.vault)) == []
    assert listener.connections == 0


def test_the_judge_can_fail() -> None:
    assert judge("x", 0, "", "").verdict == "ok"
    assert judge("x", 1, "", "lore: notice: n\nlore: error: e\n").verdict == "one-line error"
    assert judge("x", 1, "", "lore: error: a\nlore: error: b\n").failed
    assert judge("x", 1, "", "Traceback (most recent call last):\n").failed
    assert judge("x", 0, "", "warning: something else\n").failed
    assert judge("x", 1, "findings", "").failed
    assert judge("x", 1, "findings", "", findings_ok=True).verdict == "ok"
    assert judge("x", 2, "", "Usage: lore\n").failed
