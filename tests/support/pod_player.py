"""A Job's pod, admitted through our pod webhook and run by Katib's metrics collector, for tests.

What a cluster does between a Job and its Trial's observation, played over the API: the Job
controller's pod (the Job's template, owned by the Job) goes through ``/mutate-pod`` of
``app.webhook`` exactly as the API server sends it, with the webhook's reads made live against
the same API server (``LiveCluster``), and the answered patch is applied. Then the pod "runs":
the injected sidecar is found and checked (Katib's image, ``-t`` the Trial, ``-s-db`` the
db-manager), and plays Katib's collector: it reports the training's rows under ``-t`` to the
``-s-db`` address over gRPC, or the single ``unavailable`` row when the objective (the first
``-m`` metric) is missing, as Katib's collector does. A ``Push`` pod has no sidecar: its
training code reports under the ``KATIB_TRIAL_NAME`` the webhook put in its env.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Sequence
from typing import Any

from katib_resume.adapters.grpc.observations import GrpcObservationLog
from katib_resume.adapters.k8s.live import LiveCluster
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.app.embedded.runtime import StaticConfig
from katib_resume.app.webhook import MUTATE_POD, Admission, Incoming, JsonLog, handle
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.ports import Cluster
from tests.support import harness
from tests.support.delegating import DelegatingCluster
from tests.support.pods import owner, pod_review
from tests.support.webhook import apply_patch

SIDECAR = "metrics-logger-and-collector"
ZERO_TIME = "0001-01-01T00:00:00Z"


class PodPlayer:
    """``stand_ins``: objects the webhook reads that the test keeps out of the API server (the
    Experiment and Suggestion of a bare Trial, which the controller under test would otherwise
    reconcile); every other read is live."""

    def __init__(
        self, transport: Transport, db_address: str, stand_ins: Sequence[Manifest] = ()
    ) -> None:
        config = StaticConfig(harness.shipped_config())
        cluster = _StandIns(LiveCluster(transport), stand_ins)
        self.admission = Admission(cluster, config, db_address)
        self.db_address = db_address
        self.admitted: dict[str, Manifest] = {}
        self.reports = 0
        """ReportObservationLog calls made by the played collectors (not by the controller)."""

    def admit(self, job: Manifest) -> Manifest:
        """The Job's pod as the API server would store it, after our webhook."""
        meta = job["metadata"]
        pod_meta = {"generateName": f"{meta['name']}-", "namespace": meta["namespace"]}
        pod_meta |= {"labels": {"job-name": meta["name"]}, "ownerReferences": [owner(job)]}
        spec = job["spec"]["template"]["spec"]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}
        review = pod_review(pod, uid=f"pod-{meta['name']}")
        review["request"]["namespace"] = meta["namespace"]
        incoming = Incoming("POST", MUTATE_POD, "application/json", json.dumps(review).encode())
        reply = handle(self.admission, JsonLog(), incoming)
        response = reply.body["response"]
        assert response["allowed"], response
        ops = json.loads(base64.b64decode(response.get("patch") or b"W10="))
        admitted: Manifest = apply_patch(pod, ops)
        self.admitted[meta["name"]] = admitted
        return admitted

    def collect(self, pod: Manifest, rows: Sequence[MetricRow]) -> None:
        """Katib's collector in the pod's sidecar (or the Push training code) reports ``rows``."""
        containers = {c["name"]: c for c in pod["spec"]["containers"]}
        namespace = pod["metadata"]["namespace"]
        if SIDECAR not in containers:
            trial = pod["metadata"]["labels"]["katib.kubeflow.org/trial"]
            self._report(self.db_address, TrialKey(namespace, trial), rows)
            return
        flags = _flags(containers[SIDECAR]["args"])
        objective = flags["-m"].split(";")[0]
        if not any(row.name == objective for row in rows):
            rows = [MetricRow(ZERO_TIME, objective, "unavailable")]
        self._report(flags["-s-db"], TrialKey(namespace, flags["-t"]), rows)

    def _report(self, address: str, key: TrialKey, rows: Sequence[MetricRow]) -> None:
        self.reports += 1
        log = GrpcObservationLog(address, timeout=5)
        try:
            log.report(key, rows)
        finally:
            log.close()


class _StandIns(DelegatingCluster):
    def __init__(self, inner: Cluster, objects: Sequence[Manifest]) -> None:
        super().__init__(inner)
        self.objects = {(o["kind"], o["metadata"]["name"]): o for o in objects}

    def get(self, ref: ObjectRef) -> Manifest:
        found = self.objects.get((ref.kind, ref.name))
        return copy.deepcopy(found) if found is not None else self.inner.get(ref)


def sidecar_flags(pod: Manifest) -> dict[str, str]:
    """The injected collector's flags (name to value); fails when there is no sidecar."""
    [sidecar] = [c for c in pod["spec"]["containers"] if c["name"] == SIDECAR]
    return _flags(sidecar["args"])


def _flags(args: list[Any]) -> dict[str, str]:
    return {str(args[i]): str(args[i + 1]) for i in range(0, len(args) - 1, 2)}
