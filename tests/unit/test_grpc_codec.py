"""The codec's reading of objects written by others: defaults, numbers as text, odd values."""

from __future__ import annotations

from typing import Any

from katib_resume.adapters.grpc.codec import algorithm_wire, experiment_wire, trial_wire
from katib_resume.core.trial_phases import TrialPhase


def metrics_seen(objective: dict[str, Any]) -> list[dict[str, str]]:
    observed = [
        {"name": "loss", "min": "1", "max": "3", "latest": "2"},
        {"name": "acc", "min": "4", "max": "6", "latest": "5"},
    ]
    trial = {
        "metadata": {"name": "t"},
        "spec": {"objective": objective},
        "status": {"observation": {"metrics": observed}},
    }
    wire = trial_wire(trial, TrialPhase.SUCCEEDED)
    result: list[dict[str, str]] = wire["status"]["observation"]["metrics"]
    return result


def test_a_metric_without_strategy_follows_katibs_defaults() -> None:
    minimize = {"type": "minimize", "objectiveMetricName": "loss"}
    assert metrics_seen(minimize) == [
        {"name": "loss", "value": "1"},  # the objective by its direction
        {"name": "acc", "value": "5"},  # any other metric: latest
    ]
    maximize = {"type": "maximize", "objectiveMetricName": "acc"}
    assert metrics_seen(maximize) == [{"name": "loss", "value": "2"}, {"name": "acc", "value": "6"}]
    explicit = {**minimize, "metricStrategies": [{"name": "loss", "value": "latest"}]}
    assert metrics_seen(explicit)[0] == {"name": "loss", "value": "2"}


def test_odd_values_are_read_leniently() -> None:
    experiment = {
        "metadata": {"name": "e"},
        "spec": {
            "parameters": [
                {"name": "n", "parameterType": "INT", "feasibleSpace": {"min": 1, "max": 2.5}},
                {"name": "x", "parameterType": "bogus", "feasibleSpace": "not a map"},
                "not a parameter",
            ],
            "objective": {"type": "sideways", "goal": "high"},
            "algorithm": {
                "algorithmName": "random",
                "algorithmSettings": [{"name": "on", "value": True}],
            },
            "parallelTrialCount": "3",
        },
    }
    assert experiment_wire(experiment) == {
        "name": "e",
        "spec": {
            "parameter_specs": {
                "parameters": [
                    {
                        "name": "n",
                        "parameter_type": "INT",
                        "feasible_space": {"min": "1", "max": "2.5"},
                    },
                    {"name": "x", "parameter_type": "UNKNOWN_TYPE"},
                ]
            },
            "objective": {"type": "UNKNOWN"},
            "algorithm": {
                "algorithm_name": "random",
                "algorithm_settings": [{"name": "on", "value": "true"}],
            },
        },
    }
    assert experiment_wire({}) == {"spec": {"objective": {"type": "UNKNOWN"}}}


def test_an_algorithm_setting_without_name_is_sent_with_an_empty_name() -> None:
    # Katib's Go client copies every setting, an unnamed one included; a Suggestion's
    # setting of the same (empty) name overrides it.
    spec = {"algorithmName": "random", "algorithmSettings": [{"value": "1"}, {"name": "a"}]}
    assert algorithm_wire(spec) == {
        "algorithm_name": "random",
        "algorithm_settings": [{"value": "1"}, {"name": "a"}],
    }
    assert algorithm_wire(spec, [{"name": "", "value": "2"}])["algorithm_settings"] == [
        {"value": "2"},
        {"name": "a"},
    ]
