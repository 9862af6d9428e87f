"""``currentOptimalTrial`` as Katib writes it, and its place in the Experiment's status."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from katib_resume.core.actions import UpdateStatus
from katib_resume.core.model import Experiment
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.plan.experiment import decide_experiment
from katib_resume.core.trial_ledger import TrialLedger

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _trial(name: str, accuracy: str, *, lr: str = "0.1", phase: str = "Succeeded") -> Trial:
    metrics = [
        {"name": "accuracy", "min": "0.1", "max": accuracy, "latest": accuracy},
        {"name": "loss", "min": "0.2", "max": "0.9", "latest": "0.3"},
    ]
    return Trial.model_validate(
        {
            "metadata": {
                "name": name,
                "namespace": "ns",
                "labels": {"katib.kubeflow.org/experiment": "exp"},
            },
            "spec": {"parameterAssignments": [{"name": "lr", "value": lr}]},
            "status": {
                "conditions": [{"type": phase, "status": "True"}],
                "observation": {"metrics": metrics},
            },
        }
    )


MAXIMIZE = ObjectiveSpec(type="maximize", objective_metric_name="accuracy")


def test_current_optimal_trial_has_katibs_fields() -> None:
    ledger = TrialLedger.of(MAXIMIZE, [_trial("a", "0.7"), _trial("b", "0.9", lr="0.01")])
    optimal = ledger.current_optimal_trial()
    assert optimal is not None
    assert optimal["bestTrialName"] == "b"
    assert optimal["parameterAssignments"] == [{"name": "lr", "value": "0.01"}]
    assert [m["name"] for m in optimal["observation"]["metrics"]] == ["accuracy", "loss"]


def test_the_strategy_decides_which_value_ranks() -> None:
    latest = ObjectiveSpec(
        type="minimize",
        objective_metric_name="accuracy",
        metric_strategies=({"name": "accuracy", "value": "min"},),
    )
    ledger = TrialLedger.of(latest, [_trial("a", "0.7"), _trial("b", "0.9")])
    assert ledger.optimal is not None and ledger.optimal.name == "a", "equal mins: smaller name"


def test_no_observation_no_optimal_trial() -> None:
    ledger = TrialLedger.of(MAXIMIZE, [_trial("a", "unavailable")])
    assert ledger.current_optimal_trial() is None


def test_the_best_going_away_hands_over_to_the_next() -> None:
    ledger = TrialLedger.of(MAXIMIZE, [_trial("a", "0.7"), _trial("b", "0.9")])
    ledger.fold("b", None)
    assert ledger.optimal is not None and ledger.optimal.name == "a"
    assert ledger.counts.succeeded_trials == ("a",)


def _experiment(status: dict[str, Any] | None = None) -> Experiment:
    return Experiment.model_validate(
        {
            "metadata": {"name": "exp", "namespace": "ns", "generation": 1},
            "spec": {
                "algorithm": {"algorithmName": "random"},
                "objective": {"type": "maximize", "objectiveMetricName": "accuracy"},
                "maxTrialCount": 10,
            },
            "status": status or {},
        }
    )


def _settle(status: dict[str, Any], trials: tuple[Trial, ...]) -> tuple[dict[str, Any], int]:
    """Apply the Experiment's status writes until a reconcile writes none."""
    for writes in range(5):
        decided = decide_experiment(_experiment(status), None, trials, NOW)
        updates = [a for a in decided.actions if isinstance(a, UpdateStatus)]
        if not updates:
            return status, writes
        status = updates[0].status
    raise AssertionError("the status never settles")


def test_the_experiment_status_carries_the_optimal_trial_and_settles() -> None:
    trials = (_trial("a", "0.7"), _trial("b", "0.9"))
    status, writes = _settle({}, trials)
    assert status["currentOptimalTrial"]["bestTrialName"] == "b"
    assert status["succeededTrialList"] == ["a", "b"]
    assert writes == 2, "Created, then Running: the optimal trial adds no write of its own"
    better = (*trials, _trial("c", "0.95"))
    decided = decide_experiment(_experiment(status), None, better, NOW)
    [update] = [a for a in decided.actions if isinstance(a, UpdateStatus)]
    assert update.status["currentOptimalTrial"]["bestTrialName"] == "c"


def test_a_changed_optimal_trial_alone_is_written() -> None:
    trials = (_trial("a", "0.7"), _trial("b", "0.9"))
    status, _ = _settle({}, trials)
    status = {**status, "currentOptimalTrial": {"bestTrialName": "stale"}}
    decided = decide_experiment(_experiment(status), None, trials, NOW)
    [update] = [a for a in decided.actions if isinstance(a, UpdateStatus)]
    assert update.status["currentOptimalTrial"]["bestTrialName"] == "b"
    assert update.status["conditions"] == status["conditions"]
