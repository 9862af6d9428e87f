"""Katib's objects as ``api.v1.beta1`` messages, the way Katib's suggestion client converts them.

The encoders turn the Kubernetes JSON of an Experiment and its Trials into the dictionaries
``adapters.grpc.api`` serializes (Katib's ``ConvertExperiment`` / ``ConvertTrials``); the
decoders do the reverse for a suggestion service written in Python (and for the round-trip
property test). Objects come from the cluster and were written by others, so the encoders read
leniently: a missing field is left at its protobuf default, a number where Katib has a string is
sent as its text, an unknown enum spelling becomes the enum's ``UNKNOWN`` member (for a
parameter's ``distribution``, ``DISTRIBUTION_UNSPECIFIED``, which every service reads as uniform).
The decoders give a parameter the CRD's ``distribution`` spelling, so a service reads the space
exactly as the embedded runtime reads the Experiment (``distribution_manifest``).

A Trial's observation carries one value per metric, picked by the metric's strategy in the
Trial's objective (``metricStrategies``: min, max or latest). A metric without a strategy gets
Katib's defaulting rule: the objective metric by the objective's direction, others ``latest``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from katib_resume.adapters.grpc.api import Wire
from katib_resume.core.manifest import Manifest
from katib_resume.core.trial_phases import TrialPhase

PARAMETER_TYPE = {
    "double": "DOUBLE",
    "int": "INT",
    "discrete": "DISCRETE",
    "categorical": "CATEGORICAL",
}
OBJECTIVE_TYPE = {"minimize": "MINIMIZE", "maximize": "MAXIMIZE"}
DISTRIBUTION = {
    "uniform": "UNIFORM",
    "logUniform": "LOG_UNIFORM",
    "normal": "NORMAL",
    "logNormal": "LOG_NORMAL",
}
"""``feasibleSpace.distribution``'s CRD spellings, matched exactly as Katib's controller does;
any other (empty, ``unknown``) is ``DISTRIBUTION_UNSPECIFIED`` = 0, which proto3 does not send."""
CONDITION = {
    TrialPhase.PENDING: "CREATED",
    TrialPhase.RUNNING: "RUNNING",
    TrialPhase.SUCCEEDED: "SUCCEEDED",
    TrialPhase.KILLED: "KILLED",
    TrialPhase.FAILED: "FAILED",
    TrialPhase.METRICS_UNAVAILABLE: "METRICSUNAVAILABLE",
    TrialPhase.EARLY_STOPPED: "EARLYSTOPPED",
}
FEASIBLE_KEYS = ("max", "min", "step")


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _text(value: Any) -> str:
    """A string field: Katib's value as text (a YAML number written unquoted included)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def compact(wire: Wire) -> Wire:
    """Without the fields left at their default: what protobuf would not send anyway."""
    return {key: value for key, value in wire.items() if value not in (None, "", [], {}, 0)}


def _pairs(items: Any) -> list[Wire]:
    return [
        compact({"name": _text(item.get("name")), "value": _text(item.get("value"))})
        for item in _list(items)
        if isinstance(item, Mapping)
    ]


# -- encoding: Kubernetes JSON -> messages ------------------------------------------------------


def algorithm_wire(spec: Any, settings: Sequence[Manifest] = ()) -> Wire:
    """``AlgorithmSpec`` / ``EarlyStoppingSpec``; ``settings`` (the Suggestion's
    ``status.algorithmSettings``, what the service returned earlier) override those of the spec
    by name and add to them, as Katib's ``updateAlgorithmSettings`` does."""
    spec = _map(spec)
    merged = {str(item.get("name", "")): item for item in _pairs(spec.get("algorithmSettings"))}
    for item in _pairs(settings):
        merged[str(item.get("name", ""))] = item
    return compact(
        {
            "algorithm_name": _text(spec.get("algorithmName")),
            "algorithm_settings": list(merged.values()),
        }
    )


def objective_wire(objective: Any) -> Wire:
    objective = _map(objective)
    goal = objective.get("goal")
    return compact(
        {
            "type": OBJECTIVE_TYPE.get(_text(objective.get("type")).lower(), "UNKNOWN"),
            "goal": float(goal) if isinstance(goal, int | float) else None,
            "objective_metric_name": _text(objective.get("objectiveMetricName")),
            "additional_metric_names": [
                _text(n) for n in _list(objective.get("additionalMetricNames"))
            ],
        }
    )


