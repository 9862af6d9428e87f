"""``/mutate-pod``: Katib's metrics-collector sidecar, kind by kind, with Katib's arguments.

Each case builds the cluster Katib's webhook sees when the Job controller creates a Trial's
pod (the Experiment, the Suggestion, the Trial, its Job), sends the pod's CREATE through the
route, applies the answered JSON Patch with the tests' own RFC 6902 code, and checks the stored
pod: the sidecar's name, image, resources and argument list (``inject_webhook_test.go``'s
shapes), the wrapped primary command, the shared volume, the labels and the env var.
"""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.embedded.runtime import StaticConfig
from katib_resume.app.webhook import Admission
from katib_resume.app.webhook.owners import MAX_READS
from katib_resume.app.webhook.wrap import wrapped
from katib_resume.core.actions import ObjectRef
from katib_resume.core.config import parse_katib_config
from katib_resume.core.manifest import Manifest
from tests.support import harness
from tests.support.delegating import DelegatingCluster
from tests.support.pods import (
    DB,
    admission,
    answer,
    created_job,
    job_pod,
    mutated,
    stdout_trial,
    trial_world,
)

FILE_IMAGE = "ghcr.io/kubeflow/katib/file-metrics-collector:latest"
TRAINING = "python3 /opt/pytorch-mnist/mnist.py --epochs=1"
COMPLETED = "echo completed > /var/log/katib/$$$$.pid"
DEFAULT_RESOURCES = {
    "requests": {"cpu": "50m", "memory": "10Mi", "ephemeral-storage": "500Mi"},
    "limits": {"cpu": "500m", "memory": "100Mi", "ephemeral-storage": "5Gi"},
}


def _pod_of(trial: Manifest, config: Any = None) -> Manifest:
    cluster, stored = trial_world(trial)
    return mutated(admission(cluster, config), job_pod(created_job(cluster, stored)))


def _containers(pod: Manifest) -> dict[str, Manifest]:
    return {c["name"]: c for c in pod["spec"]["containers"]}


def _ref(kind: str, name: str) -> ObjectRef:
    return ObjectRef("kubeflow.org/v1beta1", kind, "kubeflow", name)


def _base_args(name: str = "t1") -> list[str]:
    return ["-t", name, "-m", "accuracy", "-o-type", "maximize", "-s-db", DB]


def test_stdout_gets_katibs_sidecar_and_a_wrapped_command() -> None:
    pod = _pod_of(stdout_trial())
    containers = _containers(pod)
    sidecar = containers["metrics-logger-and-collector"]
    assert sidecar["image"] == FILE_IMAGE and sidecar["imagePullPolicy"] == "IfNotPresent"
    assert sidecar["args"] == [
        *_base_args(),
        "-path",
        "/var/log/katib/metrics.log",
        "-format",
        "TEXT",
    ]
    assert sidecar["resources"] == DEFAULT_RESOURCES
    primary = containers["training-container"]
    assert primary["command"] == ["sh", "-c"]
    assert primary["args"] == [f"{TRAINING} 1>/var/log/katib/metrics.log 2>&1 && {COMPLETED}"]
    mount = {"name": "metrics-volume", "mountPath": "/var/log/katib"}
    assert mount in primary["volumeMounts"] and mount in sidecar["volumeMounts"]
    assert {"name": "metrics-volume", "emptyDir": {}} in pod["spec"]["volumes"]
    assert pod["spec"]["shareProcessNamespace"] is True
    labels = pod["metadata"]["labels"]
    assert labels["katib.kubeflow.org/trial"] == "t1" and labels["job-name"] == "t1"
    assert labels["katib.kubeflow.org/experiment"] == "exp"
    env = {
        "name": "KATIB_TRIAL_NAME",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['katib.kubeflow.org/trial']"}},
    }
    assert primary["env"] == [env]


