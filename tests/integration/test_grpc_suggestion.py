"""``GrpcSuggestionService`` against Katib's API served over real gRPC on localhost.

The server (``tests.support.katib_grpc``) decodes what the client sends, so the tests assert on
the request Katib's controller would send, field by field, and on what the port returns for
each answer: assignments with the service's or generated names, validation verdicts for OK,
INVALID_ARGUMENT, UNKNOWN and UNIMPLEMENTED, and ``Unavailable`` for a server that is down, a
deadline and a reply with the wrong number of assignments.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.grpc import Endpoints, GrpcSuggestionService
from katib_resume.adapters.grpc.api import Wire
from katib_resume.adapters.grpc.channels import Channels
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.model import Suggestion
from katib_resume.core.observed import VALID, Outcome, Validation
from katib_resume.core.ports import Unavailable
from tests.support.katib_grpc import Abort, Behaviour, KatibServer, LocalAlgorithm

NS, NAME = "kubeflow", "from-volume-resume"
LR = {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.05"}}
OPTIMIZER = {
    "name": "optimizer",
    "parameterType": "categorical",
    "feasibleSpace": {"list": ["sgd", "adam"]},
}
OBJECTIVE = {
    "type": "minimize",
    "goal": 0.001,
    "objectiveMetricName": "loss",
    "additionalMetricNames": ["accuracy"],
    "metricStrategies": [{"name": "loss", "value": "min"}, {"name": "accuracy", "value": "latest"}],
}
GENERATED = re.compile(rf"{NAME}-[bcdfghjklmnpqrstvwxz2456789]{{8}}")


def experiment(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "objective": OBJECTIVE,
            "algorithm": {
                "algorithmName": "random",
                "algorithmSettings": [{"name": "random_state", "value": "10"}],
            },
            "parallelTrialCount": 3,
            "maxTrialCount": 12,
            "maxFailedTrialCount": 3,
            "resumePolicy": "FromVolume",
            "parameters": [LR, OPTIMIZER],
            **spec,
        },
    }


def trial(name: str, phase: str | None, lr: str, loss: str | None = None) -> dict[str, Any]:
    conditions = [{"type": "Created", "status": "True"}]
    if phase is not None:
        conditions.append({"type": phase, "status": "True"})
    status: dict[str, Any] = {"conditions": conditions, "startTime": "2026-11-29T10:00:00Z"}
    if loss is not None:
        status["completionTime"] = "2026-11-29T10:05:00Z"
        status["observation"] = {
            "metrics": [
                {"name": "loss", "min": loss, "max": "9", "latest": "5"},
                {"name": "accuracy", "min": "0.1", "max": "0.9", "latest": "0.8"},
            ]
        }
    return {
        "apiVersion": API_VERSION,
        "kind": "Trial",
        "metadata": {"name": name, "namespace": NS, "labels": {LABEL_EXPERIMENT: NAME}},
        "spec": {
            "objective": OBJECTIVE,
            "parameterAssignments": [
                {"name": "lr", "value": lr},
                {"name": "optimizer", "value": "sgd"},
            ],
            "labels": {"team": "a"},
        },
        "status": status,
    }


def suggestion(
    have: int = 0, early_stopping: dict[str, Any] | None = None, settings: Any = ()
) -> Suggestion:
    spec: dict[str, Any] = {"algorithm": {"algorithmName": "random"}, "requests": have}
    if early_stopping is not None:
        spec["earlyStopping"] = early_stopping
    recorded = [{"name": f"{NAME}-{i}", "parameterAssignments": []} for i in range(have)]
    status = {"suggestions": recorded, "algorithmSettings": list(settings)}
    return Suggestion.model_validate(
        {"metadata": {"name": NAME, "namespace": NS}, "spec": spec, "status": status}
    )


def put(cluster: FakeCluster, manifest: dict[str, Any]) -> None:
    created = cluster.create({k: v for k, v in manifest.items() if k != "status"})
    if "status" in manifest:
        meta = created["metadata"]
        ref = ObjectRef(manifest["apiVersion"], manifest["kind"], NS, meta["name"])
        cluster.update_status(ref, manifest["status"], meta.get("resourceVersion"))


@pytest.fixture
def cluster() -> FakeCluster:
    world = FakeCluster()
    put(world, experiment())
    return world


class Serving:
    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.servers: list[KatibServer] = []
        self.clients: list[GrpcSuggestionService] = []

    def __call__(
        self, behaviour: Behaviour, timeout: float = 5.0
    ) -> tuple[KatibServer, GrpcSuggestionService]:
        server = KatibServer(behaviour)
        self.servers.append(server)
        return server, self.client(server.endpoint, timeout)

    def client(self, endpoint: str, timeout: float = 5.0) -> GrpcSuggestionService:
        client = GrpcSuggestionService(self.cluster, Endpoints(endpoint, endpoint), timeout=timeout)
        self.clients.append(client)
        return client


@pytest.fixture
def serve(cluster: FakeCluster) -> Iterator[Serving]:
    serving = Serving(cluster)
    yield serving
    for client in serving.clients:
        client.close()
    for server in serving.servers:
        server.stop()


def scripted(*items: Wire) -> Behaviour:
    return Behaviour(get_suggestions=lambda _: {"parameter_assignments": list(items)})


def pair(name: str, value: str) -> Wire:
    return {"name": name, "value": value}


# GetSuggestions: the request


def test_the_request_carries_the_experiment_its_completed_trials_and_the_counts(
    cluster: FakeCluster, serve: Serving
) -> None:
    put(cluster, trial("t-succeeded", "Succeeded", "0.01", loss="0.3"))
    put(cluster, trial("t-running", "Running", "0.02"))
    put(cluster, trial("t-pending", None, "0.03"))
    put(cluster, trial("t-no-metrics", "MetricsUnavailable", "0.04"))
    answer = {"assignments": [pair("lr", "0.02")]}
    server, client = serve(scripted(answer, answer))
    settings = [{"name": "random_state", "value": "11"}, {"name": "extra", "value": "x"}]

    client.get_suggestions(suggestion(have=3, settings=settings), 2)

    [request] = server.requests_of("GetSuggestions")
    objective = {
        "type": "MINIMIZE",
        "goal": 0.001,
        "objective_metric_name": "loss",
        "additional_metric_names": ["accuracy"],
    }
    spec = {
        "objective": objective,
        "parameter_assignments": {"assignments": [pair("lr", "0.01"), pair("optimizer", "sgd")]},
        "labels": {"team": "a"},
    }
    assert request == {
        "experiment": {
            "name": NAME,
            "spec": {
                "parameter_specs": {
                    "parameters": [
                        {
                            "name": "lr",
                            "parameter_type": "DOUBLE",
                            "feasible_space": {"min": "0.01", "max": "0.05"},
                        },
                        {
                            "name": "optimizer",
                            "parameter_type": "CATEGORICAL",
                            "feasible_space": {"list": ["sgd", "adam"]},
                        },
                    ]
                },
                "objective": objective,
                # the Suggestion's recorded settings override the spec's and add to them
                "algorithm": {
                    "algorithm_name": "random",
                    "algorithm_settings": [pair("random_state", "11"), pair("extra", "x")],
                },
                "parallel_trial_count": 3,
                "max_trial_count": 12,
            },
        },
        # in the order the cluster lists them
        "trials": [
            {
                "name": "t-no-metrics",
                "spec": {
                    **spec,
                    "parameter_assignments": {
                        "assignments": [pair("lr", "0.04"), pair("optimizer", "sgd")]
                    },
                },
                "status": {"start_time": "2026-11-29T10:00:00Z", "condition": "METRICSUNAVAILABLE"},
            },
            {
                "name": "t-succeeded",
                "spec": spec,
                "status": {
                    "start_time": "2026-11-29T10:00:00Z",
                    "completion_time": "2026-11-29T10:05:00Z",
                    "condition": "SUCCEEDED",
                    # each metric's value by its strategy: loss by min, accuracy by latest
                    "observation": {"metrics": [pair("loss", "0.3"), pair("accuracy", "0.8")]},
                },
            },
        ],
        "current_request_number": 2,
        "total_request_number": 5,
    }


def test_early_stopping_is_part_of_the_experiment_sent(
    cluster: FakeCluster, serve: Serving
) -> None:
    early = {
        "algorithmName": "medianstop",
        "algorithmSettings": [{"name": "min_trials_required", "value": "3"}],
    }
    cluster.update_spec(
        ObjectRef(API_VERSION, "Experiment", NS, NAME),
        {**experiment()["spec"], "earlyStopping": early},
        None,
    )
    server, client = serve(scripted({"assignments": []}))
    client.get_suggestions(suggestion(), 1)
    [request] = server.requests_of("GetSuggestions")
    assert request["experiment"]["spec"]["early_stopping"] == {
        "algorithm_name": "medianstop",
        "algorithm_settings": [pair("min_trials_required", "3")],
    }


# GetSuggestions: the reply


def test_assignments_keep_the_services_names_and_labels(serve: Serving) -> None:
    _, client = serve(
        scripted(
            {"trial_name": "named-1", "assignments": [pair("lr", "0.03")], "labels": {"k": "v"}},
            {
                "trial_name": "named-2",
                "assignments": [pair("lr", "0.04"), pair("optimizer", "adam")],
            },
        )
    )
    assert list(client.get_suggestions(suggestion(), 2).items) == [
        {"name": "named-1", "parameterAssignments": [pair("lr", "0.03")], "labels": {"k": "v"}},
        {
            "name": "named-2",
            "parameterAssignments": [pair("lr", "0.04"), pair("optimizer", "adam")],
        },
    ]


def test_the_settings_returned_with_the_assignments_come_back_too(serve: Serving) -> None:
    reply = {
        "parameter_assignments": [{"assignments": [pair("lr", "0.01")]}],
        "algorithm": {"algorithm_name": "random", "algorithm_settings": [pair("state", "3")]},
    }
    _, client = serve(Behaviour(get_suggestions=lambda _: reply))
    answer = client.get_suggestions(suggestion(), 1)
    assert answer.algorithm_settings == ({"name": "state", "value": "3"},)
    assert len(answer.items) == 1


def test_unnamed_assignments_get_katibs_generated_names(serve: Serving) -> None:
    _, client = serve(scripted(*[{"assignments": [pair("lr", "0.01")]}] * 20))
    names = [item["name"] for item in client.get_suggestions(suggestion(), 20).items]
    assert all(GENERATED.fullmatch(name) for name in names), names
    assert len(set(names)) == 20


def test_a_reply_with_more_than_asked_is_unavailable_with_katibs_words(serve: Serving) -> None:
    _, client = serve(scripted(*[{"assignments": [pair("lr", "0.01")]}] * 2))
    with pytest.raises(Unavailable, match="The response contains unexpected trials"):
        client.get_suggestions(suggestion(), 1)


def test_a_reply_with_fewer_than_asked_is_recorded_not_refused(serve: Serving) -> None:
    """Katib's controller refuses it and asks again for ever (its hyperband stalls, #1168);
    a service of Katib's never says its search is exhausted."""
    _, client = serve(scripted({"trial_name": "t-1", "assignments": [pair("lr", "0.01")]}))
    answer = client.get_suggestions(suggestion(), 2)
    assert [item["name"] for item in answer.items] == ["t-1"]
    assert answer.exhausted == ""


