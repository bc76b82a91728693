"""A query's time budget: which costly parts of a search still fit, decided part by part.

With a budget, a search drops parts in a fixed order when what is left of the budget
cannot pay for them: first the LLM's query plan, then the vector channels (timed by the
query's embedding; the nearest-neighbour look-ups count in the base), then the polished
snippets (the passage
around the matched words; a plain head of the note is shown instead). The full-text
ranking is never dropped: it is the answer. A result says which parts it went without
(`SearchResult.degraded`).

The decision is made from estimates, not by racing a timer: each part's cost is the
smoothed duration of its last runs in this process (`QueryCosts`), measured on the clock
it was given. So the same budget on the same machine state drops the same parts, and a
test injects the clock and the estimates.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from ..errors import QueryError

BUDGET_ENV = "LORE_QUERY_BUDGET_MS"
MAX_BUDGET_MS = 600_000
# The parts a budget may drop, in the order it drops them.
DROP_ORDER = ("llm_plan", "vec", "snippet")
# What a part costs before this process has timed it once (ms): an LLM round trip, a
# local model's query embedding plus two KNN look-ups, the snippets of ten hits; "base"
# is what is always paid (planning, BM25, fusion, loading the hits).
FIRST_GUESS_MS = {"llm_plan": 2000.0, "vec": 150.0, "snippet": 5.0, "base": 30.0}
SMOOTHING = 0.5  # weight of the newest run in an estimate


def parse_budget(value: object, name: str) -> int | None:
    """A budget in ms from --budget-ms, LORE_QUERY_BUDGET_MS or an API argument: 1 to
    MAX_BUDGET_MS, or None / "" / 0 for no budget."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        ms = int(str(value).strip()) if not isinstance(value, bool) else -1
    except ValueError:
        ms = -1
    if ms == 0:
        return None
    if not 1 <= ms <= MAX_BUDGET_MS:
        raise QueryError(
            f"{name}: {value!r} is not a time budget in milliseconds (1 to {MAX_BUDGET_MS:,};"
            " 0 for none)"
        )
    return ms


def budget_ms(requested: object, env: Mapping[str, str] | None = None) -> int | None:
    """The budget asked for by the caller, else by LORE_QUERY_BUDGET_MS, else none."""
    if requested is not None:
        return parse_budget(requested, "--budget-ms")
    return parse_budget((os.environ if env is None else env).get(BUDGET_ENV), BUDGET_ENV)


# Plain classes, not dataclasses: every search makes both, and a cold process pays for
# each dataclass it defines.
class QueryCosts:
    """What each part of a search has cost in this process (the machine state a budget is
    decided on), and the clock it is measured with."""

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,  # seconds
        estimates_ms: dict[str, float] | None = None,
    ) -> None:
        self.clock = clock
        self.estimates_ms = dict(FIRST_GUESS_MS) if estimates_ms is None else estimates_ms

    def record(self, part: str, ms: float) -> None:
        old = self.estimates_ms.get(part)
        self.estimates_ms[part] = ms if old is None else SMOOTHING * ms + (1 - SMOOTHING) * old

    def start(self, ms: int | None) -> QueryBudget:
        return QueryBudget(self, ms, self.clock())


class QueryBudget:
    """One query's budget (None: unlimited; every part runs and is still timed)."""

    def __init__(self, costs: QueryCosts, ms: int | None, started: float) -> None:
        self.costs = costs
        self.ms = ms
        self.started = started
        self.degraded: list[str] = []
        self.spent_on_parts = 0.0

    def elapsed_ms(self) -> float:
        return (self.costs.clock() - self.started) * 1000

    def allows(self, part: str) -> bool:
        """Does `part` fit? It must leave room for the base cost and for every part after it
        in DROP_ORDER not yet dropped (those are kept in preference). A part that does not
        fit is listed in `degraded`."""
        if self.ms is None:
            return True
        est = self.costs.estimates_ms
        later = DROP_ORDER[DROP_ORDER.index(part) + 1 :]
        need = est.get(part, 0.0) + sum(est.get(p, 0.0) for p in later if p not in self.degraded)
        # The base cost still to come: its estimate less what of the query ran already.
        base_left = max(est.get("base", 0.0) - (self.elapsed_ms() - self.spent_on_parts), 0.0)
        if self.elapsed_ms() + need + base_left <= self.ms:
            return True
        self.degraded.append(part)
        return False

    def timed(self, part: str, since: float) -> None:
        """Record that `part` ran from `since` (a reading of the clock) until now."""
        ms = (self.costs.clock() - since) * 1000
        self.spent_on_parts += ms
        self.costs.record(part, ms)

    def now(self) -> float:
        return self.costs.clock()

    def finish(self) -> None:
        """Record the base cost of this query (its time less the parts timed apart)."""
        self.costs.record("base", max(self.elapsed_ms() - self.spent_on_parts, 0.0))