def test_file_json_with_filters_and_additional_metrics() -> None:
    trial = stdout_trial(collector="File")
    trial["spec"]["objective"]["additionalMetricNames"] = ["loss", "f1"]
    source = {
        "fileSystemPath": {"path": "/var/log/katib/m.json", "kind": "File", "format": "JSON"},
        "filter": {"metricsFormat": ["(\\w+)=(\\d+)", "(\\w+):(\\d+)"]},
    }
    trial["spec"]["metricsCollector"]["source"] = source
    containers = _containers(_pod_of(trial))
    args = containers["metrics-logger-and-collector"]["args"]
    assert args == [
        "-t", "t1", "-m", "accuracy;loss;f1", "-o-type", "maximize", "-s-db", DB,
        "-path", "/var/log/katib/m.json", "-f", "(\\w+)=(\\d+);(\\w+):(\\d+)", "-format", "JSON",
    ]  # fmt: skip
    assert containers["training-container"]["args"] == [f"{TRAINING} && {COMPLETED}"]


def test_wait_all_processes_from_katib_config_is_the_w_flag() -> None:
    data = harness.shipped_config_data()
    data["runtime"]["metricsCollectors"][0]["waitAllProcesses"] = False
    pod = _pod_of(stdout_trial(), StaticConfig(parse_katib_config(data)))
    args = _containers(pod)["metrics-logger-and-collector"]["args"]
    assert args[-2:] == ["-w", "false"]


def test_tensorflow_event_mounts_the_directory() -> None:
    trial = stdout_trial(collector="TensorFlowEvent")
    path = {"path": "/var/log/katib/tfevent/", "kind": "Directory"}
    trial["spec"]["metricsCollector"]["source"] = {"fileSystemPath": path}
    containers = _containers(_pod_of(trial))
    sidecar = containers["metrics-collector"]
    assert sidecar["image"] == "ghcr.io/kubeflow/katib/tfevent-metrics-collector:latest"
    assert sidecar["args"] == [*_base_args(), "-path", "/var/log/katib/tfevent/"]
    assert sidecar["resources"]["limits"]["memory"] == "1Gi"
    mount = {"name": "metrics-volume", "mountPath": "/var/log/katib/tfevent/"}
    assert mount in containers["training-container"]["volumeMounts"]
    completed = "echo completed > /var/log/katib/tfevent/$$$$.pid"
    assert containers["training-container"]["args"] == [f"{TRAINING} && {completed}"]


@pytest.mark.parametrize("path", [None, {"path": "/out", "kind": "Directory"}])
def test_custom_runs_the_users_container_unwrapped(path: Manifest | None) -> None:
    trial = stdout_trial(collector="Custom")
    custom = {"name": "my-collector", "image": "me/collector:1", "args": ["--x"]}
    trial["spec"]["metricsCollector"]["collector"]["customCollector"] = custom
    if path is not None:
        trial["spec"]["metricsCollector"]["source"] = {"fileSystemPath": path}
    pod = _pod_of(trial)
    containers = _containers(pod)
    assert {k: v for k, v in containers["my-collector"].items() if k != "volumeMounts"} == custom
    assert containers["training-container"]["command"][0] == "python3", "not wrapped"
    volumes = [v["name"] for v in pod["spec"].get("volumes") or []]
    assert volumes == (["metrics-volume"] if path else [])


def test_a_kind_katib_config_lacks_is_refused_with_katibs_message() -> None:
    cluster, stored = trial_world(stdout_trial(collector="PrometheusMetric"))
    response = answer(admission(cluster), job_pod(created_job(cluster, stored)))
    assert not response["allowed"] and response["status"]["code"] == 400
    assert response["status"]["message"] == (
        "failed to find metrics collector config for kind: PrometheusMetric in ConfigMap: "
        "katib-config"
    )


@pytest.mark.parametrize("kind", ["Push", "None"])
def test_push_and_none_get_labels_and_env_but_no_sidecar(kind: str) -> None:
    pod = _pod_of(stdout_trial(collector=kind))
    containers = _containers(pod)
    assert list(containers) == ["training-container"]
    assert containers["training-container"]["env"][0]["name"] == "KATIB_TRIAL_NAME"
    assert "shareProcessNamespace" not in pod["spec"]
    assert pod["metadata"]["labels"]["katib.kubeflow.org/trial"] == "t1"