def test_the_local_random_algorithm_answers_over_grpc(serve: Serving) -> None:
    server, client = serve(LocalAlgorithm().behaviour())
    first = client.get_suggestions(suggestion(), 3).items
    assert len(first) == 3
    for item in first:
        assert item["name"].startswith(f"{NAME}-")
        values = {p["name"]: p["value"] for p in item["parameterAssignments"]}
        assert 0.01 <= float(values["lr"]) <= 0.05
        assert values["optimizer"] in {"sgd", "adam"}
    # asked again for the same positions (a lost status write), the service re-serves them
    assert client.get_suggestions(suggestion(), 3).items == first
    assert len(server.requests_of("GetSuggestions")) == 2


def test_a_failed_call_is_unavailable(serve: Serving) -> None:
    def broken(_: Wire) -> Wire:
        raise Abort(grpc.StatusCode.INTERNAL, "the algorithm crashed")

    _, client = serve(Behaviour(get_suggestions=broken))
    with pytest.raises(Unavailable, match=r"GetSuggestions at .*: INTERNAL: the algorithm crashed"):
        client.get_suggestions(suggestion(), 1)


def test_no_experiment_is_unavailable(cluster: FakeCluster, serve: Serving) -> None:
    [raw] = cluster.list(API_VERSION, "Experiment", NS, {})
    cluster.delete(ObjectRef(API_VERSION, "Experiment", NS, NAME), raw["metadata"]["uid"])
    _, client = serve(LocalAlgorithm().behaviour())
    with pytest.raises(Unavailable, match=f"Experiment {NS}/{NAME} not found"):
        client.get_suggestions(suggestion(), 1)
    assert client.validate(suggestion()).outcome is Outcome.UNAVAILABLE


