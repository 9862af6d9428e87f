"""Trial pods for the pod webhook's tests: a Trial, its Job and the Job's pod, as Kubernetes
makes them, and the review the API server sends for the pod's CREATE.

``trial_world`` holds, in namespace ``kubeflow``: the Experiment ``exp`` and its Suggestion
(algorithm ``random``), and a Trial of Katib's fixture shape (``tests.support.trials``) with
the given collector. ``job_pod`` is the pod the Job controller would create for it.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from katib_resume.adapters.fake import FakeCluster
from katib_resume.app.webhook import MUTATE_POD, Admission, Incoming, JsonLog, handle
from katib_resume.core.manifest import Manifest
from tests.support.trials import new_trial
from tests.support.webhook import apply_patch, namespace, shipped_config

NAMESPACE = "kubeflow"
EXPERIMENT = "exp"
POD_KIND = {"group": "", "version": "v1", "kind": "Pod"}
DB = "katib-db-manager.kubeflow:6789"


def trial_world(trial: Manifest | None = None) -> tuple[FakeCluster, Manifest]:
    """A fake cluster with the Experiment, Suggestion and Trial; returns the stored Trial."""
    cluster = FakeCluster()
    labels = {"katib.kubeflow.org/metrics-collector-injection": "enabled"}
    cluster.create(namespace(NAMESPACE, labels))
    meta = {"name": EXPERIMENT, "namespace": NAMESPACE}
    algorithm = {"algorithmName": "random"}
    for kind in ("Experiment", "Suggestion"):
        body = {"apiVersion": "kubeflow.org/v1beta1", "kind": kind, "metadata": dict(meta)}
        cluster.create({**body, "spec": {"algorithm": algorithm}})
    stored = cluster.create(trial if trial is not None else stdout_trial())
    return cluster, stored


def stdout_trial(name: str = "t1", collector: str = "StdOut", **spec: Any) -> Manifest:
    trial = new_trial(name, collector, NAMESPACE)
    trial["spec"].update(spec)
    return trial


def owner(obj: Manifest) -> Manifest:
    meta = obj["metadata"]
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    return {**ref, "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def created_job(cluster: FakeCluster, trial: Manifest) -> Manifest:
    """The Trial's run object as the controller creates it: its runSpec, owned by it."""
    job = copy.deepcopy(trial["spec"]["runSpec"])
    job["metadata"]["ownerReferences"] = [owner(trial)]
    return cluster.create(job)


def job_pod(job: Manifest) -> Manifest:
    """The pod the Job controller sends for CREATE: the template, owned by the Job."""
    template = copy.deepcopy(job["spec"]["template"])
    meta: Manifest = {"generateName": f"{job['metadata']['name']}-", "namespace": NAMESPACE}
    meta |= {"labels": {"job-name": job["metadata"]["name"]}, "ownerReferences": [owner(job)]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}


def pod_review(pod: Any, *, operation: str = "CREATE", uid: str = "pod-uid-1") -> Manifest:
    request = {
        "uid": uid,
        "kind": POD_KIND,
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": operation,
        "namespace": NAMESPACE,
        "userInfo": {"username": "system:serviceaccount:kube-system:job-controller"},
        "object": None if operation == "DELETE" else pod,
        "oldObject": pod if operation in ("UPDATE", "DELETE") else None,
        "dryRun": False,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def admission(cluster: FakeCluster, config: Any = None) -> Admission:
    return Admission(cluster, config or shipped_config(), DB)


def answer(admitter: Admission, pod: Any, **review: Any) -> Manifest:
    """The AdmissionReview response for ``pod`` on ``/mutate-pod``."""
    body = json.dumps(pod_review(pod, **review)).encode()
    reply = handle(admitter, JsonLog(), Incoming("POST", MUTATE_POD, "application/json", body))
    assert reply.status == 200, reply.body
    response: Manifest = reply.body["response"]
    return response


def mutated(admitter: Admission, pod: Manifest) -> Manifest:
    """The pod as the API server stores it after our patch; fails when the pod is denied."""
    response = answer(admitter, pod)
    assert response["allowed"], response
    if "patch" not in response:
        return pod
    patched: Manifest = apply_patch(pod, json.loads(base64.b64decode(response["patch"])))
    return patched
