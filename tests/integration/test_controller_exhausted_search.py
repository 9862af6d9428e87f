"""On a cluster, an exhausted search completes the Experiment, as it does in process.

``katib-resume controller`` as a process against kmock (``tests.support.cluster_player`` plays
kubelet, volume binder and Katib's trial controller), with our ``suggestion-server``'s API over
real gRPC as the suggestion endpoint. A grid of 4 cells under ``maxTrialCount: 10``: the last
call brings the one cell left (fewer than asked for) and the server's "no more" in the reply's
trailing metadata, and once its Trials are done the Experiment succeeds with Katib's
``ExperimentSuggestionEndReached`` (``tests/integration/test_exhausted_search.py`` in process).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from katib_resume.adapters.grpc.server import ApiServer
from katib_resume.adapters.k8s.connect import to_url
from katib_resume.app.suggestion.service import SuggestionApi
from katib_resume.core.katib import GRPC_HEALTH_SERVICE
from tests.support.cluster_player import ClusterPlayer, defaulted_example, put_katib_config
from tests.support.harness import shipped_config_data
from tests.support.kube_mock import MockServer, write_kubeconfig
from tests.support.waiting import eventually

KATIB = "kubeflow.org/v1beta1"
CELLS = [
    {"name": "lr", "parameterType": "categorical", "feasibleSpace": {"list": ["0.01", "0.02"]}},
    {"name": "momentum", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "2"}},
]


def katib_config() -> str:
    """The shipped katib-config, its grid entry with a hostPath PersistentVolume."""
    data = shipped_config_data()
    volume = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/tmp/katib/suggestions"},
    }
    for entry in data["runtime"]["suggestions"]:
        if entry["algorithmName"] == "grid":
            entry["persistentVolumeSpec"] = volume
    return yaml.safe_dump(data)


@pytest.fixture
def player(kube: MockServer, tmp_path: Path) -> Iterator[tuple[ClusterPlayer, Any]]:
    transport = to_url(kube.url)
    put_katib_config(transport, katib_config())
    api = SuggestionApi(tmp_path / "volume", 0)
    server = ApiServer(api.handlers(), ["127.0.0.1:0"], healthy=[GRPC_HEALTH_SERVICE])
    log = (tmp_path / "controller.log").open("w")
    command = [
        sys.executable, "-m", "katib_resume", "controller",
        "--kubeconfig", str(write_kubeconfig(tmp_path, kube.url)),
        "--config-map", "kubeflow/katib-config",
        "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0",
        "--suggestion-endpoint", f"127.0.0.1:{server.ports[0]}", "--suggestion-timeout", "5",
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=log, text=True)
    try:
        yield ClusterPlayer(kube, transport, suggestion_client=False), process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        log.close()
        server.stop()


def test_an_exhausted_grid_completes_the_experiment_on_a_cluster(
    player: tuple[ClusterPlayer, Any],
) -> None:
    play, process = player
    body = defaulted_example()
    body["spec"]["algorithm"] = {"algorithmName": "grid", "algorithmSettings": []}
    body["spec"]["parameters"] = CELLS
    body["spec"]["maxTrialCount"], body["spec"]["parallelTrialCount"] = 10, 2
    ns = body["metadata"]["namespace"]
    play.transport.request("POST", f"/apis/{KATIB}/namespaces/{ns}/experiments", body=body)

    def succeeded() -> list[Any]:
        [experiment] = play.objects(f"{KATIB}/experiments")
        found = (experiment.get("status") or {}).get("conditions") or []
        return [c for c in found if c["type"] == "Succeeded" and c["status"] == "True"]

    def tick() -> None:
        assert process.poll() is None, "the controller exited"
        play.tick()

    eventually(lambda: bool(succeeded()), seconds=60, what="completion", between=tick, pause=0.1)
    [condition] = succeeded()
    assert condition["reason"] == "ExperimentSuggestionEndReached"
    assert condition["message"] == (
        "Experiment has succeeded because suggestion service has reached the end"
    )
    trials = play.objects(f"{KATIB}/trials")
    cells = {
        tuple(sorted((a["name"], a["value"]) for a in t["spec"]["parameterAssignments"]))
        for t in trials
    }
    assert len(trials) == len(cells) == 4  # every cell once, none again
