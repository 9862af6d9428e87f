"""The codec's reading of objects written by others: defaults, numbers as text, odd values."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.adapters.grpc.api import decode, encode
from katib_resume.adapters.grpc.codec import (
    algorithm_wire,
    experiment_manifest,
    experiment_wire,
    parameter_manifest,
    parameter_wire,
    trial_wire,
)
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


def lr(distribution: object = None) -> dict[str, Any]:
    space: dict[str, Any] = {"min": "0.001", "max": "1"}
    if distribution is not None:
        space["distribution"] = distribution
    return {"name": "lr", "parameterType": "double", "feasibleSpace": space}


@pytest.mark.parametrize(
    ("spelling", "enum"),
    [
        ("uniform", "UNIFORM"),
        ("logUniform", "LOG_UNIFORM"),
        ("normal", "NORMAL"),
        ("logNormal", "LOG_NORMAL"),
    ],
)
def test_every_distribution_crosses_the_wire_and_comes_back(spelling: str, enum: str) -> None:
    wire = parameter_wire(lr(spelling))
    assert wire["feasible_space"]["distribution"] == enum
    experiment = {"metadata": {"name": "e"}, "spec": {"parameters": [lr(spelling)]}}
    data = encode("Experiment", experiment_wire(experiment))
    assert experiment_manifest(decode("Experiment", data)) == experiment


@pytest.mark.parametrize("spelling", [None, "", "unknown", "LogUniform", "log-uniform", 2, True])
def test_any_other_distribution_goes_unspecified_and_reads_as_none(spelling: object) -> None:
    """Katib's controller sends ``DISTRIBUTION_UNSPECIFIED`` (0, not written) for a spelling
    it does not know, ``unknown`` included, and its services read that as uniform: no
    ``distribution`` on the service's side, which every algorithm of ours reads as uniform."""
    assert "distribution" not in parameter_wire(lr(spelling))["feasible_space"]
    experiment = {"metadata": {"name": "e"}, "spec": {"parameters": [lr(spelling)]}}
    data = encode("Experiment", experiment_wire(experiment))
    assert experiment_manifest(decode("Experiment", data)) == {
        "metadata": {"name": "e"},
        "spec": {"parameters": [lr()]},
    }


def test_a_distribution_number_this_api_lacks_is_read_as_its_digits() -> None:
    """A newer Katib's enum value: kept as its number by protobuf, and a spelling the search
    space refuses (``tests/integration/test_grpc_distributions.py``), never a crash."""
    space = {"min": "0.001", "max": "1", "distribution": 7}
    wire = {"name": "lr", "parameter_type": "DOUBLE", "feasible_space": space}
    decoded = decode("ParameterSpec", encode("ParameterSpec", wire))
    assert parameter_manifest(decoded) == lr("7")
    unspecified = {**wire, "feasible_space": {**space, "distribution": 0}}
    assert parameter_manifest(decode("ParameterSpec", encode("ParameterSpec", unspecified))) == lr()
