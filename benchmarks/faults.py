"""How long a lost watch event delays convergence, and what the repair costs: ``python -m
benchmarks.faults``.

Figures (one JSON document):

- ``repair``: issue 15's three lost events on the embedded runtime (a Deployment's update that
  makes it available, a Deployment deleted by hand, the user's budget raise after completion),
  each played with the relist timer at every phase of its period when the fault is armed (the
  next relist 0, 1, ... ``relist_seconds - 1`` simulated seconds away) and compared with the
  same play without the fault: the extra simulated seconds (one step is one second) and the extra
  reconciles until the state the fault-free run reached, as medians and maxima over the phases,
  beside the bound (the relist period);
- ``relist``: one ``Informer.relist`` over a cache of 100 / 1,000 / 10,000 Trials (the median of
  a few, in ms, and its growth; beside it a full relist, every kind listed, as without the
  digests), with nothing to repair and with one lost update: how many objects it reports (what
  the runtime reconciles) and how many kinds it lists. Optuna has no counterpart: its storage is
  read directly, there is no watch cache to repair.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from benchmarks.median_time import median_seconds
from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.embedded.runtime import RELIST_SECONDS
from katib_resume.app.loop.informer import Informer
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from tests.support.sim import Sim

LIMIT = 500
Scenario = Callable[[Sim, bool], Callable[[], bool]]
"""Plays up to the fault (lost when the flag says so); returns the test of the repaired state."""


def _until(sim: Sim, done: Callable[[], bool]) -> tuple[int, int]:
    """Steps and reconciles until ``done()``."""
    before = sim.runtime.controller.stats.reconciles
    for steps in range(LIMIT):
        if done():
            return steps, sim.runtime.controller.stats.reconciles - before
        sim.step()
    raise AssertionError(f"not repaired within {LIMIT} steps")


def _running(sim: Sim) -> bool:
    return Sim.true(sim.suggestion(), "Running")


def deployment_update(sim: Sim, lose: bool) -> Callable[[], bool]:
    if lose:
        sim.cluster.faults.watch.lose_next(100, kind="Deployment", type="MODIFIED")
    return lambda: _running(sim)


def deployment_delete(sim: Sim, lose: bool) -> Callable[[], bool]:
    _until(sim, lambda: _running(sim))
    deployment = sim.deployment()
    assert deployment is not None
    if lose:
        sim.cluster.faults.watch.lose_next(1, kind="Deployment", type="DELETED")
    sim.cluster.api.delete(ObjectRef.of(deployment), deployment["metadata"]["uid"])
    old = deployment["metadata"]["uid"]
    return lambda: (sim.deployment() or {"metadata": {"uid": old}})["metadata"]["uid"] != old


def budget_raise(sim: Sim, lose: bool) -> Callable[[], bool]:
    _until(sim, sim.completed)
    if lose:
        sim.cluster.faults.watch.lose_next(1, kind="Experiment", type="MODIFIED")
    sim.raise_budget(2)
    return lambda: Sim.true(sim.experiment(), "Restarting")


SCENARIOS: dict[str, tuple[Scenario, int | None]] = {
    "deployment_update": (deployment_update, 4),
    "deployment_delete": (deployment_delete, None),
    "budget_raise": (budget_raise, 2),
}
"""Each scenario and the Experiment's budget (``None``: it runs until told otherwise)."""


def _play(root: Path, scenario: Scenario, budget: int | None, lose: bool, phase: int) -> Any:
    sim = Sim(root, max_trials=budget, parallel=1, relist_seconds=RELIST_SECONDS)
    repaired = scenario(sim, lose)
    timer = sim.runtime.relisting
    timer.next = sim.cluster.clock.now() + timedelta(seconds=phase)
    steps, reconciles = _until(sim, repaired)
    sim.runtime.close()
    return steps, reconciles


def repair(root: Path, phases: Sequence[int]) -> dict[str, Any]:
    figures: dict[str, Any] = {"relist_seconds": RELIST_SECONDS}
    for name, (scenario, budget) in SCENARIOS.items():
        delays, extra = [], []
        for phase in phases:
            clean = _play(root / f"{name}-{phase}-clean", scenario, budget, False, phase)
            lost = _play(root / f"{name}-{phase}-lost", scenario, budget, True, phase)
            delays.append(lost[0] - clean[0])
            extra.append(lost[1] - clean[1])
        figures[name] = {
            "delay_s_median": statistics.median(delays),
            "delay_s_max": max(delays),
            "extra_reconciles_median": statistics.median(extra),
            "extra_reconciles_max": max(extra),
        }
    return figures


def _trial(index: int) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Trial",
        "metadata": {
            "name": f"e-{index:05d}",
            "namespace": "kubeflow",
            "labels": {LABEL_EXPERIMENT: "e"},
        },
        "spec": {},
    }


def relist(sizes: Sequence[int], repeat: int = 5) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        cluster = FakeCluster()
        for index in range(n):
            cluster.api.create(_trial(index))
        informer = Informer(cluster.for_cache())
        samples, found, listed = [], 0, informer.listed
        for _ in range(repeat):
            start = time.perf_counter()
            found += len(informer.relist())
            samples.append(time.perf_counter() - start)
        unchanged = informer.listed - listed
        full = median_seconds(functools.partial(informer.relist, full=True), repeat) * 1e3
        listed = informer.listed
        cluster.faults.watch.lose_next(1)
        ref = ObjectRef(API_VERSION, "Trial", "kubeflow", "e-00000")
        cluster.api.update_status(ref, {"observation": {}}, None)
        informer.sync()
        rows.append(
            {
                "trials": n,
                "relist_ms": statistics.median(samples) * 1e3,
                "full_relist_ms": full,  # every kind listed, as without the digests
                "reported_unchanged": found,
                "kinds_listed_unchanged": unchanged,
                "reported_after_one_lost": len(informer.relist()),
                "kinds_listed_after_one_lost": informer.listed - listed,
            }
        )
    for row in rows:
        row["relist_ms_ratio"] = row["relist_ms"] / rows[0]["relist_ms"]
        row["full_relist_ms_ratio"] = row["full_relist_ms"] / rows[0]["full_relist_ms"]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, nargs="*", default=[100, 1_000, 10_000])
    parser.add_argument(
        "--phases", type=int, default=int(RELIST_SECONDS), help="relist phases tried (seconds)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="katib-faults-bench-") as root:
        figures = {
            "repair": repair(Path(root), range(args.phases)),
            "relist": relist(args.trials),
            "peer": "none: Optuna reads its storage directly and keeps no watch cache",
        }
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