# ValidateAlgorithmSettings / ValidateEarlyStoppingSettings


def test_valid_settings_are_valid(serve: Serving) -> None:
    server, client = serve(LocalAlgorithm().behaviour())
    assert client.validate(suggestion()) == VALID
    [request] = server.requests_of("ValidateAlgorithmSettings")
    assert request["experiment"]["name"] == NAME
    assert request["experiment"]["spec"]["algorithm"]["algorithm_name"] == "random"


def test_invalid_settings_get_katibs_message(cluster: FakeCluster, serve: Serving) -> None:
    algorithm = {"algorithmName": "random", "algorithmSettings": [{"name": "bogus", "value": "1"}]}
    cluster.update_spec(
        ObjectRef(API_VERSION, "Experiment", NS, NAME),
        {**experiment()["spec"], "algorithm": algorithm},
        None,
    )
    _, client = serve(LocalAlgorithm().behaviour())
    verdict = client.validate(suggestion())
    assert verdict.outcome is Outcome.INVALID
    assert verdict.message.startswith("ValidateAlgorithmSettings Error: ")
    assert "bogus" in verdict.message


@pytest.mark.parametrize("code", [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNKNOWN])
def test_invalid_argument_and_unknown_are_invalid(serve: Serving, code: grpc.StatusCode) -> None:
    def refuse(_: Wire) -> Wire:
        raise Abort(code, "max must be greater than min")

    _, client = serve(Behaviour(validate_algorithm_settings=refuse))
    assert client.validate(suggestion()) == Validation(
        Outcome.INVALID, "ValidateAlgorithmSettings Error: max must be greater than min"
    )


