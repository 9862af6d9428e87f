"""Kubernetes' own controllers around the fake API server, advanced one ``tick`` at a time.

A ``FakeCluster`` alone is an API server with nobody else behind it: nothing binds a claim,
starts a pod or collects garbage later. ``FakeWorld`` adds the rest of Kubernetes that a
controller relies on, each simulated controller running once per ``tick()`` in this order:

1. the garbage collector (one pass: objects whose owners are all gone are deleted, so a chain
   of owners is collected one level per tick, behind the API server as in Kubernetes);
2. the PV controller's binder and dynamic provisioner (``volumes.py``);
3. the PV controller's reclaimer (``reclaim.py``);
4. the pvc- and pv-protection controllers (``reclaim.py``);
5. the Deployment controller and the kubelet (``kubelet.py``);
6. the Job controller (``jobs.py``), the kubelet of pods (``pods.py``), which runs their
   containers on the container runtime it is given (none: pods are not run), each pod in a
   working directory under ``<volume root>/../trials``, and the Job controller again, which
   writes each Job's status once a tick, after the kubelet: a pod that ended finishes its Job
   in the same tick.

Creating the world also installs the ``StorageObjectInUseProtection`` admission plugin on the
API server: the protection finalizers are only honest together with the controllers that
remove them (a fake API server alone would otherwise strand every deleted PVC). All writes go
through the API server without the fault gate, so resource versions move, watch events appear
and garbage collection runs for whatever these controllers remove. Their own faults (a late
garbage collector, a slow binder, a crashed kubelet) are armed on ``faults``
(``world_faults.py``).

The simulated node's filesystem lives under ``volume_root`` (``node.py``): ``volume_dir`` gives
the real directory a Deployment's pod would see in its volume.
"""

from __future__ import annotations

from pathlib import Path

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.fake.jobs import JobController
from katib_resume.adapters.fake.kubelet import Kubelet
from katib_resume.adapters.fake.node import ensure_dir
from katib_resume.adapters.fake.pods import PodKubelet
from katib_resume.adapters.fake.reclaim import Protection, Reclaimer, mounted_claims, protect
from katib_resume.adapters.fake.volumes import Binder, phase, pv_ref
from katib_resume.adapters.fake.world_faults import WorldFaults
from katib_resume.core.actions import ObjectRef
from katib_resume.core.ports import NotFound


class FakeWorld:
    def __init__(
        self,
        cluster: FakeCluster,
        volume_root: Path,
        ready_after_ticks: int = 1,
        *,
        default_storage_class: str = "standard",
        background_gc: bool = True,
        delete_any_hostpath: bool = False,
    ) -> None:
        self.cluster = cluster
        self.volume_root = Path(volume_root)
        self.volume_root.mkdir(parents=True, exist_ok=True)
        self.default_storage_class = default_storage_class
        self.background_gc = background_gc
        self.delete_any_hostpath = delete_any_hostpath
        self.ticks = 0
        api = cluster.api
        if protect not in api.admission:
            api.admission.append(protect)
        api.synchronous_gc = not background_gc
        self.binder = Binder(api, default_storage_class)
        self.reclaimer = Reclaimer(api, self.volume_root, delete_any_hostpath)
        self.protection = Protection(api)
        self.kubelet = Kubelet(api, ready_after_ticks)
        self.jobs = JobController(api)
        self.pods = PodKubelet(api, self.volume_root.parent / "trials")
        self.pods.warn = lambda ref, reason, message: cluster.record_event(
            ref, "Warning", reason, message
        )
        self.faults = WorldFaults()
        """Late, slow or crashed controllers (``world_faults.py``); never saved."""

    @property
    def ready_after_ticks(self) -> int:
        return self.kubelet.ready_after_ticks

    def tick(self, count: int = 1) -> None:
        """Run every simulated controller once, ``count`` times (unless ``faults`` hold one
        back, ``world_faults.py``)."""
        for _ in range(count):
            self.ticks += 1
            runs = self.faults.tick()
            if runs.crashed:
                self._crash_pods()
            if runs.gc:
                self.cluster.api.collect_orphans()
            if runs.binder:
                self.binder.run()
            self.reclaimer.run()
            self.protection.run()
            if runs.kubelet:
                self.kubelet.run()
            self.jobs.run(write_status=False)  # a new Job's pod, started at once by the kubelet
            if runs.kubelet:  # a crashed kubelet starts and reports no pod either
                self.pods.run()
            self.jobs.run()  # the Jobs' status, once: a pod that just ended ends its Job now

    def _crash_pods(self) -> None:
        """The kubelet died: every Deployment's pod is down, its status says so at once."""
        for deployment in self.cluster.api.observe("apps/v1", "Deployment", None):
            meta = deployment["metadata"]
            pod = self.kubelet.pods.get(meta["uid"])
            held = pod is not None and pod.held  # a pod a test holds down stays held
            self.kubelet.set_unavailable(meta["namespace"], meta["name"], hold=held)

    def save(self, state_dir: Path) -> Path:
        """Commit this world and its cluster to ``state_dir`` (``persistence.save``)."""
        from katib_resume.adapters.fake.persistence import save

        return save(self, state_dir)

    def volume_dir(self, namespace: str, deployment_name: str) -> Path | None:
        """The real directory of the PV bound to the (first) PVC the Deployment mounts.

        Created on demand; ``None`` if the Deployment mounts no PVC, the PVC is not bound yet,
        or its volume has no path on the node. ``NotFound`` if there is no such Deployment.
        """
        store = self.cluster.store
        deployment = store.find(ObjectRef("apps/v1", "Deployment", namespace, deployment_name))
        if deployment is None:
            raise NotFound(f"Deployment {namespace}/{deployment_name} not found")
        claims = mounted_claims(deployment)
        if not claims:
            return None
        pvc = store.find(ObjectRef("v1", "PersistentVolumeClaim", namespace, claims[0]))
        if pvc is None or phase(pvc) != "Bound":
            return None
        pv = store.find(pv_ref(pvc["spec"]["volumeName"]))
        return None if pv is None else ensure_dir(self.volume_root, pv)