def test_early_stopping_rules_and_the_service_address() -> None:
    rules = [
        {"name": "accuracy", "value": "0.6", "comparison": "less", "startStep": 5},
        {"name": "loss", "value": "2", "comparison": "greater"},
    ]
    containers = _containers(_pod_of(stdout_trial(earlyStoppingRules=rules)))
    args = containers["metrics-logger-and-collector"]["args"]
    assert args[-6:] == [
        "-stop-rule", "accuracy;0.6;less;5", "-stop-rule", "loss;2;greater;0",
        "-s-earlystop", "exp-random.kubeflow:6788",
    ]  # fmt: skip
    check = (
        "if test -f /var/log/katib/$$$$.pid && [ $(head -n 1 /var/log/katib/$$.pid) = "
        "early-stopped ]; then echo Training Container was Early Stopped; else echo Training "
        "Container was Failed; exit 1; fi"
    )
    redirect = "1>/var/log/katib/metrics.log 2>&1"
    assert containers["training-container"]["args"] == [
        f"{TRAINING} {redirect} || {check} && {COMPLETED}"
    ]


def test_early_stopping_without_an_experiment_label_is_an_invalid_suggestion_name() -> None:
    trial = stdout_trial(
        earlyStoppingRules=[{"name": "accuracy", "value": "1", "comparison": "less"}]
    )
    trial["metadata"]["labels"] = {}
    cluster, stored = trial_world(trial)
    response = answer(admission(cluster), job_pod(created_job(cluster, stored)))
    assert response["status"]["message"] == "invalid suggestion name"


def test_a_shell_command_keeps_its_shell() -> None:
    container = {"name": "c", "command": ["bash", "-c"], "args": ["python main.py"]}
    result = wrapped(container, "StdOut", "metric.log", ".", rules=False)
    assert result["command"] == ["bash", "-c"]
    assert result["args"] == ["python main.py 1>metric.log 2>&1 && echo completed > $$$$.pid"]
    plain = wrapped(
        {"name": "c", "command": ["python", "main.py"]}, "StdOut", "metric.log", ".", rules=False
    )
    assert plain == {**plain, "command": ["sh", "-c"], "args": result["args"]}


def test_the_suggestion_trial_dir_mounts_the_suggestions_claim() -> None:
    cluster, stored = trial_world()
    suggestion = cluster.get(_ref("Suggestion", "exp"))
    suggestion["spec"]["algorithm"]["algorithmSettings"] = [
        {"name": "suggestion_trial_dir", "value": "/var/log/katib/checkpoints/"}
    ]
    cluster.update(suggestion)
    pod = mutated(admission(cluster), job_pod(created_job(cluster, stored)))
    mount = {
        "name": "suggestion-volume",
        "mountPath": "/var/log/katib/checkpoints/",
        "subPath": "exp/t1",
    }
    assert mount in _containers(pod)["training-container"]["volumeMounts"]
    claim = {"name": "suggestion-volume", "persistentVolumeClaim": {"claimName": "exp-random"}}
    assert claim in pod["spec"]["volumes"]


def test_a_pod_outside_the_primary_labels_gets_labels_and_env_only() -> None:
    pod = _pod_of(stdout_trial(primaryPodLabels={"training.kubeflow.org/job-role": "master"}))
    assert list(_containers(pod)) == ["training-container"]
    assert pod["metadata"]["labels"]["katib.kubeflow.org/trial"] == "t1"


def test_security_context_is_copied_when_katib_config_says_so() -> None:
    data = harness.shipped_config_data()
    data["init"]["controller"]["injectSecurityContext"] = True
    trial = stdout_trial()
    context = {"runAsUser": 1000}
    trial["spec"]["runSpec"]["spec"]["template"]["spec"]["containers"][0]["securityContext"] = (
        context
    )
    pod = _pod_of(trial, StaticConfig(parse_katib_config(data)))
    assert _containers(pod)["metrics-logger-and-collector"]["securityContext"] == context


