"""Round trips through Katib's wire format: Experiments and Trials survive encode -> bytes ->
decode with every field the message has room for.

Manifests are generated in canonical form (no empty strings, lists or maps, no zero goal or
count: proto3 cannot tell those from absent), so for an Experiment the round trip is the
identity; a Trial comes back with its phase as ``status.condition`` and each metric reduced to
the value its strategy picks, which is all the message carries.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.grpc.api import decode, encode
from katib_resume.adapters.grpc.codec import (
    experiment_manifest,
    experiment_wire,
    trial_manifest,
    trial_wire,
)
from katib_resume.core.trial_phases import TrialPhase

text = st.text(min_size=1, max_size=12)
names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)
counts = st.integers(1, 2**31 - 1)
goals = st.floats(allow_nan=False, allow_infinity=False).filter(lambda goal: goal != 0)
pairs = st.lists(
    st.fixed_dictionaries({"name": names, "value": text}), unique_by=lambda p: p["name"]
)


DISTRIBUTIONS = ("uniform", "logUniform", "normal", "logNormal")
"""The CRD's spellings of Katib's ``Distribution`` enum (each survives the wire)."""


def _drop_empty(value: dict[str, Any]) -> dict[str, Any]:
    return {key: item for key, item in value.items() if item not in ({}, [])}


parameters = st.fixed_dictionaries(
    {
        "name": names,
        "parameterType": st.sampled_from(["double", "int", "discrete", "categorical"]),
        "feasibleSpace": st.fixed_dictionaries(
            {},
            optional={
                "min": text,
                "max": text,
                "step": text,
                "list": st.lists(text, min_size=1),
                "distribution": st.sampled_from(DISTRIBUTIONS),
            },
        ),
    }
).map(_drop_empty)
objectives = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["minimize", "maximize"]),
        "goal": goals,
        "objectiveMetricName": names,
        "additionalMetricNames": st.lists(names, min_size=1),
    },
)
algorithms = st.fixed_dictionaries({"algorithmName": names, "algorithmSettings": pairs}).map(
    _drop_empty
)
experiments = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({"name": names}),
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "parameters": st.lists(parameters, min_size=1),
                "objective": objectives.filter(bool),
                "algorithm": algorithms,
                "earlyStopping": algorithms,
                "parallelTrialCount": counts,
                "maxTrialCount": counts,
            },
        ),
    }
)


@given(experiments)
def test_an_experiment_survives_the_wire(experiment: dict[str, Any]) -> None:
    data = encode("Experiment", experiment_wire(experiment))
    assert experiment_manifest(decode("Experiment", data)) == experiment


metric_names = st.lists(names, min_size=1, max_size=4, unique=True)
STRATEGIES = ("min", "max", "latest")


@st.composite
def trials(draw: st.DrawFn) -> tuple[dict[str, Any], TrialPhase, dict[str, Any]]:
    """A Trial, its phase, and what a service must see of it."""
    phase = draw(st.sampled_from(list(TrialPhase)))
    conditions = [{"type": "Created", "status": "True"}]
    if phase is not TrialPhase.PENDING:
        conditions.append({"type": phase.value, "status": "True"})
    objective = draw(objectives)
    metrics = draw(st.lists(names, max_size=4, unique=True))
    strategy = {name: draw(st.sampled_from(STRATEGIES)) for name in metrics}
    observed = [{"name": m, **{s: draw(text) for s in STRATEGIES}} for m in metrics]
    times = draw(st.fixed_dictionaries({}, optional={"startTime": text, "completionTime": text}))
    spec = _drop_empty(
        {
            "objective": objective,
            "parameterAssignments": draw(
                st.lists(st.fixed_dictionaries({"name": names, "value": text}))
            ),
            "labels": draw(st.dictionaries(names, text)),
        }
    )
    strategies = [{"name": m, "value": s} for m, s in strategy.items()]
    trial = {
        "metadata": {"name": draw(names)},
        "spec": {**spec, "objective": {**objective, "metricStrategies": strategies}},
        "status": {**times, "conditions": conditions, "observation": {"metrics": observed}},
    }
    seen = [{"name": m["name"], "value": m[strategy[m["name"]]]} for m in observed]
    status: dict[str, Any] = {**times, "condition": phase.value, "observation": {"metrics": seen}}
    expected = {
        "metadata": trial["metadata"],
        "spec": spec,
        "status": _drop_empty({**status, "observation": _drop_empty(status["observation"])}),
    }
    return trial, phase, expected


@given(trials())
def test_a_trial_survives_the_wire(case: tuple[dict[str, Any], TrialPhase, dict[str, Any]]) -> None:
    trial, phase, expected = case
    data = encode("Trial", trial_wire(trial, phase))
    assert trial_manifest(decode("Trial", data)) == expected
