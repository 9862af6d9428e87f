"""Benchmarks that print figures (never pass/fail): ``python -m benchmarks.run [--json]``.

Figures, for 10,000 observed Suggestions in each lifecycle state:
- ``parse_us``: parsing the snapshot's raw objects into the core's models;
- ``plan_us``: one ``core.plan.plan`` call on the parsed snapshot; ``writes``: its write count;
- ``plan_to_parse``: their ratio (goal for steady states: at most 3);
- ``machine_share``: the share of planning time spent in the lifecycle machines: deriving both
  states from the conditions and firing the compiled tables (goal < 10%);
- ``tracked_bytes``: memory the controller keeps per tracked Suggestion between reconciles (the
  key and its derived state; goal < 4 KB), and ``parsed_bytes``: one parsed Suggestion model,
  which exists only during its reconcile.
"""

from __future__ import annotations

import argparse
import json
import time
import timeit
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

from adapters.fake.clock import EPOCH
from benchmarks.snapshots import RawSnapshot, capture
from core.lifecycle import EXPERIMENT, SUGGESTION, ExperimentFacts, ExperimentState, SuggestionFacts
from core.lifecycle.experiment import derive as derive_experiment
from core.lifecycle.machine import Lifecycle
from core.lifecycle.suggestion import SuggestionState, derive
from core.model import Suggestion
from core.observed import Observed
from core.plan import plan
from tests.support.harness import shipped_config

N = 10_000


def _per_call_us(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def _fires_per_plan(snapshot: RawSnapshot) -> int:
    """How many times one plan fires a lifecycle machine (counted by shadowing ``fire``)."""
    count = 0

    def counting(original: Callable[..., Any]) -> Callable[..., Any]:
        def fire(state: Any, trigger: str, facts: object) -> Any:
            nonlocal count
            count += 1
            return original(state, trigger, facts)

        return fire

    lifecycles: tuple[Lifecycle[Any], ...] = (SUGGESTION, EXPERIMENT)
    for lifecycle in lifecycles:
        object.__setattr__(lifecycle, "fire", counting(lifecycle.fire))
    try:
        plan(snapshot.parse(), shipped_config(), EPOCH)
    finally:
        for lifecycle in lifecycles:
            object.__delattr__(lifecycle, "fire")
    return count


def _fire_us() -> float:
    timer = timeit.Timer(
        lambda: (
            SUGGESTION.fire(SuggestionState.Running, "experiment_completed", SuggestionFacts()),
            EXPERIMENT.fire(ExperimentState.Succeeded, "restart_requested", ExperimentFacts()),
        )
    )
    loops = 100_000
    return min(timer.repeat(3, loops)) / loops / 2 * 1e6


def _derive_us(observed: Observed, n: int) -> float:
    """Deriving both lifecycle states from the observed conditions (part of the machine's cost)."""
    experiment, suggestion = observed.experiment, observed.suggestion

    def both() -> None:
        if experiment is not None:
            derive_experiment(experiment.status.conditions)
        if suggestion is not None:
            derive(suggestion)

    return _per_call_us(both, n)


def per_state(snapshots: dict[str, RawSnapshot], n: int) -> dict[str, dict[str, float]]:
    config, fire_us = shipped_config(), _fire_us()
    figures = {}
    for state, snapshot in snapshots.items():
        parsed = snapshot.parse()
        parse_us = _per_call_us(snapshot.parse, n)
        plan_us = _per_call_us(partial(plan, parsed, config, EPOCH), n)
        fires = _fires_per_plan(snapshot)
        derive_us = _derive_us(parsed, n)
        figures[state] = {
            "parse_us": round(parse_us, 1),
            "plan_us": round(plan_us, 1),
            "plan_to_parse": round(plan_us / parse_us, 2),
            "plans_per_s": round(1e6 / plan_us),
            "writes": len(plan(parsed, config, EPOCH).writes),
            "machine_share": round((fires * fire_us + derive_us) / plan_us, 4),
        }
    return figures


def memory(snapshot: RawSnapshot, n: int) -> dict[str, float]:
    raw = snapshot.objects["suggestion"]
    tracemalloc.start()
    parsed = [Suggestion.model_validate(raw) for _ in range(n)]
    parsed_bytes = tracemalloc.get_traced_memory()[0] / n
    tracemalloc.stop()
    tracemalloc.start()
    tracked = {(s.namespace, f"{s.name}-{i}"): derive(s) for i, s in enumerate(parsed)}
    tracked_bytes = tracemalloc.get_traced_memory()[0] / n
    tracemalloc.stop()
    assert len(tracked) == n
    return {"tracked_bytes": round(tracked_bytes), "parsed_bytes": round(parsed_bytes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("-n", type=int, default=N, help="snapshots per state (default 10,000)")
    args = parser.parse_args()
    snapshots = capture()
    result = {
        "suggestions_per_state": args.n,
        "states": per_state(snapshots, args.n),
        "memory": memory(snapshots["Running"], args.n),
        "transitions_fire_us": round(_fire_us(), 3),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for state, figures in result["states"].items():
        print(f"{state:<11} " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    print("memory      " + "  ".join(f"{k}={v}" for k, v in result["memory"].items()))


if __name__ == "__main__":
    main()
