"""The kubelet and the Deployment controller, simulated: when a Deployment becomes available.

Each Deployment stands for one pod. The pod starts only when every PVC its template mounts
exists, is ``Bound`` and is not being deleted (a pod that already runs keeps a PVC that is then
deleted: that is what pvc-protection protects); until then, as in Kubernetes, the Deployment
never becomes available. Once it can start, it is ready after ``ready_after_ticks`` ticks, and
the status is what the Deployment controller writes: ``Available`` True with
``MinimumReplicasAvailable`` and the ready replicas, or ``Available`` False with
``MinimumReplicasUnavailable``.

A test makes the pod fail: ``set_unavailable`` crashes it now (it restarts and is ready again
after ``ready_after_ticks`` ticks, unless ``hold`` keeps it down until ``release``), and
``set_flapping`` crashes it every time it has been available for ``up_ticks`` ticks. The
per-pod counters are the kubelet's timers, saved with the cluster (``to_dict``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from katib_resume.adapters.fake.api import ApiServer
from katib_resume.adapters.fake.reclaim import mounted_claims
from katib_resume.adapters.fake.volumes import deleting, phase
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest, format_time

AVAILABLE = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
UNAVAILABLE = (
    "False",
    "MinimumReplicasUnavailable",
    "Deployment does not have minimum availability.",
)


@dataclass
class Pod:
    """The kubelet's view of one Deployment's pod: ticks since it could start, and faults."""

    started: int = 0
    up: int = 0
    held: bool = False
    flap_after: int | None = None


class Kubelet:
    def __init__(self, api: ApiServer, ready_after_ticks: int) -> None:
        if ready_after_ticks < 0:
            raise ValueError(f"ready_after_ticks must be >= 0, not {ready_after_ticks}")
        self.api = api
        self.ready_after_ticks = ready_after_ticks
        self.pods: dict[str, Pod] = {}

    def run(self) -> None:
        deployments = self.api.observe("apps/v1", "Deployment", None)
        for deployment in deployments:
            pod = self.pods.setdefault(deployment["metadata"]["uid"], Pod())
            self._write(deployment, self._advance(deployment, pod))
        live = {d["metadata"]["uid"] for d in deployments}
        self.pods = {uid: pod for uid, pod in self.pods.items() if uid in live}

    def set_unavailable(self, namespace: str, name: str, hold: bool = False) -> None:
        """The pod crashes now; with ``hold`` it stays down until ``release``."""
        deployment = self.api.get(ObjectRef("apps/v1", "Deployment", namespace, name))
        pod = self.pods.setdefault(deployment["metadata"]["uid"], Pod())
        pod.started, pod.up, pod.held = 0, 0, hold
        self._write(deployment, False)

    def release(self, namespace: str, name: str) -> None:
        """A held pod may start again (it is ready ``ready_after_ticks`` ticks later)."""
        deployment = self.api.get(ObjectRef("apps/v1", "Deployment", namespace, name))
        self.pods.setdefault(deployment["metadata"]["uid"], Pod()).held = False

    def set_flapping(self, namespace: str, name: str, up_ticks: int | None) -> None:
        """Crash the pod each time it has been available ``up_ticks`` ticks (``None``: stop)."""
        deployment = self.api.get(ObjectRef("apps/v1", "Deployment", namespace, name))
        self.pods.setdefault(deployment["metadata"]["uid"], Pod()).flap_after = up_ticks

    def _advance(self, deployment: Manifest, pod: Pod) -> bool:
        """One tick of the pod; whether it is ready afterwards."""
        if pod.held or not self._can_run(deployment, pod):
            pod.started, pod.up = 0, 0
            return False
        pod.started += 1
        if pod.started < self.ready_after_ticks:
            return False
        pod.up += 1
        if pod.flap_after is not None and pod.up > pod.flap_after:
            pod.started, pod.up = 0, 0
            return False
        return True

    def _can_run(self, deployment: Manifest, pod: Pod) -> bool:
        namespace = deployment["metadata"]["namespace"]
        for claim in mounted_claims(deployment):
            pvc = self.api.store.find(ObjectRef("v1", "PersistentVolumeClaim", namespace, claim))
            if pvc is None or phase(pvc) != "Bound" or (deleting(pvc) and not pod.started):
                return False
        return True

    def _write(self, deployment: Manifest, ready: bool) -> None:
        """Write the Deployment controller's status if availability or generation changed."""
        status: Manifest = deployment.get("status") or {}
        conditions = status.get("conditions", [])
        old: Manifest = next((c for c in conditions if c.get("type") == "Available"), {})
        value, reason, message = AVAILABLE if ready else UNAVAILABLE
        generation = deployment["metadata"]["generation"]
        if old.get("status") == value and status.get("observedGeneration") == generation:
            return
        now = format_time(self.api.clock.now())
        since = old.get("lastTransitionTime", now) if old.get("status") == value else now
        condition = {"type": "Available", "status": value, "reason": reason, "message": message}
        condition.update(lastUpdateTime=now, lastTransitionTime=since)
        new = _counts(deployment, ready)
        new.update(observedGeneration=generation, conditions=[condition])
        self.api.update_status(ObjectRef.of(deployment), new, None, copy=False)  # answer unread

    def to_dict(self) -> dict[str, Any]:
        return {uid: asdict(pod) for uid, pod in self.pods.items()}

    def load(self, data: dict[str, Any]) -> None:
        self.pods = {uid: Pod(**fields) for uid, fields in data.items()}


def _counts(deployment: Manifest, ready: bool) -> Manifest:
    replicas = int((deployment.get("spec") or {}).get("replicas", 1))
    if ready:
        return {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
    return {"replicas": replicas, "unavailableReplicas": replicas}