def parameter_wire(parameter: Mapping[str, Any]) -> Wire:
    space = _map(parameter.get("feasibleSpace"))
    feasible: Wire = {key: _text(space.get(key)) for key in FEASIBLE_KEYS}
    feasible["list"] = [_text(item) for item in _list(space.get("list"))]
    feasible["distribution"] = DISTRIBUTION.get(_text(space.get("distribution")))
    kind = PARAMETER_TYPE.get(_text(parameter.get("parameterType")).lower(), "UNKNOWN_TYPE")
    return compact(
        {
            "name": _text(parameter.get("name")),
            "parameter_type": kind,
            "feasible_space": compact(feasible),
        }
    )


def experiment_wire(experiment: Manifest, settings: Sequence[Manifest] = ()) -> Wire:
    """The ``Experiment`` message: Katib's ``ConvertExperiment`` of the Kubernetes object."""
    spec = _map(experiment.get("spec"))
    parameters = [
        parameter_wire(p) for p in _list(spec.get("parameters")) if isinstance(p, Mapping)
    ]
    wire_spec: Wire = {
        "parameter_specs": compact({"parameters": parameters}),
        "objective": objective_wire(spec.get("objective")),
        "algorithm": algorithm_wire(spec.get("algorithm"), settings),
        "early_stopping": algorithm_wire(spec.get("earlyStopping"))
        if spec.get("earlyStopping")
        else None,
        "parallel_trial_count": _count(spec.get("parallelTrialCount")),
        "max_trial_count": _count(spec.get("maxTrialCount")),
    }
    name = _text(_map(experiment.get("metadata")).get("name"))
    return compact({"name": name, "spec": compact(wire_spec)})


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def strategy_of(objective: Mapping[str, Any], metric: str) -> str:
    """Which of a metric's values the service sees: ``min``, ``max`` or ``latest``."""
    for item in _list(objective.get("metricStrategies")):
        if isinstance(item, Mapping) and item.get("name") == metric:
            return _text(item.get("value"))
    if metric == objective.get("objectiveMetricName"):
        return "max" if _text(objective.get("type")).lower() == "maximize" else "min"
    return "latest"


def observation_wire(objective: Mapping[str, Any], observation: Any) -> Wire:
    metrics = []
    for metric in _list(_map(observation).get("metrics")):
        if isinstance(metric, Mapping):
            name = _text(metric.get("name"))
            value = _text(metric.get(strategy_of(objective, name)))
            metrics.append(compact({"name": name, "value": value}))
    return compact({"metrics": metrics})


def trial_wire(trial: Manifest, phase: TrialPhase) -> Wire:
    """The ``Trial`` message: Katib's ``ConvertTrials`` of one Trial, whose phase is ``phase``."""
    spec, status = _map(trial.get("spec")), _map(trial.get("status"))
    objective = _map(spec.get("objective"))
    labels = {str(k): _text(v) for k, v in _map(spec.get("labels")).items()}
    wire_spec = {
        "objective": objective_wire(objective),
        "parameter_assignments": compact({"assignments": _pairs(spec.get("parameterAssignments"))}),
        "labels": labels,
    }
    wire_status = {
        "start_time": _text(status.get("startTime")),
        "completion_time": _text(status.get("completionTime")),
        "condition": CONDITION[phase],
        "observation": observation_wire(objective, status.get("observation")),
    }
    name = _text(_map(trial.get("metadata")).get("name"))
    return compact({"name": name, "spec": compact(wire_spec), "status": compact(wire_status)})


# -- decoding: messages -> Kubernetes JSON ------------------------------------------------------

_PARAMETER_TYPE_OF = {wire: kube for kube, wire in PARAMETER_TYPE.items()}
_OBJECTIVE_TYPE_OF = {wire: kube for kube, wire in OBJECTIVE_TYPE.items()}
_DISTRIBUTION_OF = {wire: kube for kube, wire in DISTRIBUTION.items()}
PHASE_OF = {wire: phase for phase, wire in CONDITION.items()}


