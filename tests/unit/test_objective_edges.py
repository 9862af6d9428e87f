"""The objective's edges (``core/objective.py``, docs/katib-contract.md#observations): an unknown
strategy gives no value, only the objective metric's own strategy counts, no direction without
an objective metric, and no goal is never reached."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.objective import (
    ObjectiveType,
    Optimum,
    direction_of,
    observed_value,
    reaches_goal,
    strategy_for,
)
from tests.unit.test_trials import trial


def test_an_unknown_strategy_gives_no_value_even_when_the_entry_has_that_key() -> None:
    entry = {"name": "loss", "min": "1", "max": "3", "latest": "2", "median": "5"}
    done = trial("t", metrics=[entry])
    assert observed_value(done, "loss", "median") is None
    assert observed_value(done, "loss", "latest") == 2.0


def test_only_the_objective_metrics_own_strategy_replaces_the_default() -> None:
    objective = ObjectiveSpec(
        type="maximize",
        objective_metric_name="accuracy",
        metric_strategies=({"name": "loss", "value": "min"}, {"name": "accuracy", "value": ""}),
    )
    assert strategy_for(objective, ObjectiveType.MAXIMIZE) == "max"


def test_no_direction_without_an_objective_metric() -> None:
    assert direction_of(None) is None
    assert direction_of(ObjectiveSpec(type="minimize")) is None
    assert direction_of(ObjectiveSpec(type="minimize", objective_metric_name="loss")) == "minimize"


def test_no_goal_is_never_reached() -> None:
    assert not reaches_goal(None, 0.0)
    assert not reaches_goal(ObjectiveSpec(type="minimize", objective_metric_name="loss"), -1e9)
    assert reaches_goal(ObjectiveSpec(type="maximize", goal=0.5), 0.5)


def test_an_optimum_is_a_value() -> None:
    best = Optimum("t", 1.0)
    assert hash(best) == hash(Optimum("t", 1.0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        best.value = 2.0  # type: ignore[misc]
