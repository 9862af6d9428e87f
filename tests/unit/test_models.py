"""Katib's own YAML parses into the core's models and survives a round trip untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from katib_resume.core.model import Experiment, Suggestion

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("name", ["from-volume-resume.yaml", "long-running-resume.yaml"])
def test_katib_examples_round_trip(name: str) -> None:
    raw = yaml.safe_load((DATA / name).read_text())
    experiment = Experiment.model_validate(raw)
    assert experiment.to_dict() == raw
    assert experiment.spec.max_trial_count == 12
    assert "trialSpec" in raw["spec"]["trialTemplate"]


def test_unknown_fields_survive_at_every_level() -> None:
    raw = yaml.safe_load((DATA / "from-volume-resume.yaml").read_text())
    raw["metadata"]["futureField"] = {"a": 1}
    raw["spec"]["algorithm"]["futureSetting"] = [1, 2]
    raw["status"] = {"conditions": [], "currentOptimalTrial": {"bestTrialName": "t"}, "trials": 3}
    assert Experiment.model_validate(raw).to_dict() == raw


def test_a_suggestion_status_round_trips_with_its_assignments() -> None:
    raw = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Suggestion",
        "metadata": {"name": "s", "namespace": "ns"},
        "spec": {"algorithm": {"algorithmName": "random"}, "requests": 3},
        "status": {
            "suggestionCount": 1,
            "suggestions": [
                {"name": "s-abc", "parameterAssignments": [{"name": "lr", "value": "0.1"}]}
            ],
            "conditions": [
                {
                    "type": "Created",
                    "status": "True",
                    "reason": "SuggestionCreated",
                    "message": "Suggestion is created",
                    "lastUpdateTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        },
    }
    assert Suggestion.model_validate(raw).to_dict() == raw
