"""Benchmarks that print figures (never pass/fail): ``python -m benchmarks.run [--json]``.

Figures, for 10,000 observed Suggestions in each lifecycle state:
- ``parse_us``: parsing the snapshot's raw objects into the core's models;
- ``plan_us``: one ``core.plan.plan`` call on the parsed snapshot; ``writes``: its write count;
- ``plan_to_parse``: their ratio (goal for steady states: at most 3);
- ``machine_share``: the share of planning time spent in the lifecycle machines: deriving both
  states from the conditions and firing the compiled tables (goal < 10%);
- ``tracked_bytes``: memory the controller keeps per tracked Suggestion between reconciles (the
  key and its derived state; goal < 4 KB), and ``parsed_bytes``: one parsed Suggestion model,
  which exists only during its reconcile;
- ``compiled_fire_us``: one trigger through the compiled table; ``baseline``: building and
  keeping a ``transitions.Machine`` per Suggestion instead (what the shared machine avoids);
- ``lifecycles``: FromVolume lifecycles on the embedded runtime (``benchmarks/lifecycles.py``).
- ``cluster``: API requests of one FromVolume lifecycle against kmock, the same with the
  controller running the Trials as Jobs (``--run-trials``), and ``--help`` start-up
  (``benchmarks/cluster.py``).
"""

from __future__ import annotations

import argparse
import json
import time
import timeit
import tracemalloc
from collections import Counter
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

from transitions import Machine

from benchmarks import cluster, lifecycles
from benchmarks.snapshots import RawSnapshot, capture
from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.app.loop.reconcile import answer
from katib_resume.core.lifecycle import (
    EXPERIMENT,
    SUGGESTION,
    ExperimentFacts,
    ExperimentState,
    SuggestionFacts,
)
from katib_resume.core.lifecycle.experiment import derive as derive_experiment
from katib_resume.core.lifecycle.machine import Lifecycle
from katib_resume.core.lifecycle.suggestion import SuggestionState, derive
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import Observed
from katib_resume.core.plan import Plan, plan
from katib_resume.core.plan import experiment as plan_experiment
from katib_resume.core.plan import suggestion as plan_suggestion
from tests.support.harness import shipped_config

N = 10_000


def _answered(observed: Observed) -> Observed:
    """``observed`` with the planner's questions answered as a shell without a suggestion
    service answers them, so that what is timed is a whole plan."""
    result = plan(observed, shipped_config(), EPOCH)
    while not isinstance(result, Plan):
        observed = answer(result, observed, None)
        result = plan(observed, shipped_config(), EPOCH)
    return observed