def test_pods_that_are_no_trials_are_left_unchanged() -> None:
    cluster, _ = trial_world()
    admitter = admission(cluster)
    plain = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    replica = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}
    gone_job = {"apiVersion": "batch/v1", "kind": "Job", "name": "gone", "uid": "u"}
    for owners in ([], [replica], [gone_job], [{"kind": 3}]):
        pod = {**plain, "metadata": {"name": "p", "ownerReferences": owners}}
        response = answer(admitter, pod)
        assert response["allowed"] and "patch" not in response, owners


def test_refusals_name_the_problem() -> None:
    cluster, stored = trial_world()
    admitter = admission(cluster)
    job = created_job(cluster, stored)
    pod = job_pod(job)
    pod["spec"]["containers"][0]["name"] = "other"
    response = answer(admitter, pod)
    assert response["status"]["code"] == 400
    assert response["status"]["message"].startswith(
        "unable to find primary container in mutated pod containers: primary container: "
        "'training-container'"
    )
    pod = job_pod(job)
    del pod["spec"]["containers"][0]["command"]
    message = answer(admitter, pod)["status"]["message"]
    assert "has no command" in message and "trial template" in message


def test_missing_trial_experiment_or_suggestion() -> None:
    cluster, stored = trial_world()
    pod = job_pod(created_job(cluster, stored))
    cluster.delete(
        _ref("Experiment", "exp"), cluster.get(_ref("Experiment", "exp"))["metadata"]["uid"]
    )
    response = answer(admission(cluster), pod)
    assert response["status"] == {
        "code": 400,
        "message": 'Experiment "exp" not found in namespace "kubeflow"',
    }
    trial_ref = {"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "name": "t", "uid": "u"}
    orphan = {**pod, "metadata": {"name": "ghost", "ownerReferences": [trial_ref]}}
    response = answer(admission(cluster), orphan)  # the pod is the run object: Trial "ghost"
    assert response["status"]["code"] == 500
    assert response["status"]["message"] == 'Trial "ghost" not found in namespace "kubeflow"'


def test_only_create_is_mutated() -> None:
    cluster, stored = trial_world()
    pod = job_pod(created_job(cluster, stored))
    for operation in ("UPDATE", "DELETE", "CONNECT"):
        response = answer(admission(cluster), pod, operation=operation)
        assert response["allowed"] and "patch" not in response


class _Counting(DelegatingCluster):
    def __init__(self, inner: FakeCluster) -> None:
        super().__init__(inner)
        self.reads = 0

    def get(self, ref: ObjectRef) -> Manifest:
        self.reads += 1
        return self.inner.get(ref)


def test_the_owner_walk_is_bounded_and_survives_a_cycle() -> None:
    cluster, _ = trial_world()
    for name, other in (("a", "b"), ("b", "a")):
        ref = {"apiVersion": "batch/v1", "kind": "Job", "name": other, "uid": other}
        meta = {"name": name, "namespace": "kubeflow", "ownerReferences": [ref]}
        cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {}})
    counting = _Counting(cluster)
    admitter = admission(cluster)
    admitter = Admission(counting, admitter.config, DB)
    job_a = {"apiVersion": "batch/v1", "kind": "Job", "name": "a", "uid": "a"}
    cyclic = {"metadata": {"ownerReferences": [job_a]}, "spec": {"containers": [{"name": "c"}]}}
    response = answer(admitter, cyclic)
    assert response["allowed"] and "patch" not in response and counting.reads == 2
    many = [{**job_a, "name": f"gone-{n}"} for n in range(1000)]
    crowded = {"metadata": {"ownerReferences": many}, "spec": {"containers": [{"name": "c"}]}}
    counting.reads = 0
    assert answer(admitter, crowded)["allowed"] and counting.reads == MAX_READS
