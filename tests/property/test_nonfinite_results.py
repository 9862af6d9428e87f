"""Results that are not finite, at every algorithm: one meaning, and nothing lost on a restart.

Katib's services read a Trial's objective with ``float()``, so NaN and the infinities arrive as
results. For every algorithm of the table (``ALGORITHMS``: a new one is covered here as it is
added) and either direction:

- a run told NaN, ``inf`` and ``-inf`` saves after every call, and one stopped and restarted
  (from its volume, from the history after the state was lost or damaged, or with no volume)
  hands out exactly the assignments of a run never stopped (but the rebuilt ones of CMA-ES and
  of Sobol after asking with every Trial failed, as for finite results); a kept state is
  restored, never rebuilt, and the file is strict JSON (``orjson`` reads it);
- NaN is a failed Trial: a run told NaN is the run told ``None`` in its place;
- ±inf is a value beyond every finite one: a run told ``inf`` is the run told a huge finite
  value in its place (but ``bayesianoptimization``, which fits the values themselves: it clips
  an infinity to the finite extremes, as Optuna's ``GPSampler`` does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from tempfile import TemporaryDirectory

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer
from katib_resume.adapters.local.suggestion.algorithms import ALGORITHMS
from katib_resume.core.model import Experiment, Manifest
from katib_resume.core.observed import VALID
from tests.property.test_suggestion_determinism import (
    DAMAGE,
    MODES,
    asked_after_failures,
    monotone,
    seeds,
)

Outcome = str
"""What a finished Trial reports: ``"value"`` (its objective), ``"nan"``, ``"inf"``, ``"-inf"``
or ``"failed"``."""
Scoring = Callable[[int, Manifest], float | None]
Steps = list[tuple[int, int]]
"""``(batch size, assignments still running after it)`` per controller step."""

FITTING_VALUES = {"bayesianoptimization"}
"""The algorithms whose models fit the values themselves, not their order."""
HUGE = 1e300
"""Beyond every finite objective here (``value`` is at most a few thousand)."""
SETTINGS: dict[str, list[dict[str, str]]] = {
    "multivariate-tpe": [{"name": "n_startup_trials", "value": "2"}],
    "bayesianoptimization": [{"name": "n_initial_points", "value": "2"}],
    "hyperband": [
        {"name": "r_l", "value": "4"},
        {"name": "eta", "value": "2"},
        {"name": "resource_name", "value": "p0"},
    ],
    "pbt": [
        {"name": "suggestion_trial_dir", "value": "/var/log/katib/checkpoints/"},
        {"name": "n_population", "value": "5"},
        {"name": "truncation_threshold", "value": "0.4"},
    ],
}
"""Settings an algorithm needs (any other runs on its defaults)."""


def subject(algorithm: str, direction: str) -> Experiment:
    """Two stepped numeric parameters (every algorithm takes them: a grid needs steps, CMA-ES
    two dimensions) and a categorical one."""
    parameters = [
        {"name": "p0", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "12"}},
        {
            "name": "p1",
            "parameterType": "double",
            "feasibleSpace": {"min": "-2", "max": "3", "step": "0.25"},
        },
        {"name": "p2", "parameterType": "categorical", "feasibleSpace": {"list": ["a", "bb"]}},
    ]
    spec = {
        "parallelTrialCount": 9,
        "algorithm": {"algorithmName": algorithm, "algorithmSettings": SETTINGS.get(algorithm, [])},
        "objective": {"type": direction, "objectiveMetricName": "m"},
        "parameters": parameters,
    }
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


def value(item: Manifest) -> float:
    values = [v["value"] for v in item["parameterAssignments"]]
    numbers = [float(len(v)) if v in ("a", "bb") else float(v) for v in values]
    return sum((x - 0.3) ** 2 for x in numbers)


REPORTED: dict[Outcome, Callable[[Manifest], float | None]] = {
    "value": value,
    "nan": lambda _: math.nan,
    "inf": lambda _: math.inf,
    "-inf": lambda _: -math.inf,
    "failed": lambda _: None,
}


def scoring(
    outcomes: Sequence[Outcome], replace: Callable[[float | None], float | None]
) -> Scoring:
    """The result of the ``i``-th assignment: its outcome (cycling), through ``replace``."""
    return lambda i, item: replace(REPORTED[outcomes[i % len(outcomes)]](item))


def follow(
    server: SuggestionServer, held: list[Manifest], steps: Steps, score: Scoring
) -> list[Manifest]:
    """The controller: each step reports every result but the newest ``running``, then asks."""
    for size, running in steps:
        finished = held[: max(0, len(held) - running)]
        results = {a["name"]: score(i, a) for i, a in enumerate(finished)}
        held = held + server.get_suggestions(held, len(held) + size, results)
    return held


def straight(experiment: Experiment, seed: int, steps: Steps, score: Scoring) -> list[Manifest]:
    server = SuggestionServer(experiment, seed, None)
    server.start([])
    return follow(server, [], steps, score)


def planned(algorithm: str, plan: Steps) -> Steps:
    """Fewer steps for the algorithms whose every ask fits a regressor."""
    return plan[:3] if algorithm in FITTING_VALUES else plan


outcomes = st.lists(st.sampled_from(list(REPORTED)), min_size=1, max_size=6).filter(
    lambda drawn: any(o in ("nan", "inf", "-inf") for o in drawn)
)
directions = st.sampled_from(["minimize", "maximize"])
steps = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 2)), min_size=3, max_size=8).map(
    monotone
)


def as_is(result: float | None) -> float | None:
    return result


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(deadline=None, max_examples=8)
@given(
    seed=seeds,
    direction=directions,
    drawn=outcomes,
    plan=steps,
    mode=st.just("kept") | st.sampled_from(MODES),
    data=st.data(),
)
def test_a_search_told_non_finite_results_resumes_exactly(
    *,
    algorithm: str,
    seed: int,
    direction: str,
    drawn: list[Outcome],
    plan: Steps,
    mode: str,
    data: st.DataObject,
) -> None:
    experiment, score = subject(algorithm, direction), scoring(drawn, as_is)
    plan = planned(algorithm, plan)
    expected = straight(experiment, seed, plan, score)
    cut = data.draw(st.integers(1, len(plan) - 1), label="cut")
    with TemporaryDirectory() as directory:
        volume = None if mode == "no volume" else Path(directory)
        server = SuggestionServer(experiment, seed, volume)
        server.start([])
        history = follow(server, [], plan[:cut], score)
        server.stop()
        path = Path(directory) / FILE_NAME
        if volume is not None:
            orjson.loads(path.read_bytes())  # strict JSON: no NaN, no Infinity
        if mode in DAMAGE:
            DAMAGE[mode](path, data)
        restarted = SuggestionServer(experiment, seed, volume)
        report = restarted.start(history)
        resumed = follow(restarted, history, plan[cut:], score)
    if mode == "kept":
        assert report.source == "restored", report.reason
    reports = [score(i, a) for i, a in enumerate(expected)]
    lost = mode != "kept" and (
        algorithm == "cmaes"  # its lost evolution starts anew
        or (algorithm == "sobol" and asked_after_failures(reports, plan))
    )
    if not lost:
        assert resumed == expected
    assert len(resumed) == len(expected)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(deadline=None, max_examples=6)
@given(seed=seeds, direction=directions, drawn=outcomes, plan=steps)
def test_nan_is_a_failed_trial(
    algorithm: str, seed: int, direction: str, drawn: list[Outcome], plan: Steps
) -> None:
    def failed(result: float | None) -> float | None:
        return None if result is not None and math.isnan(result) else result

    as_they_are, as_failures = _told(algorithm, seed, direction, drawn, plan, instead=failed)
    assert as_they_are == as_failures


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS if a not in FITTING_VALUES])
@settings(deadline=None, max_examples=6)
@given(seed=seeds, direction=directions, drawn=outcomes, plan=steps)
def test_an_infinity_is_a_value_beyond_every_finite_one(
    algorithm: str, seed: int, direction: str, drawn: list[Outcome], plan: Steps
) -> None:
    def huge(result: float | None) -> float | None:
        if result is None or not math.isinf(result):
            return result
        return math.copysign(HUGE, result)

    as_they_are, as_finite = _told(algorithm, seed, direction, drawn, plan, instead=huge)
    assert as_they_are == as_finite


def _told(
    algorithm: str,
    seed: int,
    direction: str,
    drawn: list[Outcome],
    plan: Steps,
    *,
    instead: Callable[[float | None], float | None],
) -> tuple[object, object]:
    """A run told the drawn results as they are, and one told ``instead`` of each."""
    experiment, plan = subject(algorithm, direction), planned(algorithm, plan)
    told = straight(experiment, seed, plan, scoring(drawn, as_is))
    return told, straight(experiment, seed, plan, scoring(drawn, instead))


def test_every_algorithm_is_covered() -> None:
    """The table's every algorithm runs with the settings here (a new one that needs settings
    fails here first, not in the property tests' set-up)."""
    for algorithm in ALGORITHMS:
        server = SuggestionServer(subject(algorithm, "minimize"), 0, None)
        assert server.validate() == VALID, algorithm
        assert server.start([]).source == "new"
        assert len(server.get_suggestions([], 1, {})) == 1