def _kube_pairs(items: Iterable[Wire]) -> list[Manifest]:
    return [
        compact({"name": item.get("name", ""), "value": item.get("value", "")}) for item in items
    ]


def algorithm_manifest(wire: Wire) -> Manifest:
    return compact(
        {
            "algorithmName": wire.get("algorithm_name", ""),
            "algorithmSettings": _kube_pairs(wire.get("algorithm_settings", [])),
        }
    )


def objective_manifest(wire: Wire) -> Manifest:
    return compact(
        {
            "type": _OBJECTIVE_TYPE_OF.get(wire.get("type", "")),
            "goal": wire.get("goal"),
            "objectiveMetricName": wire.get("objective_metric_name", ""),
            "additionalMetricNames": list(wire.get("additional_metric_names", [])),
        }
    )


def distribution_manifest(value: Any) -> str:
    """``feasibleSpace.distribution`` of the enum as decoded: a name, or the number of one this
    API does not have (a newer Katib's), which no algorithm samples.

    Unspecified (absent or 0) is no distribution, which every algorithm reads as uniform, as
    Katib's Python services read ``None``. An unknown number becomes its digits, a spelling the
    search space refuses for every algorithm (``distribution '7' is not supported``): Katib's
    services have no law for it either (hyperopt leaves the parameter out of its space and
    fails at the first draw, Optuna raises on the enum's name), and ours say so when the
    settings are validated."""
    if isinstance(value, int) and not isinstance(value, bool):
        return "" if value == 0 else str(value)
    return _DISTRIBUTION_OF.get(str(value), "")


def parameter_manifest(wire: Wire) -> Manifest:
    space = wire.get("feasible_space", {})
    feasible = {key: space.get(key, "") for key in FEASIBLE_KEYS}
    feasible["list"] = list(space.get("list", []))
    feasible["distribution"] = distribution_manifest(space.get("distribution", 0))
    return compact(
        {
            "name": wire.get("name", ""),
            "parameterType": _PARAMETER_TYPE_OF.get(wire.get("parameter_type", "")),
            "feasibleSpace": compact(feasible),
        }
    )


def experiment_manifest(wire: Wire) -> Manifest:
    """The Experiment a service sees, as Kubernetes JSON (only the fields the message has)."""
    spec = wire.get("spec", {})
    parameters = spec.get("parameter_specs", {}).get("parameters", [])
    early = spec.get("early_stopping")
    kube_spec = {
        "parameters": [parameter_manifest(p) for p in parameters],
        "objective": objective_manifest(spec.get("objective", {})),
        "algorithm": algorithm_manifest(spec.get("algorithm", {})),
        "earlyStopping": algorithm_manifest(early) if early is not None else None,
        "parallelTrialCount": spec.get("parallel_trial_count", 0),
        "maxTrialCount": spec.get("max_trial_count", 0),
    }
    return {"metadata": {"name": wire.get("name", "")}, "spec": compact(kube_spec)}


def phase_name(condition: str) -> str:
    phase = PHASE_OF.get(condition)
    return "Unknown" if phase is None else phase.value


def trial_manifest(wire: Wire) -> Manifest:
    """A Trial as a service sees it: its phase's condition type in ``status.condition`` and
    each metric's one value in ``value`` (the message has no room for more)."""
    spec, status = wire.get("spec", {}), wire.get("status", {})
    kube_spec = {
        "objective": objective_manifest(spec.get("objective", {})),
        "parameterAssignments": _kube_pairs(
            spec.get("parameter_assignments", {}).get("assignments", [])
        ),
        "labels": dict(spec.get("labels", {})),
    }
    metrics = status.get("observation", {}).get("metrics", [])
    kube_status = {
        "startTime": status.get("start_time", ""),
        "completionTime": status.get("completion_time", ""),
        "condition": phase_name(status.get("condition", "CREATED")),
        "observation": compact({"metrics": _kube_pairs(metrics)}),
    }
    return {
        "metadata": {"name": wire.get("name", "")},
        "spec": compact(kube_spec),
        "status": compact(kube_status),
    }
