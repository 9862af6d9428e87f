"""The objective: which Trial is best so far, and whether it reaches the goal
(docs/katib-contract.md#trial-accounting).

Katib reads one number per Trial: in ``status.observation.metrics[]`` the first entry named like
the objective metric, and in it the field the metric strategy chooses (``min``, ``max`` or
``latest``; the default is ``min`` for ``minimize`` and ``max`` for ``maximize``, as the mutating
webhook would fill in). Values are strings in Katib's JSON (numbers are accepted too); a value that
does not parse, such as ``"unavailable"``, means "no observation yet" and the Trial is skipped.
Like Katib, a ``min`` or ``max`` that is ``"unavailable"`` falls back to ``latest``.
``NaN`` is skipped as well: it is neither better nor worse than anything, so it can never be the
optimum nor reach a goal.

Two differences from Katib, both about determinism rather than policy. Katib takes the strategy
from each Trial's copy of the objective; we take it from the Experiment, the one place a user
edits. Katib breaks ties by list order (the first one seen wins); we break them by name, so the
optimum does not depend on the order in which the API server happens to list Trials.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.trial import Trial


class ObjectiveType(StrEnum):
    MINIMIZE = "minimize"
    MAXIMIZE = "maximize"


class MetricStrategy(StrEnum):
    MIN = "min"
    MAX = "max"
    LATEST = "latest"


STRATEGIES = frozenset(strategy.value for strategy in MetricStrategy)
UNAVAILABLE = "unavailable"
"""Katib's placeholder for a metric the collector could not read."""

DEFAULT_STRATEGY = {
    ObjectiveType.MINIMIZE: MetricStrategy.MIN,
    ObjectiveType.MAXIMIZE: MetricStrategy.MAX,
}


@dataclass(frozen=True, slots=True)
class Optimum:
    """The current optimal Trial (Katib's ``currentOptimalTrial``, reduced to name and value)."""

    trial: str
    value: float


def parse_metric(raw: object) -> float | None:
    """A metric value as Go's ``strconv.ParseFloat`` would read it, or None if it is no number
    or NaN."""
    value = parse_number(raw)
    return None if value is None or math.isnan(value) else value


def parse_number(raw: object) -> float | None:
    """``parse_metric`` with NaN read as a number: what a suggestion service is told (Katib's
    read a Trial's objective with Python's ``float()``, and give a NaN its own meaning)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str) and "_" not in raw:
        try:
            return float(raw.strip())
        except ValueError:
            return None
    return None


def strategy_for(objective: ObjectiveSpec, direction: ObjectiveType) -> str:
    """The strategy named for the objective metric in ``metricStrategies``, else the default."""
    for entry in objective.metric_strategies:
        if entry.get("name") == objective.objective_metric_name and entry.get("value"):
            return str(entry["value"])
    return DEFAULT_STRATEGY[direction]


def observed_value(trial: Trial, metric: str, strategy: str) -> float | None:
    """The Trial's value of ``metric`` under ``strategy``; the first entry of that name decides.

    An unknown strategy gives no value, as in Katib.
    """
    return parse_metric(observed_raw(trial, metric, strategy))


def observed_raw(trial: Trial, metric: str, strategy: str) -> object:
    """The field ``observed_value`` reads, as the Trial holds it (``None``: none)."""
    if strategy not in STRATEGIES:
        return None
    extra: dict[str, Any] = trial.status.model_extra or {}
    observation = extra.get("observation")
    metrics = observation.get("metrics") if isinstance(observation, dict) else None
    if not isinstance(metrics, list | tuple):
        return None
    for entry in metrics:
        if isinstance(entry, dict) and entry.get("name") == metric:
            raw = entry.get(strategy)
            if raw == UNAVAILABLE and strategy in (MetricStrategy.MIN, MetricStrategy.MAX):
                raw = entry.get(MetricStrategy.LATEST)
            return raw
    return None


def direction_of(objective: ObjectiveSpec | None) -> ObjectiveType | None:
    """Minimize or maximize; ``None`` without an objective metric or with an unknown type."""
    if objective is None or not objective.objective_metric_name:
        return None
    try:
        return ObjectiveType(objective.type or "")
    except ValueError:
        return None


def best_trial(objective: ObjectiveSpec | None, trials: Iterable[Trial]) -> Optimum | None:
    """The Trial with the best observed objective value (ties: the smallest name), if any."""
    direction = direction_of(objective)
    if objective is None or direction is None:
        return None
    metric, strategy = objective.objective_metric_name or "", strategy_for(objective, direction)
    sign = 1.0 if direction is ObjectiveType.MINIMIZE else -1.0
    ranked = [
        (sign * value, trial.metadata.name)
        for trial in trials
        if (value := observed_value(trial, metric, strategy)) is not None
    ]
    if not ranked:
        return None
    key, name = min(ranked)
    return Optimum(trial=name, value=sign * key)


def goal_reached(objective: ObjectiveSpec | None, trials: Iterable[Trial]) -> bool:
    """Katib's goal test: minimize reaches it when best <= goal, maximize when best >= goal."""
    if objective is None or objective.goal is None:
        return False
    best = best_trial(objective, trials)
    return best is not None and reaches_goal(objective, best.value)


def reaches_goal(objective: ObjectiveSpec | None, best: float) -> bool:
    """Whether the best value ``best`` reaches the objective's goal (the goal test alone, for a
    caller that keeps the optimum: ``core.trial_ledger``)."""
    if objective is None or objective.goal is None:
        return False
    if objective.type == ObjectiveType.MINIMIZE:
        return best <= objective.goal
    return best >= objective.goal