def test_unimplemented_validation_counts_as_valid(serve: Serving) -> None:
    _, client = serve(Behaviour())
    assert client.validate(suggestion()) == VALID


def test_a_server_that_is_down_is_unavailable_at_once(serve: Serving) -> None:
    server, _ = serve(Behaviour())
    server.stop()
    client = serve.client(server.endpoint)
    started = time.monotonic()
    verdict = client.validate(suggestion())
    assert verdict.outcome is Outcome.UNAVAILABLE
    assert "UNAVAILABLE" in verdict.message
    with pytest.raises(Unavailable):
        client.get_suggestions(suggestion(), 1)
    assert time.monotonic() - started < 2.0


def test_a_slow_server_hits_the_deadline(serve: Serving) -> None:
    _, client = serve(Behaviour(lambda _: {}, lambda _: {}, delay=1.0), timeout=0.2)
    verdict = client.validate(suggestion())
    assert verdict.outcome is Outcome.UNAVAILABLE
    assert "DEADLINE_EXCEEDED" in verdict.message
    with pytest.raises(Unavailable, match="DEADLINE_EXCEEDED"):
        client.get_suggestions(suggestion(), 1)


def test_calls_are_counted_by_method_and_code(serve: Serving) -> None:
    _, client = serve(scripted({"assignments": [pair("lr", "0.01")]}))
    client.validate(suggestion())
    client.get_suggestions(suggestion(), 1)
    with pytest.raises(Unavailable):
        client.get_suggestions(suggestion(), 0)  # answered OK, with more than asked for
    assert client.calls() == {
        ("ValidateAlgorithmSettings", "UNIMPLEMENTED"): 1,
        ("GetSuggestions", "OK"): 2,
    }


