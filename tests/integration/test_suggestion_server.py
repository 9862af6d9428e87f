"""``suggestion-server``: our algorithms as Katib's gRPC services, resumed from the volume.

Our own gRPC client (what the controller uses, Katib's words) talks to the server on localhost:
validation verdicts with Katib's messages, assignments re-served for a repeated request and
the same after a restart on the same volume, and gRPC health as the Deployment's probes ask.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.grpc import Endpoints, GrpcSuggestionService
from katib_resume.adapters.grpc.server import HEALTH
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, GRPC_HEALTH_SERVICE, LABEL_EXPERIMENT
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import Outcome
from tests.support.served import Served

NS, NAME = "kubeflow", "served"
X = {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "-5", "max": "10"}}
Y = {"name": "y", "parameterType": "int", "feasibleSpace": {"min": "0", "max": "15"}}
GRID_X = {"name": "x", "parameterType": "categorical", "feasibleSpace": {"list": ["a", "b"]}}
GRID_Y = {"name": "y", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}}
EPOCHS = {"name": "epochs", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "9"}}


def experiment(settings: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "objective": {"type": "minimize", "objectiveMetricName": "loss"},
            "algorithm": {"algorithmName": "tpe", "algorithmSettings": settings},
            "parallelTrialCount": 3,
            "maxTrialCount": 12,
            "parameters": [X, Y],
        },
    }


def suggestion(have: list[dict[str, Any]]) -> Suggestion:
    spec = {"algorithm": {"algorithmName": "tpe"}, "requests": len(have)}
    status = {"suggestions": have}
    return Suggestion.model_validate(
        {"metadata": {"name": NAME, "namespace": NS}, "spec": spec, "status": status}
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    serving = Served(tmp_path / "volume", experiment([{"name": "random_state", "value": "4"}]))
    yield serving
    serving.stop()


def test_settings_are_validated_with_katibs_message(served: Served) -> None:
    assert served.client.validate(suggestion([])).outcome is Outcome.VALID
    other = FakeCluster()
    other.create(experiment([{"name": "gamma", "value": "2"}]))
    client = GrpcSuggestionService(other, Endpoints(served.endpoint, served.endpoint))
    verdict = client.validate(suggestion([]))
    client.close()
    assert verdict.outcome is Outcome.INVALID
    assert (
        verdict.message == "ValidateAlgorithmSettings Error: gamma should be in the range of (0, 1)"
    )


def test_assignments_are_re_served_and_survive_a_restart(served: Served) -> None:
    first = served.client.get_suggestions(suggestion([]), 3).items
    assert len(first) == 3 and len({item["name"] for item in first}) == 3
    assert served.client.get_suggestions(suggestion([]), 3).items == first  # a lost reply
    more = served.client.get_suggestions(suggestion(list(first)), 2).items
    served.stop()
    served.start()  # a new pod on the same volume
    assert served.client.get_suggestions(suggestion(list(first)), 2).items == more
    assert (served.data_dir / NAME / "suggestion-state.json").exists()


def test_health_answers_for_the_suggestion_service_only(served: Served) -> None:
    with grpc.insecure_channel(served.endpoint) as channel:
        check: grpc.UnaryUnaryMultiCallable[Message, Message] = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=HEALTH["HealthCheckResponse"].FromString,
        )
        reply = check(HEALTH["HealthCheckRequest"](service=GRPC_HEALTH_SERVICE), timeout=5)
        assert json_format.MessageToDict(reply) == {"status": "SERVING"}
        with pytest.raises(grpc.RpcError) as refused:
            check(HEALTH["HealthCheckRequest"](service="other"), timeout=5)
        assert refused.value.code() is grpc.StatusCode.NOT_FOUND


def client_for(served: Served, spec: dict[str, Any]) -> GrpcSuggestionService:
    """A controller's client for an Experiment named ``NAME`` with ``spec`` instead."""
    manifest = experiment([])
    manifest["spec"] = {**manifest["spec"], **spec}
    served.cluster = FakeCluster()
    served.cluster.create(manifest)
    return GrpcSuggestionService(served.cluster, Endpoints(served.endpoint, served.endpoint))


