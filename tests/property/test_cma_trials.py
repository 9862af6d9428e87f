"""``CmaTrials`` answers what a CMA-ES ask reads of the complete trials as Optuna's whole list.

A history is drawn as CMA-ES makes one: trials in number order, each asked at a generation that
never decreases along the numbers (none for the first few, asked before the first CMA-ES ask),
some of them carrying the optimizer of their generation (the asks that told the generation
before). The trials then complete, fail or stay running in a drawn order. After each completion
the kept trials and the study's whole list of complete trials give the same answer to what
``CmaEsSampler.sample_relative`` reads of it: whether one is complete, the newest carrying an
optimizer, and, in order, those of that optimizer's generation (of generation 0 with none).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from optuna.trial import FrozenTrial, TrialState

from katib_resume.adapters.local.suggestion.cma_trials import CmaTrials

GENERATION, OPTIMIZER = "cma:generation", "cma:optimizer"


def trial(number: int, generation: int | None, carries: bool) -> FrozenTrial:
    attrs: dict[str, Any] = {} if generation is None else {GENERATION: generation}
    if carries:
        attrs[f"{OPTIMIZER}:0"] = "00"
    return FrozenTrial(number, TrialState.COMPLETE, 1.0, None, None, {}, {}, {}, attrs, {}, number)


def reads(complete: list[FrozenTrial]) -> tuple[bool, int | None, list[int]]:
    """What ``sample_relative`` reads of its list of complete trials."""
    carrier = next((t for t in reversed(complete) if f"{OPTIMIZER}:0" in t.system_attrs), None)
    generation = 0 if carrier is None else carrier.system_attrs[GENERATION]
    solutions = [t.number for t in complete if t.system_attrs.get(GENERATION, -1) == generation]
    return bool(complete), None if carrier is None else carrier.number, solutions


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[FrozenTrial], list[int]]:
    """Trials as CMA-ES asks them, and the numbers of those that complete, in completion
    order."""
    startup = draw(st.integers(0, 3))
    steps = draw(st.lists(st.tuples(st.integers(0, 1), st.booleans()), max_size=30))
    trials = [trial(n, None, False) for n in range(startup)]
    generation = 0
    for number, (step, carries) in enumerate(steps, startup):
        generation += step
        trials.append(trial(number, generation, carries and generation > 0))
    order = draw(st.permutations(range(len(trials))))
    done = order[: draw(st.integers(0, len(order)))]  # the rest fail or still run
    return trials, list(done)


@given(histories())
def test_the_kept_trials_read_as_the_whole_list(
    history: tuple[list[FrozenTrial], list[int]],
) -> None:
    trials, done = history
    kept = CmaTrials(GENERATION, OPTIMIZER)
    complete: list[FrozenTrial] = []
    for number in done:
        kept.completed(trials[number])
        complete = sorted([*complete, trials[number]], key=lambda t: t.number)
        view = kept.trials()
        assert view is not None
        assert reads(view) == reads(complete)
        assert [t.number for t in view] == sorted(t.number for t in view)


def test_a_newer_carrier_of_a_lower_generation_makes_the_sampler_read_them_all() -> None:
    kept = CmaTrials(GENERATION, OPTIMIZER)
    kept.completed(trial(0, 2, True))
    assert kept.trials() is not None
    kept.completed(trial(1, 1, True))
    assert kept.trials() is None
    kept.completed(trial(2, 3, True))
    assert kept.trials() is None
