"""Hyperband: Katib's schedule and messages, past the first rung, and the end of the search."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import SuggestionServer, hyperband, validate
from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.hyperband import HyperbandSearch, _s_max, schedule
from katib_resume.core.model import Experiment, Manifest
from katib_resume.core.observed import Outcome

EPOCHS = {"name": "epochs", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "9"}}
LR = {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}}


def experiment(settings: dict[str, str], parallel: int | None = 9) -> Experiment:
    spec: dict[str, Any] = {
        "algorithm": {
            "algorithmName": "hyperband",
            "algorithmSettings": [{"name": k, "value": v} for k, v in settings.items()],
        },
        "objective": {"type": "maximize", "objectiveMetricName": "accuracy"},
        "parameters": [EPOCHS, LR],
    }
    if parallel is not None:
        spec["parallelTrialCount"] = parallel
    return Experiment.model_validate({"metadata": {"name": "hb", "namespace": "ns"}, "spec": spec})


SETTINGS = {"r_l": "9", "eta": "3", "resource_name": "epochs"}


@given(st.fractions(min_value=Fraction(1, 1000), max_value=10**12), st.integers(2, 10))
@example(Fraction(243), 3)
@example(Fraction(243) - Fraction(1, 10**8), 3)
@example(Fraction(1000), 10)
def test_s_max_is_the_exact_floor_of_the_logarithm(r_l: Fraction, eta: int) -> None:
    s_max = _s_max(r_l, eta)
    if r_l < 1:
        assert s_max == 0
    else:
        assert eta**s_max <= r_l < eta ** (s_max + 1)


def test_the_schedule_is_katibs_brackets() -> None:
    rungs = [(r.size, r.resource) for r in schedule(Fraction(9), 3)]
    assert rungs == [(9, "1"), (3, "3"), (1, "9"), (5, "3"), (2, "9"), (3, "9")]


@pytest.mark.parametrize(
    ("settings", "parallel", "message"),
    [
        ({"eta": "3"}, 9, "r_l and resource_name must be set."),
        ({**SETTINGS, "r_l": "-1"}, 9, "r_l must be a positive float number."),
        ({**SETTINGS, "r_l": "many"}, 9, "r_l must be a positive float number."),
        (SETTINGS, 3, "parallelTrialCount must be not less than 9."),
        (
            {**SETTINGS, "resource_name": "steps"},
            9,
            "value of resource_name setting must be in parameters.",
        ),
        ({**SETTINGS, "r_l": "0"}, 9, "r_l must be a positive float number."),
        ({**SETTINGS, "r_l": "1/2"}, 9, "r_l must be a positive float number."),  # no float
        ({**SETTINGS, "r_l": "inf"}, 9, "r_l must be a positive float number."),
        # Katib's float logarithms make s_max 4 here, and its floor 81 (3**4)
        ({**SETTINGS, "r_l": "243"}, 81, "parallelTrialCount must be not less than 243."),
        (
            {**SETTINGS, "eta": "1"},
            9,
            "eta must be greater than 1 (a rung keeps 1/eta of the one before)",
        ),
        (
            {**SETTINGS, "eta": "x"},
            9,
            "failed to validate eta(x): could not convert string to float: 'x'",
        ),
    ],
)
def test_bad_settings_get_katibs_message(
    settings: dict[str, str], parallel: int, message: str
) -> None:
    verdict = validate(experiment(settings, parallel))
    assert verdict.outcome is Outcome.INVALID
    assert verdict.message == message


def values(assignment: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in assignment["parameterAssignments"]}


def test_it_gets_past_the_first_rung_and_completes() -> None:
    """Katib's hyperband answered the second rung's request of 9 with 3 and stalled (#1168)."""
    server = SuggestionServer(experiment(SETTINGS), 5, None)
    server.start([])
    held = server.get_suggestions([], 9)
    assert [values(a)["epochs"] for a in held] == ["1"] * 9
    assert server.get_suggestions(held, 18, {}) == []  # the rung is still running
    assert server.exhausted(18) == ""
    results = {a["name"]: float(values(a)["lr"]) for a in held}
    second = server.get_suggestions(held, 18, results)
    best = sorted(held, key=lambda a: -float(values(a)["lr"]))[:3]
    assert [values(a) for a in second] == [{**values(a), "epochs": "3"} for a in best]
    while True:
        held += second
        results.update({a["name"]: float(values(a)["lr"]) for a in second})
        second = server.get_suggestions(held, len(held) + 9, results)
        if not second:
            break
    assert len(held) == 23
    assert server.exhausted(len(held) + 9).startswith("the search is exhausted")


KINDS = {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": ["a", "b", "c"]}}


def configurations(assignments: list[Manifest]) -> list[tuple[str, ...]]:
    """Each assignment's values but the resource's (``epochs``)."""
    return [tuple(v for k, v in values(a).items() if k != "epochs") for a in assignments]


def first_rung(parameters: list[dict[str, Any]], seed: int, batches: list[int]) -> list[Manifest]:
    """The 9 assignments of the first rung (r_l 9, eta 3), asked in ``batches``."""
    subject = experiment(SETTINGS)
    assert subject.spec.model_extra is not None
    subject.spec.model_extra["parameters"] = parameters
    server = SuggestionServer(subject, seed, None)
    server.start([])
    held: list[Manifest] = []
    for size in batches:
        held += server.get_suggestions(held, len(held) + size, {})
    assert len(held) == 9
    return held


@given(st.integers(0, 10**6), st.lists(st.integers(1, 9), min_size=1, max_size=9))
def test_a_first_rung_repeats_no_configuration_while_one_is_left(
    seed: int, batches: list[int]
) -> None:
    """Katib's first rung drew each configuration at random, so in a space of 3 it ran the
    same one at the same resource again. Ours holds each once per round of 3, whatever the
    batches the controller asks in."""
    batches = [*batches, 9]  # whatever is still missing
    held = first_rung([EPOCHS, KINDS], seed, batches)
    kinds = configurations(held)
    for start in range(0, 9, 3):
        assert sorted(kinds[start : start + 3]) == [("a",), ("b",), ("c",)]
    assert held == first_rung([EPOCHS, KINDS], seed, [9])


def test_a_continuous_first_rung_keeps_its_draws() -> None:
    """Nothing is looked up where a parameter is continuous: the draws are those of before
    (each a function of the seed and the index alone)."""
    held = first_rung([EPOCHS, LR], 5, [2, 7])
    subject = experiment(SETTINGS)
    search = build(subject, 5)
    assert isinstance(search, HyperbandSearch)
    draws = [search._random(index) for index in range(9)]
    assert configurations(held) == [tuple(v for k, v in draw if k != "epochs") for draw in draws]


def test_a_later_rung_keeps_each_configuration_once_while_it_can() -> None:
    """A first rung of 9 in a space of 3 runs each configuration 3 times. Katib's next rung
    keeps its best 3 Trials, which may be one configuration 3 times; ours keeps each
    configuration's best before any configuration's second."""
    held = first_rung([EPOCHS, KINDS], 3, [9])
    subject = experiment(SETTINGS)
    assert subject.spec.model_extra is not None
    subject.spec.model_extra["parameters"] = [EPOCHS, KINDS]
    server = SuggestionServer(subject, 3, None)
    server.start(held)
    score = {"a": 0.9, "b": 0.5, "c": 0.1}  # maximized: "a" ranks first three times
    results = {a["name"]: score[values(a)["opt"]] + i / 100 for i, a in enumerate(held)}
    second = server.get_suggestions(held, 12, results)
    assert [values(a)["epochs"] for a in second] == ["3"] * 3
    assert sorted(configurations(second)) == [("a",), ("b",), ("c",)]


@given(st.integers(0, 10**6))
def test_without_draws_again_the_index_order_fills_a_round(seed: int) -> None:
    """Past its draws again (none here), a round takes the configurations it lacks in the
    space's index order: still each once."""
    patch = pytest.MonkeyPatch()
    patch.setattr(hyperband, "REDRAWS", 0)
    try:
        kinds = configurations(first_rung([EPOCHS, KINDS], seed, [4, 5]))
    finally:
        patch.undo()
    for start in range(0, 9, 3):
        assert sorted(kinds[start : start + 3]) == [("a",), ("b",), ("c",)]


def test_a_failed_trial_ranks_below_every_result() -> None:
    """The next rung keeps the best results; a Trial that failed (no value) ranks last, even
    against a result worse than any other (maximized: the lowest)."""
    held = first_rung([EPOCHS, LR], 5, [9])
    failed = {a["name"] for a in held[:6]}
    results: dict[str, float | None] = {
        a["name"]: None if a["name"] in failed else -1000.0 - i for i, a in enumerate(held)
    }
    subject = experiment(SETTINGS)
    server = SuggestionServer(subject, 5, None)
    server.start(held)
    second = server.get_suggestions(held, 12, results)
    kept = {values(a)["lr"] for a in second}
    assert kept == {values(a)["lr"] for a in held[6:]}


SIX = {"name": "opt", "parameterType": "categorical", "feasibleSpace": {"list": list("abcdef")}}


@pytest.mark.parametrize(("redraws", "expected"), [(32, "edfcabdba"), (0, "edfabcdbe")])
def test_a_first_rung_of_a_seed_is_what_it_was(redraws: int, expected: str) -> None:
    """The configurations of a seed's first rung, pinned: a saved hyperband state is only its
    count of assignments, so a restart recomputes the rung's points from the seed, and another
    release must recompute the same ones (a draw, a draw again, the index order alike)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(hyperband, "REDRAWS", redraws)
    try:
        held = first_rung([EPOCHS, SIX], 7, [9])
    finally:
        patch.undo()
    assert "".join(kind for (kind,) in configurations(held)) == expected
    continuous = configurations(first_rung([EPOCHS, LR], 5, [9]))
    assert continuous[:2] == [("0.6288277490433418",), ("0.9119101912786725",)]
