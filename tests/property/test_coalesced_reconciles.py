"""Ranking Trials before Experiments in the work queue loses nothing.

``app.loop.queue`` lets the keys due at one instant come out by rank, and the controller puts
the Trials first (``trials_first``): the Experiment that each of their writes woke is reconciled
once, after them, instead of once after each write. These properties play whole lifecycles
(run, raise the budget, run again, delete) twice on the embedded runtime, once with the queue in
plain arrival order and once ranked, and record every watch event of every object (the
controller's writes and those of Kubernetes' simulated controllers): each object goes through
the same sequence of conditions, gets the same Events, ends in the same state, and the ranked
run never takes more reconciles or writes. What may differ is only how many status writes of
trial counters the Experiment makes on the way: ranked, it records a Trial once that Trial's
passes of the tick are done (Running), not also as it was made (Pending) a moment before.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.app.loop.keys import Key
from katib_resume.app.loop.queue import WorkQueue
from katib_resume.core.manifest import Manifest
from tests.support.sim import Sim

Name = tuple[str, str | None, str]
Condition = tuple[str, str, str, str]
VOLATILE = ("resourceVersion", "managedFields", "generation")
"""Metadata that counts writes rather than content: fewer writes, smaller numbers."""


class Recording(Sim):
    """A ``Sim`` that keeps, per object, the sequence of its distinct condition lists, read
    from the watch after every step (each write is one event)."""

    def __init__(self, root: Path, ranked: bool, **spec: Any) -> None:
        super().__init__(root, **spec)
        self.root = str(root)
        self.sequences: dict[Name, list[tuple[Condition, ...]]] = {}
        self.cursor = 0
        if not ranked:  # plain arrival order: the start's keys queued again, unranked
            self.runtime.controller.queue = WorkQueue()
            self.runtime.enqueue_all()
        self.record()

    def step(self) -> None:
        super().step()
        self.record()

    def record(self) -> None:
        self.cursor, changes = self.cluster.changes_since(self.cursor)
        for change in changes:
            obj = change.object
            meta = obj["metadata"]
            name = (obj["kind"], meta.get("namespace"), meta["name"])
            conditions = _conditions(obj)
            seen = self.sequences.setdefault(name, [])
            if conditions and (not seen or seen[-1] != conditions):
                seen.append(conditions)

    def events(self) -> dict[str, list[tuple[str, str, str, str]]]:
        """Each object's Events in the order they were recorded (the temporary root left out
        of their messages)."""
        found: dict[str, list[tuple[str, str, str, str]]] = {}
        for event in self.cluster.events:
            ref = f"{event.ref.kind}/{event.ref.namespace}/{event.ref.name}"
            message = event.message.replace(self.root, "<root>")
            found.setdefault(ref, []).append((event.type, event.reason, message, event.time))
        return found

    def snapshot(self) -> list[Manifest]:
        """Every stored object, without the metadata that only counts writes."""
        kept = []
        for obj in self.cluster.store.all():
            meta = {k: v for k, v in obj["metadata"].items() if k not in VOLATILE}
            kept.append({**obj, "metadata": meta})
        return sorted(kept, key=lambda o: (o["kind"], o["metadata"]["name"]))


def _conditions(obj: Manifest) -> tuple[Condition, ...]:
    found = (obj.get("status") or {}).get("conditions") or ()
    return tuple((c["type"], c["status"], c.get("reason", ""), c.get("message", "")) for c in found)


def _play(root: Path, ranked: bool, raise_by: int, **spec: Any) -> Any:
    """One lifecycle: its condition sequences, the state after each settle, and its costs."""
    sim = Recording(root, ranked, **spec)
    states = []
    sim.settle()
    states.append(sim.snapshot())
    if raise_by and sim.raise_budget(raise_by):
        sim.settle()
        states.append(sim.snapshot())
    left = sim.delete_experiment()
    stats = sim.runtime.controller.stats
    sim.runtime.close()
    return sim.sequences, states, left, (stats.reconciles, stats.writes), sim.events()


@settings(max_examples=12)
@given(
    policy=st.sampled_from(["Never", "LongRunning", "FromVolume"]),
    budget=st.integers(1, 4),
    parallel=st.integers(1, 3),
    seed=st.integers(0, 3),
    raise_by=st.integers(0, 2),
)
def test_ranked_reconciles_write_the_same_conditions_and_end_in_the_same_state(
    policy: str, budget: int, parallel: int, seed: int, raise_by: int
) -> None:
    spec = dict(policy=policy, max_trials=budget, parallel=min(parallel, budget), seed=seed)
    with tempfile.TemporaryDirectory() as plain, tempfile.TemporaryDirectory() as ranked:
        before = _play(Path(plain), False, raise_by, **spec)
        after = _play(Path(ranked), True, raise_by, **spec)
    assert after[0] == before[0], "every object went through the same conditions"
    assert after[1] == before[1], "the same state after each run"
    assert after[2] == before[2] == [], "nothing left behind"
    assert after[4] == before[4], "each object got the same Events"
    assert after[3][0] <= before[3][0] and after[3][1] <= before[3][1], "never more work"


def test_an_experiment_woken_by_its_trials_in_one_tick_is_reconciled_once_after_them() -> None:
    """Three Trials started in one tick: every pass of theirs comes before the Experiment's."""
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(Path(root), max_trials=3, parallel=3)
        controller, order = sim.runtime.controller, []
        settle = controller.settle

        def noted(key: Key, outcome: Any) -> Any:
            order.append((sim.cluster.clock.now(), key.kind))
            return settle(key, outcome)

        controller.settle = noted  # type: ignore[method-assign]
        sim.settle()
        created = next(i for i, (_, kind) in enumerate(order) if kind == "Trial")
        tick = [kind for at, kind in order[created:] if at == order[created][0]]
        first_experiment = tick.index("Experiment")
        assert tick[:first_experiment] == ["Trial"] * first_experiment
        assert first_experiment >= 3 * 3, "each Trial's finalizer, Created and Job passes"
        assert "Trial" not in tick[first_experiment:], "the Trials were done for this tick"
