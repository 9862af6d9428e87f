"""A parameter's ``distribution`` over gRPC: sent by our controller, read by our server.

Katib's ``FeasibleSpace`` carries it as field 5, an enum; without it a service sampled every
parameter uniformly and never refused what it cannot sample. Here our controller's client asks
our ``suggestion-server`` on localhost, so both directions are in play: a ``logUniform`` rate
under ``random`` comes back spread a quarter per decade over its four decades, exactly the
values the embedded runtime issues for the same Experiment, and the refusals of the embedded
path (``grid`` on a log scale, ``normal`` under ``tpe``, a log scale with ``min`` 0) reach the
controller as ``INVALID_ARGUMENT`` with the same message. Katib's own generated code, playing
Katib's controller, gets the same verdicts, and a distribution number this API does not have is
refused the same way without harming the server.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.core.katib import API_VERSION
from katib_resume.core.model import Experiment, Suggestion
from katib_resume.core.observed import Outcome
from tests.support.served import Served

NS, NAME = "kubeflow", "distributions"
LOW, HIGH = "0.0001", "1"
DRAWS = 400
GRID_MESSAGE = (
    "parameter 'lr': distribution 'logUniform' is not supported by grid, whose values step"
    " uniformly from min to max (random samples logUniform)"
)


def rate(distribution: str, low: str = LOW, **space: str) -> dict[str, Any]:
    feasible = {"min": low, "max": HIGH, "distribution": distribution, **space}
    return {"name": "lr", "parameterType": "double", "feasibleSpace": feasible}


def experiment(algorithm: str, *parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {
            "objective": {"type": "minimize", "objectiveMetricName": "loss"},
            "algorithm": {"algorithmName": algorithm},
            "parallelTrialCount": 3,
            "maxTrialCount": DRAWS,
            "parameters": list(parameters),
        },
    }


def suggestion(algorithm: str) -> Suggestion:
    return Suggestion.model_validate(
        {
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {"algorithm": {"algorithmName": algorithm}, "requests": 0},
        }
    )


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], Served]]:
    started: list[Served] = []

    def start(manifest: dict[str, Any]) -> Served:
        started.append(Served(tmp_path / f"volume-{len(started)}", manifest))
        return started[-1]

    yield start
    for served in started:
        served.stop()


def test_a_log_uniform_rate_under_random_is_drawn_a_quarter_per_decade(
    serve: Callable[[dict[str, Any]], Served],
) -> None:
    manifest = experiment("random", rate("logUniform"))
    served = serve(manifest)
    items = served.client.get_suggestions(suggestion("random"), DRAWS).items
    values = [float(item["parameterAssignments"][0]["value"]) for item in items]
    assert len(values) == DRAWS and all(1e-4 <= v <= 1 for v in values)
    decades = Counter(min(3, math.floor(math.log10(v / 1e-4))) for v in values)
    # a quarter each (100, binomial sd 8.7); a uniform law would put 90 % in the top decade
    assert sorted(decades) == [0, 1, 2, 3]
    assert all(70 <= decades[d] <= 130 for d in range(4)), decades
    # the server read the space as the embedded runtime reads the Experiment
    local = SuggestionServer(Experiment.model_validate(manifest), 0, None)
    local.start([])
    embedded = [item["parameterAssignments"] for item in local.get_suggestions([], DRAWS)]
    assert [item["parameterAssignments"] for item in items] == embedded


REFUSED = [
    ("grid", rate("logUniform", low="0.1", step="0.1"), GRID_MESSAGE),
    (
        "tpe",
        rate("normal"),
        "Unsupported distribution NORMAL for parameter lr. The Optuna suggestion service"
        " supports only UNIFORM and LOG_UNIFORM for double parameters.",
    ),
    ("random", rate("logUniform", low="0"), "a logUniform distribution needs min > 0, got 0"),
]


@pytest.mark.parametrize(("algorithm", "parameter", "message"), REFUSED)
def test_what_the_embedded_path_refuses_is_refused_over_grpc(
    serve: Callable[[dict[str, Any]], Served],
    algorithm: str,
    parameter: dict[str, Any],
    message: str,
) -> None:
    manifest = experiment(algorithm, parameter)
    embedded = SuggestionServer(Experiment.model_validate(manifest), 0, None).validate()
    assert embedded.outcome is Outcome.INVALID and message in embedded.message
    verdict = serve(manifest).client.validate(suggestion(algorithm))
    assert verdict.outcome is Outcome.INVALID
    assert verdict.message == f"ValidateAlgorithmSettings Error: {embedded.message}"


def test_the_same_parameter_uniform_is_valid_for_grid(
    serve: Callable[[dict[str, Any]], Served],
) -> None:
    """The refusal above is the distribution's, not the grid's."""
    served = serve(experiment("grid", rate("uniform", low="0.1", step="0.1")))
    assert served.client.validate(suggestion("grid")).outcome is Outcome.VALID


# -- Katib's controller, played by Katib's generated code -----------------------------------------


def katib_validate(served: Served, katib_api: Any, message: Any) -> grpc.RpcError | None:
    """``ValidateAlgorithmSettings`` as Katib's controller calls it: the status, if refused."""
    with grpc.insecure_channel(served.endpoint) as channel:
        call: grpc.UnaryUnaryMultiCallable[Any, Any] = channel.unary_unary(
            "/api.v1.beta1.Suggestion/ValidateAlgorithmSettings",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=katib_api.ValidateAlgorithmSettingsReply.FromString,
        )
        try:
            call(katib_api.ValidateAlgorithmSettingsRequest(experiment=message), timeout=10)
        except grpc.RpcError as error:
            return error
    return None


