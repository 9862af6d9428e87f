"""Katib's Python SDK (``kubeflow-katib``) drives ``katib-resume controller``, as a user would.

The stack is the controller binary's (``test_controller_binary``: kmock, the controller process,
a gRPC suggestion service, the test's cluster player completing Trials), with our webhook in the
API server's path (``tests.support.admission_path``). The SDK talks to kmock through the official
client and a ``Configuration`` for its URL. The restart flow runs with the SDK's default polling
(15 s): ``edit_experiment_budget``, wait ``Restarting``, wait ``Succeeded``, which a restarted run
shorter than a polling interval must not break.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import pytest
from kubeflow.katib import KatibClient, models, search
from kubernetes import client as k8s

from katib_resume.adapters.k8s.connect import to_url
from katib_resume.core.ports import Conflict, NotFound
from tests.integration.test_controller_binary import katib_config_with_volume
from tests.support.admission_path import WebhookPath
from tests.support.cluster_player import ClusterPlayer, put_katib_config
from tests.support.katib_grpc import KatibServer, LocalAlgorithm
from tests.support.kube_mock import MockServer, write_kubeconfig
from tests.support.waiting import eventually
from tests.support.webhook import INJECTION, NAMESPACE

KATIB = "kubeflow.org/v1beta1"
WAIT = 90  # seconds: six of the SDK's default polls


class Player(threading.Thread):
    """The cluster player, ticking in the background while the SDK blocks in its waits."""

    def __init__(self, player: ClusterPlayer, alive: Callable[[], bool]) -> None:
        super().__init__(name="cluster-player", daemon=True)
        self.player, self.alive = player, alive
        self.stopping = threading.Event()
        self.errors: list[BaseException] = []

    def run(self) -> None:
        while not self.stopping.wait(0.1):
            try:
                assert self.alive(), "the controller exited"
                self.player.tick()
            except (NotFound, Conflict):
                continue  # the object went, or moved on, between the player's read and write
            except BaseException as error:  # reported by the fixture, never lost
                self.errors.append(error)
                return


@dataclass
class Stack:
    server: MockServer
    katib: KatibClient
    webhook: WebhookPath
    player: ClusterPlayer

    def objects(self, resource: str) -> list[dict[str, Any]]:
        return self.player.objects(resource)

    def named(self, resource: str, name: str) -> list[dict[str, Any]]:
        return [o for o in self.objects(resource) if o["metadata"]["name"] == name]

    def raw(self, name: str) -> Any:
        """The Experiment as stored (the SDK's models drop ``observedGeneration``)."""
        api = self.katib.custom_api
        return api.get_namespaced_custom_object(
            "kubeflow.org", "v1beta1", NAMESPACE, "experiments", name
        )


def _start_controller(
    server: MockServer, directory: Path, endpoint: str
) -> tuple[subprocess.Popen[str], TextIO]:
    command = [
        sys.executable, "-m", "katib_resume", "controller",
        "--kubeconfig", str(write_kubeconfig(directory, server.url)),
        "--config-map", "kubeflow/katib-config",
        "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0",
        "--suggestion-endpoint", endpoint, "--suggestion-timeout", "5",
    ]  # fmt: skip
    log = (directory / "controller.log").open("w")
    return subprocess.Popen(command, stderr=log, text=True), log


@pytest.fixture(scope="module")
def stack(kube: MockServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory = tmp_path_factory.mktemp("sdk")
    transport = to_url(kube.url)
    put_katib_config(transport, katib_config_with_volume())
    labels = {"name": NAMESPACE, "labels": INJECTION}
    transport.request("POST", "/api/v1/namespaces", body={"metadata": labels})
    webhook = WebhookPath(kube, directory, "kubeflow/katib-config")
    webhook.install()
    suggestions = KatibServer(LocalAlgorithm().behaviour())
    process, log = _start_controller(kube, directory, suggestions.endpoint)
    player = ClusterPlayer(kube, transport, suggestion_client=False)
    playing = Player(player, lambda: process.poll() is None)
    playing.start()
    configuration = k8s.Configuration()
    configuration.host = kube.url
    katib = KatibClient(client_configuration=configuration, namespace=NAMESPACE)
    try:
        yield Stack(kube, katib, webhook, player)
    finally:
        playing.stopping.set()
        playing.join(10)
        process.kill()
        process.wait(10)
        log.close()
        webhook.stop()
        suggestions.stop()
    assert not playing.errors, playing.errors


def experiment(name: str, max_trials: int) -> models.V1beta1Experiment:
    """Katib's from-volume example, written with the SDK's models."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "training-container",
                            "image": "ghcr.io/kubeflow/katib/pytorch-mnist-cpu:latest",
                            "command": [
                                "python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1",
                                "--lr=${trialParameters.learningRate}",
                                "--momentum=${trialParameters.momentum}",
                            ],
                        }
                    ],
                    "restartPolicy": "Never",
                }
            }
        },
    }  # fmt: skip
    return models.V1beta1Experiment(
        api_version=KATIB,
        kind="Experiment",
        metadata=k8s.V1ObjectMeta(name=name, namespace=NAMESPACE),
        spec=models.V1beta1ExperimentSpec(
            objective=models.V1beta1ObjectiveSpec(
                type="minimize", goal=0.001, objective_metric_name="loss"
            ),
            algorithm=models.V1beta1AlgorithmSpec(algorithm_name="random"),
            parallel_trial_count=2,
            max_trial_count=max_trials,
            max_failed_trial_count=1,
            resume_policy="FromVolume",
            parameters=[
                _double("lr", "0.01", "0.05"),
                _double("momentum", "0.5", "0.9"),
            ],
            trial_template=models.V1beta1TrialTemplate(
                primary_container_name="training-container",
                trial_parameters=[
                    models.V1beta1TrialParameterSpec(name="learningRate", reference="lr"),
                    models.V1beta1TrialParameterSpec(name="momentum", reference="momentum"),
                ],
                trial_spec=job,
            ),
        ),
    )


def _double(name: str, low: str, high: str) -> models.V1beta1ParameterSpec:
    space = models.V1beta1FeasibleSpace(min=low, max=high)
    return models.V1beta1ParameterSpec(name=name, parameter_type="double", feasible_space=space)


def _claim_uid(stack: Stack, name: str) -> str:
    [claim] = stack.named("v1/persistentvolumeclaims", f"{name}-random")
    return str(claim["metadata"]["uid"])


def _current(stored: dict[str, Any]) -> bool:
    """Whether the status was computed from the spec as it is now."""
    return bool(stored["status"].get("observedGeneration") == stored["metadata"]["generation"])


def _restarting(stored: dict[str, Any]) -> dict[str, Any]:
    found: list[dict[str, Any]] = stored["status"]["conditions"]
    [condition] = [c for c in found if c["type"] == "Restarting"]
    return condition


def test_the_sdk_lifecycle_with_its_default_polling(stack: Stack) -> None:
    katib, name = stack.katib, "sdk-resume"
    katib.create_experiment(experiment(name, max_trials=4))
    done = katib.wait_for_experiment_condition(name, expected_condition="Succeeded", timeout=WAIT)
    assert done.status.trials_succeeded == 4
    trials = katib.list_trials(name)
    assert len(trials) == 4 and all(t.status.conditions for t in trials)
    claim = _claim_uid(stack, name)

    katib.edit_experiment_budget(name, max_trial_count=6)
    restarting = katib.wait_for_experiment_condition(
        name, expected_condition="Restarting", timeout=WAIT
    )
    assert katib.is_experiment_restarting(name, experiment=restarting)
    again = katib.wait_for_experiment_condition(name, expected_condition="Succeeded", timeout=WAIT)
    assert again.status.trials_succeeded == 6 and len(katib.list_trials(name)) == 6
    assert _claim_uid(stack, name) == claim  # the same volume, mounted again
    stored = stack.raw(name)
    assert _current(stored)
    first = _restarting(stored)

    # a careful client's second restart: Restarting is still True from the first, so it waits
    # for a status that has seen its edit before it waits for Succeeded
    katib.edit_experiment_budget(name, max_trial_count=8)
    eventually(lambda: _current(stack.raw(name)), seconds=30, what="the edit seen", pause=0.2)
    third = katib.wait_for_experiment_condition(
        name, expected_condition="Succeeded", timeout=WAIT, polling_interval=1
    )
    assert third.status.trials_succeeded == 8
    renewed = _restarting(stack.raw(name))
    assert renewed["status"] == "True"
    assert renewed["lastTransitionTime"] > first["lastTransitionTime"]  # this restart's

    katib.delete_experiment(name)
    volume = f"{name}-random-{NAMESPACE}"
    eventually(
        lambda: not stack.named("v1/persistentvolumes", volume),
        seconds=30,
        what="the PersistentVolume deleted with its Experiment",
        pause=0.2,
    )
    assert not stack.named(f"{KATIB}/experiments", name)


def test_a_denied_edit_shows_katibs_message_in_the_sdks_exception_chain(stack: Stack) -> None:
    katib, name = stack.katib, "sdk-denied"
    katib.create_experiment(experiment(name, max_trials=2))
    katib.wait_for_experiment_condition(
        name, expected_condition="Succeeded", timeout=WAIT, polling_interval=1
    )
    with pytest.raises(RuntimeError, match="Failed to edit Katib Experiment") as raised:
        katib.edit_experiment_budget(name, max_trial_count=1)  # below the 2 trials run
    cause = raised.value.__context__
    assert cause is not None and getattr(cause, "status", None) == 400
    expected = "spec.maxTrialCount: Invalid value: 1: must be greater than status.trials count"
    assert expected in str(getattr(cause, "body", ""))
    assert katib.get_experiment(name).spec.max_trial_count == 2  # nothing was stored
    katib.delete_experiment(name)


def objective(parameters: dict[str, Any]) -> None:
    """What ``tune`` ships to each Trial (the player reports the metric instead of running it)."""
    print(f"loss={float(parameters['lr']) * 10}")


def test_tune_builds_an_experiment_that_is_admitted_and_runs(stack: Stack) -> None:
    katib, name = stack.katib, "sdk-tune"
    katib.tune(
        name=name,
        objective=objective,
        parameters={"lr": search.double(min=0.01, max=0.05)},
        objective_metric_name="loss",
        objective_type="minimize",
        max_trial_count=2,
        parallel_trial_count=1,
    )
    done = katib.wait_for_experiment_condition(
        name, expected_condition="Succeeded", timeout=WAIT, polling_interval=1
    )
    assert done.status.trials_succeeded == 2
    [stored] = stack.named(f"{KATIB}/experiments", name)
    assert stored["spec"]["resumePolicy"] == "Never"  # our defaulter admitted it
    template = stored["spec"]["trialTemplate"]
    assert "def objective" in str(template["trialSpec"])  # the function tune packed
    assert {t.metadata.name for t in katib.list_trials(name)} == {
        t["metadata"]["name"] for t in stack.objects(f"{KATIB}/trials")
        if t["metadata"]["labels"].get("katib.kubeflow.org/experiment") == name
    }  # fmt: skip
    katib.delete_experiment(name)


def test_get_optimal_hyperparameters_reads_the_current_optimal_trial(stack: Stack) -> None:
    katib, name = stack.katib, "sdk-optimal"
    katib.create_experiment(experiment(name, max_trials=2))
    katib.wait_for_experiment_condition(
        name, expected_condition="Succeeded", timeout=WAIT, polling_interval=1
    )
    optimal = katib.get_optimal_hyperparameters(name)
    assert optimal is not None
    assert optimal.best_trial_name in {t.metadata.name for t in katib.list_trials(name)}
    assert {p.name for p in optimal.parameter_assignments} == {"lr", "momentum"}
    assert [m.name for m in optimal.observation.metrics] == ["loss"]
    katib.delete_experiment(name)