def succeeded(name: str, item: dict[str, Any], accuracy: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Trial",
        "metadata": {"name": name, "namespace": NS, "labels": {LABEL_EXPERIMENT: NAME}},
        "spec": {"parameterAssignments": item["parameterAssignments"]},
        "status": {
            "conditions": [
                {"type": "Created", "status": "True"},
                {"type": "Succeeded", "status": "True"},
            ],
            "startTime": "2026-11-29T10:00:00Z",
            "completionTime": "2026-11-29T10:05:00Z",
            "observation": {
                "metrics": [{"name": "accuracy", "min": "0", "max": accuracy, "latest": accuracy}]
            },
        },
    }


def put(cluster: FakeCluster, manifest: dict[str, Any]) -> None:
    """Create ``manifest``, then write its status (a subresource)."""
    created = cluster.create({k: v for k, v in manifest.items() if k != "status"})
    ref = ObjectRef(API_VERSION, manifest["kind"], NS, created["metadata"]["name"])
    cluster.update_status(ref, manifest["status"], created["metadata"].get("resourceVersion"))


def test_an_exhausted_grid_says_so_over_grpc(served: Served) -> None:
    """The last cell comes alone, then none, each time with the search's "no more", which
    completes the Experiment as in process (``tests/integration/test_exhausted_search.py``)."""
    grid = {"algorithm": {"algorithmName": "grid"}, "parameters": [GRID_X, GRID_Y]}
    client = client_for(served, grid)
    first = client.get_suggestions(suggestion([]), 3)
    assert len(first.items) == 3 and first.exhausted == ""
    last = client.get_suggestions(suggestion(list(first.items)), 3)
    assert len(last.items) == 1
    assert (
        last.exhausted
        == "the search is exhausted: it has issued every assignment it has (4 assignments)"
    )
    cells = {tuple(p["value"] for p in i["parameterAssignments"]) for i in first.items + last.items}
    assert len(cells) == 4
    after = client.get_suggestions(suggestion([*first.items, *last.items]), 3)
    assert after.items == () and after.exhausted == last.exhausted
    client.close()


def test_a_hyperband_rung_smaller_than_the_request_is_taken_over_grpc(served: Served) -> None:
    """Katib's controller refuses the 3 of the second rung when it asks for 9 (#1168)."""
    settings = [
        {"name": "r_l", "value": "9"},
        {"name": "eta", "value": "3"},
        {"name": "resource_name", "value": "epochs"},
    ]
    spec = {
        "objective": {"type": "maximize", "objectiveMetricName": "accuracy"},
        "algorithm": {"algorithmName": "hyperband", "algorithmSettings": settings},
        "parallelTrialCount": 9,
        "maxTrialCount": 40,
        "parameters": [EPOCHS, X],
    }
    client = client_for(served, spec)
    rung = client.get_suggestions(suggestion([]), 9).items
    assert len(rung) == 9
    waiting = client.get_suggestions(suggestion(list(rung)), 9)
    assert waiting.items == () and waiting.exhausted == ""  # the rung has no results yet
    for i, item in enumerate(rung):
        put(served.cluster, succeeded(item["name"], item, f"0.{i}"))
    second = client.get_suggestions(suggestion(list(rung)), 9)
    assert len(second.items) == 3 and second.exhausted == ""
    epochs = {
        p["value"] for i in second.items for p in i["parameterAssignments"] if p["name"] == "epochs"
    }
    assert epochs == {"3"}
    client.close()


def test_positions_the_controller_holds_are_never_issued_again_after_a_lost_state(
    served: Served,
) -> None:
    """Katib's request carries the Trials, not the Suggestion's list: a service whose volume
    was lost before any Trial ran knows none of the 3 cells the controller holds, and must not
    send one of them again as the fourth."""
    grid = {"algorithm": {"algorithmName": "grid"}, "parameters": [GRID_X, GRID_Y]}
    client = client_for(served, grid)
    first = client.get_suggestions(suggestion([]), 3).items
    client.close()
    served.stop()
    for saved in served.data_dir.rglob("*"):
        if saved.is_file():
            saved.unlink()  # the volume's state is gone
    served.start()
    client = client_for(served, grid)
    fourth = client.get_suggestions(suggestion(list(first)), 1).items
    client.close()
    cells = [tuple(p["value"] for p in i["parameterAssignments"]) for i in (*first, *fourth)]
    assert len(fourth) == 1 and len(set(cells)) == 4
    assert fourth[0]["name"] not in {item["name"] for item in first}
