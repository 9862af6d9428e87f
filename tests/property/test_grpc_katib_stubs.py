"""Our descriptor of Katib's API against Katib's own generated code, in one process.

Katib's SDK ships the ``protoc`` output of Katib's ``api.proto`` (``katib_api_pb2``). Whatever
we send, its messages parse to the same fields, and whatever they send we read back unchanged:
the field numbers, types and enum names of ``adapters/grpc/api.py`` are Katib's. Loading both
also shows the private pool keeps our copy of ``api.proto`` from clashing with theirs. Skipped
where the SDK is not installed (``.ci/run``'s newest-client stage).
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.grpc.api import decode, encode
from katib_resume.adapters.grpc.codec import experiment_wire, trial_wire
from katib_resume.core.trial_phases import TrialPhase
from tests.property.test_grpc_codec import DISTRIBUTIONS, experiments, trials

katib_api: Any = pytest.importorskip("kubeflow.katib.katib_api_pb2")


def _as_dict(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _both_ways(name: str, wire: dict[str, Any]) -> None:
    ours = encode(name, wire)
    theirs = getattr(katib_api, name).FromString(ours)
    assert _as_dict(theirs) == decode(name, ours), "Katib's code reads what we send"
    assert decode(name, theirs.SerializeToString()) == decode(name, ours), "and we read it back"


@given(experiments)
def test_katibs_generated_experiment_agrees_with_ours(experiment: dict[str, Any]) -> None:
    _both_ways("Experiment", experiment_wire(experiment))


KATIB_ENUM = {  # Katib's CRD constants and the names of its generated enum, side by side
    "uniform": "UNIFORM",
    "logUniform": "LOG_UNIFORM",
    "normal": "NORMAL",
    "logNormal": "LOG_NORMAL",
}


@given(st.lists(st.one_of(st.sampled_from((*DISTRIBUTIONS, "unknown", "")), st.text()), min_size=1))
def test_katibs_generated_code_reads_each_parameters_distribution(spellings: list[str]) -> None:
    """What Katib's controller sends for a CRD spelling: its enum value, by the name Katib's
    own generated code gives it; unspecified (0) for any other spelling."""
    parameters = [
        {"name": f"p{i}", "parameterType": "double", "feasibleSpace": {"distribution": spelling}}
        for i, spelling in enumerate(spellings)
    ]
    experiment = {"metadata": {"name": "e"}, "spec": {"parameters": parameters}}
    theirs = katib_api.Experiment.FromString(encode("Experiment", experiment_wire(experiment)))
    got = [p.feasible_space.distribution for p in theirs.spec.parameter_specs.parameters]
    want = [
        katib_api.Distribution.Value(KATIB_ENUM[s]) if s in KATIB_ENUM else 0 for s in spellings
    ]
    assert got == want


def test_a_feasible_space_is_byte_for_byte_katibs() -> None:
    for name in ("DISTRIBUTION_UNSPECIFIED", "UNIFORM", "LOG_UNIFORM", "NORMAL", "LOG_NORMAL"):
        number = katib_api.Distribution.Value(name)
        theirs = katib_api.FeasibleSpace(max="1", min="0.01", step="0.1", distribution=number)
        ours = encode(
            "FeasibleSpace", {"max": "1", "min": "0.01", "step": "0.1", "distribution": name}
        )
        assert ours == theirs.SerializeToString(), name
        assert decode("FeasibleSpace", theirs.SerializeToString()) == _as_dict(theirs)


@given(trials())
def test_katibs_generated_trial_agrees_with_ours(
    case: tuple[dict[str, Any], TrialPhase, dict[str, Any]],
) -> None:
    trial, phase, _ = case
    _both_ways("Trial", trial_wire(trial, phase))


def test_a_suggestion_reply_written_by_katibs_code_decodes_to_its_fields() -> None:
    reply = katib_api.GetSuggestionsReply(
        parameter_assignments=[
            katib_api.GetSuggestionsReply.ParameterAssignments(
                assignments=[katib_api.ParameterAssignment(name="lr", value="0.02")],
                trial_name="t-1",
                labels={"team": "a"},
            )
        ],
        algorithm=katib_api.AlgorithmSpec(
            algorithm_name="random",
            algorithm_settings=[katib_api.AlgorithmSetting(name="seed", value="1")],
        ),
    )
    assert decode("GetSuggestionsReply", reply.SerializeToString()) == _as_dict(reply)
