"""The decisive property of FromVolume, on the whole embedded runtime.

For the same seed, an Experiment that completes at N trials and is resumed to M from its volume
receives exactly the assignments of an uninterrupted run to M, whatever distribution its
parameters are drawn on; ``Never`` cannot resume; and a
resume whose saved state was lost replays the history and never repeats an assignment.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.sim import Sim

budgets = st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda p: (p[0], p[0] + p[1]))
distributions = st.sampled_from(["", "uniform", "logUniform", "normal", "logNormal"])
"""Katib's example draws ``lr`` and ``momentum`` with ``random``: any of them (min > 0)."""


def straight_run(
    seed: int, budget: int, parallel: int, distribution: str = ""
) -> list[tuple[tuple[str, str], ...]]:
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(
            Path(root), max_trials=budget, parallel=parallel, seed=seed, distribution=distribution
        )
        sim.settle()
        return sim.assignments()


def resumed_run(
    seed: int, first: int, then: int, parallel: int, *, lose_state: bool, distribution: str = ""
) -> list[tuple[tuple[str, str], ...]]:
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(
            Path(root), max_trials=first, parallel=parallel, seed=seed, distribution=distribution
        )
        sim.settle()
        assert len(sim.assignments()) == first
        if lose_state:
            for state in Path(root).rglob("suggestion-state.json"):
                state.unlink()
        assert sim.raise_budget(then - first)
        sim.settle()
        names = [a["name"] for a in sim.suggestion()["status"]["suggestions"]]  # type: ignore[index]
        assert len(names) == len(set(names)), "an assignment was repeated"
        return sim.assignments()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 1000),
    budget=budgets,
    parallel=st.integers(1, 3),
    lose=st.booleans(),
    distribution=distributions,
)
def test_a_resumed_experiment_gets_the_assignments_of_an_uninterrupted_run(
    seed: int, budget: tuple[int, int], parallel: int, lose: bool, distribution: str
) -> None:
    first, then = budget
    parallel = min(parallel, first)
    resumed = resumed_run(seed, first, then, parallel, lose_state=lose, distribution=distribution)
    assert resumed == straight_run(seed, then, parallel, distribution)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000), budget=st.integers(1, 5))
def test_never_cannot_resume(seed: int, budget: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        sim = Sim(Path(root), "Never", max_trials=budget, parallel=1, seed=seed)
        sim.settle()
        assert not sim.raise_budget(3)
        sim.settle()
        assert len(sim.trials()) == budget
        assert sim.deployment() is None and sim.pvc() is None