def _per_call_us(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def _machine_calls(snapshot: RawSnapshot) -> Counter[str]:
    """How often one plan fires a machine or derives a state (counted by shadowing them)."""
    calls: Counter[str] = Counter()

    def counting(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            calls[name] += 1
            return original(*args)

        return call

    lifecycles: tuple[Lifecycle[Any], ...] = (SUGGESTION, EXPERIMENT)
    derives = ((plan_experiment, "derive_experiment"), (plan_suggestion, "derive_suggestion"))
    attribute = "derive"  # the name each planner module calls its lifecycle's derive by
    originals = [getattr(module, attribute) for module, _ in derives]
    for lifecycle in lifecycles:
        object.__setattr__(lifecycle, "fire", counting("fire", lifecycle.fire))
    for (module, name), original in zip(derives, originals, strict=True):
        setattr(module, attribute, counting(name, original))
    try:
        plan(_answered(snapshot.parse()), shipped_config(), EPOCH)
    finally:
        for lifecycle in lifecycles:
            object.__delattr__(lifecycle, "fire")
        for (module, _), original in zip(derives, originals, strict=True):
            setattr(module, attribute, original)
    return calls


def _fire_us() -> float:
    timer = timeit.Timer(
        lambda: (
            SUGGESTION.fire(SuggestionState.Running, "experiment_completed", SuggestionFacts()),
            EXPERIMENT.fire(ExperimentState.Succeeded, "restart_requested", ExperimentFacts()),
        )
    )
    loops = 100_000
    return min(timer.repeat(3, loops)) / loops / 2 * 1e6


def _machine_us(observed: Observed, calls: Counter[str], fire_us: float, n: int) -> float:
    """Time one plan spends in the lifecycles: firing the tables and deriving the states."""
    experiment, suggestion = observed.experiment, observed.suggestion
    total = calls["fire"] * fire_us
    if experiment is not None and calls["derive_experiment"]:
        conditions = experiment.status.conditions
        one = _per_call_us(partial(derive_experiment, conditions), n)
        total += calls["derive_experiment"] * one
    if suggestion is not None and calls["derive_suggestion"]:
        total += calls["derive_suggestion"] * _per_call_us(partial(derive, suggestion), n)
    return total


def per_state(snapshots: dict[str, RawSnapshot], n: int) -> dict[str, dict[str, float]]:
    config, fire_us = shipped_config(), _fire_us()
    figures = {}
    for state, snapshot in snapshots.items():
        parsed = _answered(snapshot.parse())
        parse_us = _per_call_us(snapshot.parse, n)
        plan_us = _per_call_us(partial(plan, parsed, config, EPOCH), n)
        machine_us = _machine_us(parsed, _machine_calls(snapshot), fire_us, n)
        figures[state] = {
            "parse_us": round(parse_us, 1),
            "plan_us": round(plan_us, 1),
            "plan_to_parse": round(plan_us / parse_us, 2),
            "plans_per_s": round(1e6 / plan_us),
            "writes": len(_writes(plan(parsed, config, EPOCH))),
            "machine_share": round(machine_us / plan_us, 4),
        }
    return figures


def _writes(result: object) -> tuple[object, ...]:
    assert isinstance(result, Plan), result
    return result.writes


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


def baseline(n: int = 1_000) -> dict[str, float]:
    """What the design avoids: a ``transitions.Machine`` per tracked Suggestion."""
    rows = [row.as_kwargs() for row in SUGGESTION.table]

    def machine() -> object:
        holder = SimpleNamespace()
        Machine(
            model=holder,
            states=SuggestionState,
            transitions=rows,
            initial=SuggestionState.Pending,
            auto_transitions=False,
        )
        return holder

    build_us = _per_call_us(machine, n)
    tracemalloc.start()
    kept = [machine() for _ in range(n)]
    per_machine = tracemalloc.get_traced_memory()[0] / n
    tracemalloc.stop()
    assert len(kept) == n
    return {
        "machine_per_object_us": round(build_us, 1),
        "machine_per_object_bytes": round(per_machine),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("-n", type=int, default=N, help="snapshots per state (default 10,000)")
    parser.add_argument(
        "--lifecycles", type=int, default=1_000, help="FromVolume lifecycles (default 1,000)"
    )
    args = parser.parse_args()
    snapshots = capture()
    result = {
        "suggestions_per_state": args.n,
        "states": per_state(snapshots, args.n),
        "memory": memory(snapshots["Running"], args.n),
        "compiled_fire_us": round(_fire_us(), 3),
        "baseline": baseline(),
        "lifecycles": lifecycles.run(args.lifecycles),
        "cluster_lifecycle": (without_trials := cluster.lifecycle_requests()),
        "cluster_trials": cluster.trial_lifecycle_requests(_write_count(without_trials)),
        "startup": cluster.help_startup(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for state, figures in result["states"].items():
        print(f"{state:<11} " + "  ".join(f"{k}={v}" for k, v in figures.items()))
    print("memory      " + "  ".join(f"{k}={v}" for k, v in result["memory"].items()))
    print(f"fire        compiled_fire_us={result['compiled_fire_us']}")
    print("baseline    " + "  ".join(f"{k}={v}" for k, v in result["baseline"].items()))
    print("lifecycles  " + "  ".join(f"{k}={v}" for k, v in result["lifecycles"].items()))
    print("cluster     " + "  ".join(f"{k}={v}" for k, v in result["cluster_lifecycle"].items()))
    print("trials      " + "  ".join(f"{k}={v}" for k, v in result["cluster_trials"].items()))
    print("startup     " + "  ".join(f"{k}={v}" for k, v in result["startup"].items()))


def _write_count(figures: dict[str, object]) -> int:
    writes = figures["writes"]
    assert isinstance(writes, int)
    return writes


if __name__ == "__main__":
    main()
