"""A whole FromVolume lifecycle on kmock with ``controller --run-trials``: every Trial a Job.

As ``test_controller_binary.py``, but the controller runs the Trials itself. The test plays the
Job controller and the metrics collector (``tests.support.job_player``: each new Job reports a
loss to the katib-db-manager stand-in, then completes) and the garbage collector of Jobs; the
controller creates the Jobs, reads the observations over gRPC, marks the Trials, deletes the
Jobs, and the Experiment's status gets Katib's counters and ``currentOptimalTrial``, through
completion, restart and deletion.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from tests.integration.test_controller_binary import katib_config_with_volume
from tests.support.cluster_player import conditions, defaulted_example, put_katib_config
from tests.support.db_manager import DbManagerServer
from tests.support.job_player import TrialsPlayer
from tests.support.katib_grpc import KatibServer, LocalAlgorithm
from tests.support.kube_mock import MockServer, write_kubeconfig
from tests.support.waiting import eventually

KATIB = "kubeflow.org/v1beta1"
Json = dict[str, Any]


class Run:
    def __init__(self, kube: MockServer, process: subprocess.Popen[str], db: DbManagerServer):
        self.transport: Transport = to_url(kube.url)
        self.process, self.db = process, db
        self.cluster = TrialsPlayer(kube, self.transport, db, suggestion_client=False)
        self.jobs = self.cluster.jobs

    def tick(self) -> None:
        assert self.process.poll() is None, "the controller exited"
        self.cluster.tick()

    def until(self, check: Any, what: str) -> None:
        eventually(check, seconds=60, what=what, between=self.tick, pause=0.1)

    def experiment(self) -> Json:
        found: Json = self.cluster.objects(f"{KATIB}/experiments")[0]
        return found

    def trials(self) -> list[Json]:
        return self.cluster.objects(f"{KATIB}/trials")


@pytest.fixture
def run(kube: MockServer, tmp_path: Path) -> Iterator[Run]:
    put_katib_config(to_url(kube.url), katib_config_with_volume())
    katib, db = KatibServer(LocalAlgorithm().behaviour()), DbManagerServer()
    log = (tmp_path / "controller.log").open("w")
    command = [
        sys.executable, "-m", "katib_resume", "controller",
        "--kubeconfig", str(write_kubeconfig(tmp_path, kube.url)),
        "--config-map", "kubeflow/katib-config",
        "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0", "--workers", "2",
        "--suggestion-endpoint", katib.endpoint, "--suggestion-timeout", "5",
        "--run-trials", "--db-manager-address", db.address,
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=log, text=True)
    try:
        yield Run(kube, process, db)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        log.close()
        katib.stop()
        db.stop()


def _succeeded(trial: Json) -> bool:
    return ("Succeeded", "True") in conditions(trial)


def _assert_optimal(run: Run) -> None:
    status = run.experiment()["status"]
    best = min(run.jobs.losses, key=lambda name: (float(run.jobs.losses[name]), name))
    optimal = status["currentOptimalTrial"]
    assert optimal["bestTrialName"] == best
    assert optimal["observation"]["metrics"][0]["min"] == run.jobs.losses[best]
    assert [p["name"] for p in optimal["parameterAssignments"]] == ["lr", "momentum"]


def test_a_from_volume_lifecycle_with_trials_run_as_jobs(run: Run) -> None:
    body = defaulted_example()
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    run.transport.request("POST", f"/apis/{KATIB}/namespaces/{ns}/experiments", body=body)

    run.until(lambda: ("Succeeded", "True") in conditions(run.experiment()), "first completion")
    trials = run.trials()
    assert len(trials) == 12 and all(_succeeded(t) for t in trials)
    assert set(run.jobs.losses) == {t["metadata"]["name"] for t in trials}, "one Job per Trial"
    status = run.experiment()["status"]
    assert status["trialsSucceeded"] == 12 and len(status["succeededTrialList"]) == 12
    _assert_optimal(run)
    run.until(lambda: not run.cluster.objects("batch/v1/jobs"), "every Job deleted")

    path = f"/apis/{KATIB}/namespaces/{ns}/experiments/{name}"
    patch = {"spec": {"maxTrialCount": 20}}
    run.transport.request("PATCH", path, body=patch, content_type=MERGE_PATCH)
    run.until(lambda: len(run.trials()) == 20 and all(map(_succeeded, run.trials())), "20 done")
    run.until(lambda: ("Succeeded", "True") in conditions(run.experiment()), "second completion")
    assert run.experiment()["status"]["trialsSucceeded"] == 20
    _assert_optimal(run)

    run.transport.request("DELETE", path)
    run.until(lambda: not run.trials(), "the Trials deleted, their finalizer done")
    deleted = {r["trial_name"] for m, r in run.db.calls if m == "DeleteObservationLog"}
    assert deleted == set(run.jobs.losses)