def test_early_stopping_settings_are_validated_after_the_algorithm(serve: Serving) -> None:
    def refuse(request: Wire) -> Wire:
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT, "min_trials_required must be positive")

    early = {
        "algorithmName": "medianstop",
        "algorithmSettings": [{"name": "min_trials_required", "value": "0"}],
    }
    server, client = serve(Behaviour(None, lambda _: {}, refuse))
    assert client.validate(suggestion(early_stopping=early)) == Validation(
        Outcome.INVALID, "ValidateEarlyStoppingSettings Error: min_trials_required must be positive"
    )
    assert server.requests_of("ValidateEarlyStoppingSettings") == [
        {
            "early_stopping": {
                "algorithm_name": "medianstop",
                "algorithm_settings": [pair("min_trials_required", "0")],
            }
        }
    ]
    # without early stopping, that service is not asked
    client.validate(suggestion())
    assert len(server.requests_of("ValidateEarlyStoppingSettings")) == 1


# Endpoints and channels


def test_the_default_endpoint_is_katibs_service_address() -> None:
    endpoints = Endpoints()
    assert endpoints.algorithm_of(suggestion()) == f"{NAME}-random.{NS}:6789"
    assert endpoints.early_stopping_of(suggestion()) == f"{NAME}-random.{NS}:6788"
    custom = Endpoints("127.0.0.1:7000", "{name}/{algorithm}/{namespace}")
    assert custom.algorithm_of(suggestion()) == "127.0.0.1:7000"
    assert custom.early_stopping_of(suggestion()) == f"{NAME}/random/{NS}"


@pytest.mark.parametrize(
    ("template", "error"),
    [
        ("{svc}.{namespace}:6789", "unknown placeholder {svc}"),
        ("{service", "invalid endpoint template"),
        ("  ", "empty"),
    ],
)
def test_a_bad_template_is_refused(template: str, error: str) -> None:
    with pytest.raises(ValueError, match=re.escape(error)):
        Endpoints(template)


def test_one_channel_per_endpoint_closed_when_idle(serve: Serving) -> None:
    server, _ = serve(Behaviour())
    now = [0.0]
    channels = Channels(idle_seconds=60, clock=lambda: now[0])
    client = GrpcSuggestionService(serve.cluster, Endpoints(server.endpoint), channels=channels)
    client.validate(suggestion())
    first = channels.get(server.endpoint)
    client.validate(suggestion())
    assert channels.get(server.endpoint) is first
    now[0] = 100.0
    channels.get("127.0.0.1:1")  # the other endpoint's idle channel is closed
    assert channels.endpoints() == ["127.0.0.1:1"]
    client.validate(suggestion())  # and opened again when needed
    assert channels.endpoints() == ["127.0.0.1:1", server.endpoint]
    client.close()
    assert channels.endpoints() == []


def test_with_early_stopping_each_assignment_carries_the_services_rules(serve: Serving) -> None:
    rules = {
        "early_stopping_rules": [
            {"name": "loss", "value": "0.5", "comparison": "GREATER", "start_step": 4},
            {"name": "accuracy", "value": "0.1", "comparison": "LESS"},
        ]
    }
    behaviour = Behaviour(
        get_suggestions=lambda _: {
            "parameter_assignments": [{"assignments": [pair("lr", "0.01")]}]
        },
        get_early_stopping_rules=lambda _: rules,
    )
    server, client = serve(behaviour)
    early = {"algorithmName": "medianstop"}
    [item] = client.get_suggestions(suggestion(early_stopping=early), 1).items
    assert item["earlyStoppingRules"] == [
        {"name": "loss", "value": "0.5", "comparison": "greater", "startStep": 4},
        {"name": "accuracy", "value": "0.1", "comparison": "less"},
    ]
    [asked] = server.requests_of("GetEarlyStoppingRules")
    assert asked["db_manager_address"] == "katib-db-manager.kubeflow:6789"
    assert asked["experiment"]["name"] == NAME
    # without early stopping, that service is not asked and no rules are attached
    [plain] = client.get_suggestions(suggestion(), 1).items
    assert "earlyStoppingRules" not in plain
    assert len(server.requests_of("GetEarlyStoppingRules")) == 1


def test_rules_that_cannot_be_had_leave_the_assignments_for_later(serve: Serving) -> None:
    behaviour = Behaviour(
        get_suggestions=lambda _: {"parameter_assignments": [{"assignments": [pair("lr", "0.01")]}]}
    )  # GetEarlyStoppingRules: UNIMPLEMENTED
    _, client = serve(behaviour)
    with pytest.raises(Unavailable, match="GetEarlyStoppingRules"):
        client.get_suggestions(suggestion(early_stopping={"algorithmName": "medianstop"}), 1)
