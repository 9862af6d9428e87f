"""The trial ledger's edges (``core/trial_ledger.py``): a ledger is advanced only for the
Experiment it was folded for, an update that changes nothing costs nothing (the same ledger),
and what it keeps of a Trial is a value."""

from __future__ import annotations

import pytest

from katib_resume.core.katib import LABEL_EXPERIMENT
from katib_resume.core.model.experiment import ObjectiveSpec
from katib_resume.core.model.trial import Trial
from katib_resume.core.trial_ledger import TrialLedger, TrialRecord, advance, ledger_of
from katib_resume.core.trial_phases import TrialPhase
from tests.unit.test_trials import experiment, trial


def test_a_ledger_is_advanced_only_for_its_own_experiment() -> None:
    exp = experiment()
    ledger = ledger_of(exp, [trial("a", [("Succeeded", "True")], owners=[])])
    assert advance(ledger, exp, [], []) is ledger
    assert ledger.has("a") and not ledger.has("b")
    assert advance(ledger, experiment(uid="another-uid"), [], []) is None
    assert advance(ledger, experiment(namespace="elsewhere"), [], []) is None


def test_an_update_without_changes_is_the_same_ledger() -> None:
    ledger = ledger_of(experiment(), [])
    assert ledger.updated([], []) is ledger
    assert ledger.updated([], ["gone"]) is not ledger


def test_a_record_is_a_value() -> None:
    record = TrialRecord("t", TrialPhase.SUCCEEDED, 1.0)
    assert hash(record) == hash(TrialRecord("t", TrialPhase.SUCCEEDED, 1.0))
    with pytest.raises(AttributeError):
        record.key = 2.0  # type: ignore[misc]


def _scored(name: str, loss: str, experiment_label: str = "exp") -> Trial:
    return Trial.model_validate(
        {
            "metadata": {
                "name": name,
                "namespace": "kubeflow",
                "labels": {LABEL_EXPERIMENT: experiment_label},
            },
            "status": {
                "conditions": [{"type": "Succeeded", "status": "True"}],
                "observation": {
                    "metrics": [{"name": "loss", "min": loss, "max": loss, "latest": loss}]
                },
            },
        }
    )


def test_a_minimized_goal_is_read_from_the_kept_optimum() -> None:
    objective = ObjectiveSpec(type="minimize", objective_metric_name="loss", goal=0.5)
    ledger = TrialLedger.of(objective, [_scored("a", "0.4"), _scored("b", "0.9")])
    assert ledger.goal_reached(objective)
    assert not TrialLedger.of(objective, [_scored("b", "0.9")]).goal_reached(objective)


def test_a_maximized_goal_is_read_from_the_kept_optimum() -> None:
    objective = ObjectiveSpec(type="maximize", objective_metric_name="loss", goal=0.5)
    assert not TrialLedger.of(objective, [_scored("a", "0.4")]).goal_reached(objective)
    assert TrialLedger.of(objective, [_scored("a", "0.4"), _scored("b", "0.6")]).goal_reached(
        objective
    )


def test_a_trial_no_longer_the_experiments_leaves_its_ledger() -> None:
    exp = experiment()
    ledger = ledger_of(exp, [_scored("a", "0.4"), _scored("b", "0.9")])
    moved = advance(ledger, exp, [_scored("a", "0.4", experiment_label="other")], [])
    assert moved is not None and not moved.has("a") and moved.has("b")
