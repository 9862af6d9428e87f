"""A lifecycle played under random watch faults (and late, slow or crashed Kubernetes
controllers) ends exactly as the same lifecycle without them.

Each example is a whole lifecycle (first run to completion, zero to two budget raises, each run
to completion again, perhaps the deletion) played twice on the embedded runtime: once with a
true watch, once with the controller's watch losing, repeating and reordering events and
expiring (410 Gone) at the rates drawn, from a drawn seed, and, in some examples, with the
garbage collector and the binder skipping ticks and the kubelet crashing (``world.faults``).
The user acts only when the cluster has settled, so both runs ask the same of the controller;
the faulty run must then reach the same end state: the same objects, true conditions, counters,
Trials and assignments. Only the repairs can make it so (``Informer.relist`` every
``relist_seconds``, the re-read of a write refused as stale): a lost event is never delivered
again.

"Settled" waits out a relist: the Experiment is complete (or gone) and no write happened for a
whole relist period, during which the cache was listed again from the API server. At the end
the faults stop, one more relist runs, and the controller must find nothing to do.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.core.manifest import Manifest
from tests.support.sim import Sim

LIFECYCLES = int(os.environ.get("WATCH_FAULT_LIFECYCLES", "40"))
RELIST = 10.0
"""A short relist period (simulated seconds) keeps each lifecycle short."""
QUIET = int(RELIST) + 2
"""Steps without a write that make a settled cluster: a relist falls inside them."""
LIMIT = 3_000


def _play(
    root: Path,
    script: dict[str, Any],
    faults: dict[str, float] | None,
    world: dict[str, float] | None = None,
) -> Manifest:
    sim = Sim(
        root,
        script["policy"],
        max_trials=script["budget"],
        parallel=script["parallel"],
        relist_seconds=RELIST,
    )
    if faults is not None:
        sim.cluster.faults.watch.at_random(**faults)  # type: ignore[arg-type]
    if world is not None:
        sim.world.faults.at_random(**world)  # type: ignore[arg-type]
    _settle(sim)
    for by in script["raises"]:
        sim.raise_budget(by)
        _settle(sim)
    if script["delete"]:
        left = sim.delete_experiment(max_steps=LIMIT)
        assert not left, f"left behind: {[o['kind'] for o in left]}"
    _final_relist_writes_nothing(sim)
    return _end_state(sim)


def _settle(sim: Sim) -> None:
    quiet = 0
    for _ in range(LIMIT):
        controller = sim.runtime.controller
        before = controller.stats.writes
        sim.step()
        done = sim.experiment() is None or sim.completed()
        calm = controller.stats.writes == before and not controller.failures
        quiet = quiet + 1 if done and calm else 0
        if quiet >= QUIET:
            return
    raise AssertionError(f"not settled within {LIMIT} steps")


def _final_relist_writes_nothing(sim: Sim) -> None:
    """Once the faults stop and the world has recovered (a crashed kubelet's pods are back: a
    Suggestion can be down at the moment its Experiment settles), one more relist finds
    nothing to do."""
    sim.cluster.faults.clear()
    sim.world.faults.clear()
    _settle(sim)
    runtime = sim.runtime
    before = runtime.controller.stats.writes
    for event in runtime.informer.relist():
        del event
    runtime.enqueue_all()
    runtime.drain()
    assert runtime.controller.stats.writes == before, "the settled cluster was the fixed point"


def _conditions(obj: Manifest | None) -> list[tuple[str, str]]:
    """The conditions that hold (True), with their reasons. A False condition records a phase
    the controller saw pass (``Running`` False is added at completion only to an Experiment
    that was seen running, as Katib does): a controller that missed a wake-up, like a slower
    one, sees fewer phases, and that is timing, not state."""
    found = (obj or {}).get("status", {}).get("conditions", [])
    return sorted((c["type"], c.get("reason", "")) for c in found if c["status"] == "True")


def _end_state(sim: Sim) -> Manifest:
    experiment, suggestion = sim.experiment(), sim.suggestion()
    status = (experiment or {}).get("status", {})
    counters = {k: v for k, v in status.items() if isinstance(v, int)}
    return {
        "objects": sorted((o["kind"], o["metadata"]["name"]) for o in sim.cluster.store.all()),
        "experiment": (_conditions(experiment), counters, (experiment or {}).get("spec")),
        "suggestion": (_conditions(suggestion), sim.assignments()),
        "trials": [(t["metadata"]["name"], _conditions(t)) for t in sim.trials()],
    }


SCRIPTS = st.fixed_dictionaries(
    {
        "policy": st.sampled_from(["Never", "LongRunning", "FromVolume"]),
        "budget": st.integers(1, 4),
        "parallel": st.integers(1, 2),
        "raises": st.lists(st.integers(1, 3), max_size=2),
        "delete": st.booleans(),
    }
)
FAULTS = st.fixed_dictionaries(
    {
        "loss": st.sampled_from([0.05, 0.1, 0.3]),
        "duplication": st.sampled_from([0.0, 0.1]),
        "reordering": st.sampled_from([0.0, 0.1, 0.2]),
        "expiry": st.sampled_from([0.0, 0.01]),
        "seed": st.integers(0, 2**16),
    }
)


WORLD = st.fixed_dictionaries(
    {
        "gc": st.sampled_from([0.0, 0.3]),
        "binder": st.sampled_from([0.0, 0.3]),
        "kubelet": st.sampled_from([0.0, 0.05, 0.2]),
        "seed": st.integers(0, 2**16),
    }
)


@settings(max_examples=LIFECYCLES, deadline=None)
@given(script=SCRIPTS, faults=FAULTS, world=st.none() | WORLD)
def test_watch_faults_change_nothing_of_the_end_state(
    script: dict[str, Any], faults: dict[str, float], world: dict[str, float] | None
) -> None:
    with tempfile.TemporaryDirectory(prefix="katib-resume-wf-") as root:
        clean = _play(Path(root) / "clean", script, None)
        faulty = _play(Path(root) / "faulty", script, faults, world)
    assert faulty == clean
