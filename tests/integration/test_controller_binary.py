"""``katib-resume controller`` as a process, against kmock, through a whole FromVolume lifecycle.

The test plays what kmock does not run (``tests.support.cluster_player``: kubelet, volume
binder, Katib's trial controller, garbage collector) and serves Katib's suggestion API over
real gRPC (``tests.support.katib_grpc``, our random search behind it), which the controller
reaches through ``--suggestion-endpoint``. It checks, over HTTP, the objects and conditions
through first run, completion, restart and deletion, that every Trial runs an assignment the
service issued, and the controller's probes and metrics; then SIGTERM must end it cleanly.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from tests.support.cluster_player import (
    ClusterPlayer,
    conditions,
    defaulted_example,
    put_katib_config,
)
from tests.support.harness import shipped_config_data
from tests.support.katib_grpc import KatibServer, LocalAlgorithm
from tests.support.kube_mock import MockServer, write_kubeconfig
from tests.support.waiting import eventually

KATIB = "kubeflow.org/v1beta1"
HOST_PATH = "/tmp/katib/suggestions"
Json = dict[str, Any]


def katib_config_with_volume() -> str:
    """The shipped katib-config, with a PersistentVolume for the random algorithm."""
    volume = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": HOST_PATH},
    }
    return yaml.safe_dump(shipped_config_data(persistentVolumeSpec=volume))


class Run:
    def __init__(
        self,
        server: MockServer,
        transport: Transport,
        process: subprocess.Popen[str],
        katib: KatibServer,
    ):
        self.server, self.transport, self.process = server, transport, process
        self.katib = katib
        self.player = ClusterPlayer(server, transport, suggestion_client=False)

    def objects(self, resource: str) -> list[Json]:
        return self.player.objects(resource)

    def until(self, check: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
        eventually(check, seconds=seconds, what=what, between=self.tick, pause=0.1)

    def tick(self) -> None:
        assert self.process.poll() is None, "the controller exited"
        self.player.tick()

    def experiment(self) -> Json:
        return self.objects(f"{KATIB}/experiments")[0]

    def count(self, resource: str) -> int:
        return len(self.objects(resource))


@pytest.fixture
def run(kube: MockServer, tmp_path: Path) -> Iterator[Run]:
    transport = to_url(kube.url)
    put_katib_config(transport, katib_config_with_volume())
    katib = KatibServer(LocalAlgorithm().behaviour())
    log = (tmp_path / "controller.log").open("w")
    command = [
        sys.executable, "-m", "katib_resume", "controller",
        "--kubeconfig", str(write_kubeconfig(tmp_path, kube.url)),
        "--config-map", "kubeflow/katib-config",
        "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0",
        "--leader-elect", "--workers", "2",
        "--suggestion-endpoint", katib.endpoint, "--suggestion-timeout", "5",
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=log, text=True)
    try:
        yield Run(kube, transport, process, katib)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        log.close()
        katib.stop()


def issued_names(run: Run) -> set[str]:
    """The trial names the suggestion service handed out over gRPC."""
    return {
        item["trial_name"]
        for reply in run.katib.replies
        for item in reply.get("parameter_assignments", [])
    }


def assigned(run: Run) -> dict[str, list[Json]]:
    return {
        t["metadata"]["name"]: t["spec"]["parameterAssignments"]
        for t in run.objects(f"{KATIB}/trials")
    }


def assert_issued_by_the_service(run: Run) -> None:
    trials = assigned(run)
    assert set(trials) <= issued_names(run)
    assert run.katib.requests_of("ValidateAlgorithmSettings")
    for values in trials.values():
        [lr, momentum] = values
        assert lr["name"] == "lr" and 0.01 <= float(lr["value"]) <= 0.05
        assert momentum["name"] == "momentum" and 0.5 <= float(momentum["value"]) <= 0.9


def assert_suggestion_calls_counted(run: Run, metrics: str) -> None:
    name = "katib_resume_suggestion_calls_total"
    calls = len(run.katib.requests_of("GetSuggestions"))
    assert f'{name}{{code="OK",method="GetSuggestions"}} {calls}.0' in metrics
    assert f'{name}{{code="OK",method="ValidateAlgorithmSettings"}}' in metrics


def addresses(log: Path) -> dict[str, str]:
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("msg") == "serving":
            return {"health": record["health"], "metrics": record["metrics"]}
    raise AssertionError("the controller did not log its addresses")


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_a_from_volume_experiment_runs_completes_restarts_and_is_deleted(
    run: Run, tmp_path: Path
) -> None:
    body = defaulted_example()
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    run.transport.request("POST", f"/apis/{KATIB}/namespaces/{ns}/experiments", body=body)

    # first run to maxTrialCount (12): completion tears the service down, keeps the volume
    run.until(lambda: ("Succeeded", "True") in conditions(run.experiment()), "first completion")
    assert run.count(f"{KATIB}/trials") == 12
    # every Trial runs an assignment the service issued over gRPC, after a valid verdict
    assert_issued_by_the_service(run)
    torn_down = ("apps/v1/deployments", "v1/services")  # deleted one after the other
    run.until(lambda: not any(run.count(kind) for kind in torn_down), "service torn down")
    [claim] = run.objects("v1/persistentvolumeclaims")
    [volume] = run.objects("v1/persistentvolumes")
    assert volume["spec"]["claimRef"]["name"] == claim["metadata"]["name"]
    assert volume["spec"]["hostPath"]["path"] == f"{HOST_PATH}/{volume['metadata']['name']}"
    suggestion = run.objects(f"{KATIB}/suggestions")[0]
    assert ("Succeeded", "True") in conditions(suggestion)

    # the health and metrics endpoints answer
    urls = addresses(tmp_path / "controller.log")
    assert fetch(urls["health"] + "/healthz")[0] == 200
    assert fetch(urls["health"] + "/readyz")[0] == 200
    status, metrics = fetch(urls["metrics"] + "/metrics")
    assert status == 200
    assert 'katib_resume_reconciles_total{result="success"}' in metrics
    assert 'katib_resume_experiments{condition="Succeeded"} 1.0' in metrics
    assert_suggestion_calls_counted(run, metrics)

    # raise the budget: the Experiment restarts and the same claim is mounted again
    path = f"/apis/{KATIB}/namespaces/{ns}/experiments/{name}"
    patch = {"spec": {"maxTrialCount": 20}}
    run.transport.request("PATCH", path, body=patch, content_type=MERGE_PATCH)
    run.until(lambda: ("Restarting", "True") in conditions(run.experiment()), "restarting")
    run.until(lambda: run.count(f"{KATIB}/trials") == 20, "20 trials")
    assert set(assigned(run)) <= issued_names(run)
    # after the restart the service is told about the finished Trials, as Katib does
    last = run.katib.requests_of("GetSuggestions")[-1]
    assert len(last["trials"]) >= 12
    assert {t["status"]["condition"] for t in last["trials"]} == {"SUCCEEDED"}
    run.until(lambda: ("Succeeded", "True") in conditions(run.experiment()), "second completion")
    assert ("Restarting", "True") in conditions(run.experiment())  # kept, as Katib keeps it
    [again] = run.objects("v1/persistentvolumeclaims")
    assert again["metadata"]["uid"] == claim["metadata"]["uid"]
    assert "katib_resume_restarts_total 1.0" in fetch(urls["metrics"] + "/metrics")[1]

    # delete: garbage collection takes the namespaced objects, our finalizer the PV
    run.transport.request("DELETE", path)
    everything = (
        f"{KATIB}/suggestions", f"{KATIB}/trials", "apps/v1/deployments", "v1/services",
        "v1/persistentvolumeclaims", "v1/persistentvolumes",
    )  # fmt: skip
    run.until(lambda: not any(run.count(r) for r in everything), "everything deleted")

    # SIGTERM: the controller finishes and exits cleanly, releasing its Lease
    run.process.send_signal(signal.SIGTERM)
    assert run.process.wait(15) == 0
    [lease] = run.objects("coordination.k8s.io/v1/leases")
    assert not lease["spec"].get("holderIdentity")
