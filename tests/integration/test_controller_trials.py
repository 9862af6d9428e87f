"""``katib-resume controller --run-trials`` as a process, against kmock and a db-manager stand-in.

The controller runs Trials as Katib's trial controller does: it adds the finalizer, marks the
Trial Created, creates its Job (owned, named after it), marks it Running; the test plays the
Job controller (kmock runs none) and katib-db-manager (``tests.support.db_manager``, over real
gRPC). A Job that completes with metrics makes the Trial Succeeded with Katib's observation and
the Job is deleted; one without metrics ends MetricsUnavailable after the bounded wait; a
deleted Trial has its rows deleted and goes. Then SIGTERM must end the controller cleanly.

Katib's own trial scenarios (``trial_controller_test.go``, docs/katib-contract.md) run with the
Job's pod sent through our pod webhook (``tests.support.pod_player``): the sidecar is injected,
and its collector reports to the db-manager stand-in over gRPC what Katib's collector would.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from katib_resume.app.manifests.rbac import CONTROLLER_CLUSTER
from katib_resume.core.observation import MetricRow
from katib_resume.core.ports import AlreadyExists
from tests.support.cluster_player import conditions, put_katib_config
from tests.support.db_manager import DbManagerServer
from tests.support.kube_mock import MockServer, write_kubeconfig
from tests.support.pod_player import PodPlayer, sidecar_flags
from tests.support.trials import new_trial
from tests.support.waiting import eventually

TRIALS = "/apis/kubeflow.org/v1beta1/namespaces/{ns}/trials"
JOBS = "/apis/batch/v1/namespaces/{ns}/jobs"
Json = dict[str, Any]


class Run:
    def __init__(self, kube: MockServer, process: subprocess.Popen[str], db: DbManagerServer):
        self.kube, self.process, self.db = kube, process, db
        self.transport: Transport = to_url(kube.url)

    def stored(self, resource: str, ns: str, name: str) -> Json | None:
        found: Json | None = self.kube.call(lambda mock: mock.stored(resource, ns, name))
        return found

    def until(self, check: Callable[[], bool], what: str) -> None:
        def alive() -> None:
            assert self.process.poll() is None, "the controller exited"

        eventually(check, seconds=30, what=what, between=alive, pause=0.1)

    def trial(self, ns: str, name: str) -> Json:
        found = self.stored("kubeflow.org/v1beta1/trials", ns, name)
        assert found is not None, f"Trial {name} is gone"
        return found

    def complete_job(self, ns: str, name: str) -> None:
        status = {"conditions": [{"type": "Complete", "status": "True", "reason": "Done"}]}
        path = f"{JOBS.format(ns=ns)}/{name}"
        self.transport.request("PATCH", path, body={"status": status}, content_type=MERGE_PATCH)


@pytest.fixture
def run(kube: MockServer, tmp_path: Path) -> Iterator[Run]:
    with contextlib.suppress(AlreadyExists):  # the module's server: an earlier test made it
        put_katib_config(to_url(kube.url))
    db = DbManagerServer()
    log = (tmp_path / "controller.log").open("w")
    command = [
        sys.executable, "-m", "katib_resume", "controller",
        "--kubeconfig", str(write_kubeconfig(tmp_path, kube.url)),
        "--config-map", "kubeflow/katib-config",
        "--metrics-addr", "127.0.0.1:0", "--health-addr", "127.0.0.1:0",
        "--run-trials", "--db-manager-address", db.address, "--metrics-wait", "2",
    ]  # fmt: skip
    process = subprocess.Popen(command, stderr=log, text=True)
    try:
        yield Run(kube, process, db)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        log.close()
        db.stop()


def _post_trial(run: Run, ns: str, name: str) -> None:
    run.transport.request("POST", TRIALS.format(ns=ns), body=new_trial(name, namespace=ns))


def test_trials_run_as_jobs_on_a_cluster(run: Run, namespace: str) -> None:
    ns = namespace
    run.db.rows["good"] = [
        {"time_stamp": "2020-08-10T06:47:38Z", "metric": {"name": "accuracy", "value": "0.99"}},
        {"time_stamp": "2020-08-10T06:50:38Z", "metric": {"name": "accuracy", "value": "0.11"}},
    ]
    _post_trial(run, ns, "good")
    run.until(lambda: run.stored("batch/v1/jobs", ns, "good") is not None, "the Job")
    job = run.stored("batch/v1/jobs", ns, "good")
    assert job is not None
    [owner] = job["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Trial", "good", True)
    assert owner["uid"] == run.trial(ns, "good")["metadata"]["uid"]
    run.until(lambda: ("Running", "True") in conditions(run.trial(ns, "good")), "Running")
    assert run.trial(ns, "good")["metadata"]["finalizers"] == ["clean-metrics-in-db"]

    run.complete_job(ns, "good")
    run.until(lambda: ("Succeeded", "True") in conditions(run.trial(ns, "good")), "Succeeded")
    trial = run.trial(ns, "good")
    assert trial["status"]["observation"]["metrics"] == [
        {"name": "accuracy", "min": "0.11", "max": "0.99", "latest": "0.11"}
    ]
    assert conditions(trial) == [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    run.until(lambda: run.stored("batch/v1/jobs", ns, "good") is None, "the Job deleted")

    _post_trial(run, ns, "silent")
    run.until(lambda: run.stored("batch/v1/jobs", ns, "silent") is not None, "the second Job")
    run.complete_job(ns, "silent")
    run.until(
        lambda: ("MetricsUnavailable", "True") in conditions(run.trial(ns, "silent")),
        "MetricsUnavailable after the bounded wait",
    )
    [unavailable] = [
        c
        for c in run.trial(ns, "silent")["status"]["conditions"]
        if c["type"] == "MetricsUnavailable"
    ]
    assert "none were reported within 2s" in unavailable["message"]

    run.transport.request("DELETE", f"{TRIALS.format(ns=ns)}/good")
    run.until(lambda: run.stored("kubeflow.org/v1beta1/trials", ns, "good") is None, "deleted")
    assert ("DeleteObservationLog", {"trial_name": "good"}) in run.db.calls

    run.process.send_signal(signal.SIGTERM)
    assert run.process.wait(15) == 0


def test_the_controller_may_create_and_delete_every_run_kind() -> None:
    from katib_resume.adapters.k8s.resources import RUN_KINDS, resource

    granted = {
        (permission.group, plural)
        for permission in CONTROLLER_CLUSTER
        if {"create", "get", "list", "watch", "delete"} <= set(permission.verbs)
        for plural in permission.resources
    }
    for api_version, kind in RUN_KINDS:
        group = api_version.rpartition("/")[0]
        assert (group, resource(api_version, kind).plural) in granted, kind


def _set_job_status(run: Run, ns: str, name: str, *conditions: Json) -> None:
    path = f"{JOBS.format(ns=ns)}/{name}"
    body = {"status": {"conditions": list(conditions)}}
    run.transport.request("PATCH", path, body=body, content_type=MERGE_PATCH)


def _true(kind: str, **fields: str) -> Json:
    return {"type": kind, "status": "True", **fields}


def _stand_ins(ns: str) -> list[Json]:
    """The Experiment and Suggestion the pod webhook reads (label ``exp``), kept out of the API
    server: there the controller under test would run them."""
    meta = {"name": "exp", "namespace": ns}
    spec = {"algorithm": {"algorithmName": "random"}}
    return [
        {"apiVersion": "kubeflow.org/v1beta1", "kind": kind, "metadata": meta, "spec": spec}
        for kind in ("Experiment", "Suggestion")
    ]


def _started(run: Run, pods: PodPlayer, ns: str, name: str, collector: str = "StdOut") -> Json:
    """Post Katib's fixture Trial; once its Job exists, admit the Job's pod."""
    run.transport.request("POST", TRIALS.format(ns=ns), body=new_trial(name, collector, ns))
    run.until(lambda: run.stored("batch/v1/jobs", ns, name) is not None, f"the Job of {name}")
    run.until(lambda: ("Running", "True") in conditions(run.trial(ns, name)), f"{name} Running")
    job = run.stored("batch/v1/jobs", ns, name)
    assert job is not None
    return pods.admit(job)


def _condition(run: Run, ns: str, name: str, kind: str) -> Json:
    run.until(lambda: (kind, "True") in conditions(run.trial(ns, name)), f"{name} {kind}")
    found: list[Json] = run.trial(ns, name)["status"]["conditions"]
    [condition] = [c for c in found if c["type"] == kind]
    return condition


def test_katibs_trial_scenarios_with_the_pod_through_the_pod_webhook(
    run: Run, namespace: str
) -> None:
    ns, pods = namespace, PodPlayer(run.transport, run.db.address, _stand_ins(namespace))

    # T2: a failed Job fails the Trial with the Job's reason and message; deleting it deletes
    # its rows once and the Trial goes
    pod = _started(run, pods, ns, "test-failed-batch-job")
    assert sidecar_flags(pod)["-t"] == "test-failed-batch-job"
    job = {"reason": "BatchJob completed test reason", "message": "BatchJob completed test message"}
    _set_job_status(
        run, ns, "test-failed-batch-job", _true("FailureTarget"), _true("Failed", **job)
    )
    failed = _condition(run, ns, "test-failed-batch-job", "Failed")
    assert failed["reason"] == "TrialFailed. Job reason: BatchJob completed test reason"
    assert failed["message"] == "Trial has failed. Job message: BatchJob completed test message"
    assert "observation" not in run.trial(ns, "test-failed-batch-job")["status"]
    run.transport.request("DELETE", f"{TRIALS.format(ns=ns)}/test-failed-batch-job")
    run.until(
        lambda: run.stored("kubeflow.org/v1beta1/trials", ns, "test-failed-batch-job") is None,
        "the failed Trial deleted",
    )
    deletes = [r for m, r in run.db.calls if m == "DeleteObservationLog"]
    assert deletes == [{"trial_name": "test-failed-batch-job"}]

    # T3: the collector's two rows give Katib's observation
    pod = _started(run, pods, ns, "test-available-stdout")
    pods.collect(
        pod,
        [
            MetricRow("2020-08-10T14:47:38+08:00", "accuracy", "0.99"),
            MetricRow("2020-08-10T14:50:38+08:00", "accuracy", "0.11"),
        ],
    )
    done = (_true("SuccessCriteriaMet"), _true("Complete"))
    _set_job_status(run, ns, "test-available-stdout", *done)
    _condition(run, ns, "test-available-stdout", "Succeeded")
    assert run.trial(ns, "test-available-stdout")["status"]["observation"]["metrics"] == [
        {"name": "accuracy", "min": "0.11", "max": "0.99", "latest": "0.11"}
    ]

    # T4: a StdOut collector that found no objective reports "unavailable"
    pod = _started(run, pods, ns, "test-unavailable-stdout")
    pods.collect(pod, [MetricRow("2020-08-10T14:47:38Z", "loss", "0.5")])
    _set_job_status(run, ns, "test-unavailable-stdout", *done)
    _condition(run, ns, "test-unavailable-stdout", "MetricsUnavailable")
    unavailable = {"name": "accuracy", "min": "unavailable", "max": "unavailable"}
    unavailable["latest"] = "unavailable"
    observed = run.trial(ns, "test-unavailable-stdout")["status"]["observation"]["metrics"]
    assert observed == [unavailable]

    # T5: Push: no sidecar, the env var; the controller's "unavailable" report fails once, then
    # the Trial ends MetricsUnavailable
    pod = _started(run, pods, ns, "test-unavailable-push-failed-once", "Push")
    [primary] = pod["spec"]["containers"]
    assert [e["name"] for e in primary["env"]] == ["KATIB_TRIAL_NAME"]
    calls = len(run.db.calls)
    run.db.failing = 1
    _set_job_status(run, ns, "test-unavailable-push-failed-once", *done)
    _condition(run, ns, "test-unavailable-push-failed-once", "MetricsUnavailable")
    assert run.db.failing == 0 and len(run.db.calls) > calls + 1, "a failed call, then a retry"
    reports = [r for m, r in run.db.calls[calls:] if m == "ReportObservationLog"]
    assert reports[-1]["trial_name"] == "test-unavailable-push-failed-once"
    [row] = reports[-1]["observation_log"]["metric_logs"]
    assert row["metric"] == {"name": "accuracy", "value": "unavailable"}