def katib_experiment(katib_api: Any, algorithm: str, distribution: int, low: str) -> Any:
    space = katib_api.FeasibleSpace(min=low, max=HIGH, step="0.1", distribution=distribution)
    parameter = katib_api.ParameterSpec(
        name="lr", parameter_type=katib_api.DOUBLE, feasible_space=space
    )
    return katib_api.Experiment(
        name=NAME,
        spec=katib_api.ExperimentSpec(
            parameter_specs=katib_api.ExperimentSpec.ParameterSpecs(parameters=[parameter]),
            objective=katib_api.ObjectiveSpec(
                type=katib_api.MINIMIZE, objective_metric_name="loss"
            ),
            algorithm=katib_api.AlgorithmSpec(algorithm_name=algorithm),
        ),
    )


def test_katibs_controller_gets_the_grid_refusal_as_invalid_argument(
    serve: Callable[[dict[str, Any]], Served],
) -> None:
    katib_api: Any = pytest.importorskip("kubeflow.katib.katib_api_pb2")
    served = serve(experiment("grid", rate("uniform")))
    refused = katib_validate(
        served, katib_api, katib_experiment(katib_api, "grid", katib_api.LOG_UNIFORM, "0.1")
    )
    assert refused is not None
    assert refused.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert refused.details() == GRID_MESSAGE
    uniform = katib_experiment(katib_api, "grid", katib_api.UNIFORM, "0.1")
    assert katib_validate(served, katib_api, uniform) is None
    unspecified = katib_experiment(katib_api, "grid", katib_api.DISTRIBUTION_UNSPECIFIED, "0.1")
    assert katib_validate(served, katib_api, unspecified) is None  # read as uniform


def test_a_distribution_number_this_api_lacks_is_refused_and_the_server_serves_on(
    serve: Callable[[dict[str, Any]], Served],
) -> None:
    """A newer Katib's fifth distribution: Katib's services have no law for it either (hyperopt
    fails at the first draw, Optuna on the enum's name); ours refuse it at validation."""
    katib_api: Any = pytest.importorskip("kubeflow.katib.katib_api_pb2")
    served = serve(experiment("random", rate("uniform")))
    refused = katib_validate(served, katib_api, katib_experiment(katib_api, "random", 7, "0.1"))
    assert refused is not None
    assert refused.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert refused.details() == "parameter 'lr': distribution '7' is not supported"
    known = katib_experiment(katib_api, "random", katib_api.LOG_UNIFORM, "0.1")
    assert katib_validate(served, katib_api, known) is None


def test_get_suggestions_without_validation_first_refuses_as_validation_does(
    serve: Callable[[dict[str, Any]], Served],
) -> None:
    """Katib's controller validates first, a client need not: the refusal is the same verdict
    (``INVALID_ARGUMENT``, the message), not the server's exception as ``UNKNOWN``."""
    katib_api: Any = pytest.importorskip("kubeflow.katib.katib_api_pb2")
    served = serve(experiment("grid", rate("uniform")))
    request = katib_api.GetSuggestionsRequest(
        experiment=katib_experiment(katib_api, "grid", katib_api.LOG_UNIFORM, "0.1"),
        current_request_number=1,
        total_request_number=1,
    )
    with grpc.insecure_channel(served.endpoint) as channel:
        call: grpc.UnaryUnaryMultiCallable[Any, Any] = channel.unary_unary(
            "/api.v1.beta1.Suggestion/GetSuggestions",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=katib_api.GetSuggestionsReply.FromString,
        )
        with pytest.raises(grpc.RpcError) as refused:
            call(request, timeout=10)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.details() == GRID_MESSAGE
        good = katib_experiment(katib_api, "grid", katib_api.UNIFORM, "0.1")
        reply = call(katib_api.GetSuggestionsRequest(
            experiment=good, current_request_number=1, total_request_number=1
        ), timeout=10)  # fmt: skip
        assert len(reply.parameter_assignments) == 1  # the server serves on
