"""A query with a time budget (issue 18): lore drops the LLM plan, then the vector
channels, then the polished snippets when they would not fit, answers, and says what it
skipped. Decided on an injected clock and cost estimates: no wall clock, no sleeps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from semantic_support import (  # noqa: F401 - fixtures
    Script,
    embed_env,
    llm_env,
    scripted,
    write_notes,
)

import lore
from lore.errors import QueryError
from lore.present.human import format_search
from lore.retrieve.budget import DROP_ORDER, QueryCosts, budget_ms

COSTS = {"llm_plan": 400.0, "vec": 100.0, "snippet": 5.0, "base": 20.0}


class TickClock:
    """Moves 1 µs per reading: durations are the count of readings, the same every run."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 1e-6
        return self.t


def _costs() -> QueryCosts:
    return QueryCosts(clock=TickClock(), estimates_ms=dict(COSTS))


@pytest.fixture
def mode1(
    tmp_path: Path, scripted: tuple[str, Script], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[lore.Vault, Script]]:
    url, script = scripted
    embed_env(monkeypatch, url)
    llm_env(monkeypatch, url)
    vault = lore.open(write_notes(tmp_path / "vault"))
    vault.sync()
    assert vault.mode == "mode1"
    yield vault, script
    vault.close()


def _requests(script: Script) -> tuple[int, int]:
    return len(script.chats("plan")), script.count("/v1/embeddings")


@pytest.mark.parametrize(
    ("budget", "degraded", "mode"),
    [
        (None, [], "mode1"),
        (100_000, [], "mode1"),
        (200, ["llm_plan"], "mode3"),  # 400 + 100 + 5 + 20 does not fit; 100 + 5 + 20 does
        (60, ["llm_plan", "vec"], "mode4"),
        (10, ["llm_plan", "vec", "snippet"], "mode4"),
    ],
)
def test_a_budget_drops_parts_in_order_and_says_so(
    mode1: tuple[lore.Vault, Script], budget: int | None, degraded: list[str], mode: str
) -> None:
    vault, script = mode1
    vault.query_costs = _costs()
    before = _requests(script)
    result = vault.search("where is the Eiffel tower", budget_ms=budget)
    plans, embeds = (a - b for a, b in zip(_requests(script), before, strict=True))
    assert result.degraded == degraded and result.mode == mode
    assert result[0].path == "travel/paris.md"  # the full-text answer is always there
    assert (plans > 0) == ("llm_plan" not in degraded)  # a dropped part makes no request
    assert (embeds > 0) == ("vec" not in degraded)
    assert ("«" in result[0].snippet) == ("snippet" not in degraded)
    assert result.to_dict()["degraded"] == degraded
    shown = format_search(result, color=False, markers=("«", "»"))
    assert ("skipped:" in shown) == bool(degraded)
    if degraded:
        assert f"(degraded: {', '.join(degraded)})" in shown.splitlines()[-1]


def test_the_same_budget_and_costs_give_the_same_answer(mode1: tuple[lore.Vault, Script]) -> None:
    vault, _script = mode1
    answers = []
    for _ in range(2):
        vault.query_costs = _costs()
        answers.append(vault.search("Eiffel tower in Paris", budget_ms=200).to_dict())
    assert answers[0] == answers[1] and answers[0]["degraded"] == ["llm_plan"]


def test_costs_are_learnt_from_the_runs(mode1: tuple[lore.Vault, Script]) -> None:
    vault, _script = mode1
    costs = QueryCosts(clock=TickClock(), estimates_ms={"llm_plan": 1e9, "vec": 1e9})
    vault.query_costs = costs
    assert vault.search("Eiffel", budget_ms=50).degraded == ["llm_plan", "vec"]
    assert costs.estimates_ms["llm_plan"] == 1e9  # a part not run keeps its estimate
    assert 0 < costs.estimates_ms["base"] < 50  # ticks, not wall time
    vault.search("Eiffel")  # no budget: every part runs and is timed
    assert costs.estimates_ms["llm_plan"] < 1e9 / 1.9


def test_env_and_bad_values(
    monkeypatch: pytest.MonkeyPatch, mode1: tuple[lore.Vault, Script]
) -> None:
    vault, _script = mode1
    vault.query_costs = _costs()
    monkeypatch.setenv("LORE_QUERY_BUDGET_MS", "60")
    assert vault.search("Eiffel").degraded == ["llm_plan", "vec"]
    assert vault.search("Eiffel", budget_ms=0).degraded == []  # 0: no budget, overrides env
    monkeypatch.setenv("LORE_QUERY_BUDGET_MS", "soon")
    with pytest.raises(QueryError, match="LORE_QUERY_BUDGET_MS: 'soon'") as caught:
        vault.search("Eiffel")
    assert "\n" not in str(caught.value)
    with pytest.raises(QueryError, match="--budget-ms"):
        budget_ms(-5, {})


@given(
    budget=st.integers(1, 3000),
    costs=st.fixed_dictionaries({p: st.floats(0, 1000) for p in (*DROP_ORDER, "base")}),
)
def test_what_is_dropped_is_a_prefix_of_the_order_and_the_rest_fits(
    budget: int, costs: dict[str, float]
) -> None:
    """When every part costs what it was estimated to, the budget drops a prefix of
    DROP_ORDER, and the query ends within the budget whenever the base cost fits."""
    now = [0.0]
    q = QueryCosts(clock=lambda: now[0], estimates_ms=dict(costs)).start(budget)
    for part in DROP_ORDER:
        if q.allows(part):
            since = q.now()
            now[0] += costs[part] / 1000
            q.timed(part, since)
    now[0] += costs["base"] / 1000
    assert q.degraded == list(DROP_ORDER[: len(q.degraded)])
    if costs["base"] <= budget:
        assert q.elapsed_ms() <= budget + 1e-6
    kept = [p for p in DROP_ORDER if p not in q.degraded]
    if q.degraded:  # the last part dropped would not have fitted with what was kept
        last = q.degraded[-1]
        later = [p for p in kept if DROP_ORDER.index(p) > DROP_ORDER.index(last)]
        earlier = sum(costs[p] for p in kept if DROP_ORDER.index(p) < DROP_ORDER.index(last))
        assert earlier + costs[last] + sum(costs[p] for p in later) + costs["base"] > budget
