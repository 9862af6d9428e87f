"""The decisive property of FromVolume, on the whole embedded runtime.

For the same seed, an Experiment that completes at N trials and is resumed to M from its volume
receives exactly the assignments of an uninterrupted run to M, whatever distribution its
parameters are drawn on, and in a space of a few points, which random search never repeats
and, once it has issued every one, completes (``ExperimentSuggestionEndReached``) however far
the budget was raised; ``Never`` cannot resume; and a resume whose saved state was lost
replays the history and never repeats an assignment.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.core.manifest import Manifest
from tests.support.sim import Sim

budgets = st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda p: (p[0], p[0] + p[1]))
distributions = st.sampled_from(["", "uniform", "logUniform", "normal", "logNormal"])
"""Katib's example draws ``lr`` and ``momentum`` with ``random``: any of them (min > 0)."""


def few_points(lrs: int, momenta: int) -> list[Manifest]:
    """The example's two parameters as ``lrs`` x ``momenta`` points (the Trial template
    references them by name)."""
    return [
        {
            "name": "lr",
            "parameterType": "discrete",
            "feasibleSpace": {"list": [f"0.0{i + 1}" for i in range(lrs)]},
        },
        {
            "name": "momentum",
            "parameterType": "int",
            "feasibleSpace": {"min": "1", "max": str(momenta)},
        },
    ]


def settled(
    root: Path,
    budget: int,
    parallel: int,
    seed: int,
    *,
    distribution: str,
    parameters: list[Manifest] | None,
) -> Sim:
    """A simulated Experiment of ``budget`` Trials in ``root``, run until it settles."""
    sim = Sim(
        root,
        max_trials=budget,
        parallel=parallel,
        seed=seed,
        distribution=distribution,
        parameters=parameters,
    )
    sim.settle()
    return sim


def straight_run(
    seed: int,
    budget: int,
    parallel: int,
    distribution: str = "",
    *,
    parameters: list[Manifest] | None = None,
) -> list[tuple[tuple[str, str], ...]]:
    with tempfile.TemporaryDirectory() as root:
        sim = settled(
            Path(root), budget, parallel, seed, distribution=distribution, parameters=parameters
        )
        return sim.assignments()


def resumed_run(
    seed: int,
    first: int,
    then: int,
    parallel: int,
    *,
    lose_state: bool,
    distribution: str = "",
    parameters: list[Manifest] | None = None,
) -> list[tuple[tuple[str, str], ...]]:
    with tempfile.TemporaryDirectory() as root:
        sim = settled(
            Path(root), first, parallel, seed, distribution=distribution, parameters=parameters
        )
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


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 1000),
    shape=st.sampled_from([(2, 2), (2, 3), (3, 3)]),
    cut=st.integers(1, 9),
    more=st.integers(1, 8),
    parallel=st.integers(1, 3),
    lose=st.booleans(),
    distribution=distributions,
)
def test_a_resumed_experiment_on_a_few_points_never_repeats_one_and_completes(
    *,
    seed: int,
    shape: tuple[int, int],
    cut: int,
    more: int,
    parallel: int,
    lose: bool,
    distribution: str,
) -> None:
    """``random`` on 4 to 9 points, stopped before it has issued them all and resumed with a
    budget beyond them: the uninterrupted run's points, each once, and no more."""
    parameters = few_points(*shape)
    size = shape[0] * shape[1]
    first = min(cut, size)
    parallel = min(parallel, first)
    resumed = resumed_run(
        seed,
        first,
        first + more,
        parallel,
        lose_state=lose,
        distribution=distribution,
        parameters=parameters,
    )
    assert resumed == straight_run(
        seed, first + more, parallel, distribution, parameters=parameters
    )
    assert len(resumed) == len(set(resumed)) == min(first + more, size)


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
