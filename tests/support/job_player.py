"""Kubernetes' Job controller and Katib's metrics collector, played over the API for tests.

Each new Job (of a live Trial) gets its pod, admitted through our pod webhook
(``tests.support.pod_player``: the sidecar must be there, pointed at the Trial and the
katib-db-manager stand-in), whose collector reports one ``loss`` row over gRPC; then the Job
completes. A Job whose Trial is gone is deleted (the garbage collector).
"""

from __future__ import annotations

from katib_resume.adapters.k8s.transport import Transport
from katib_resume.core.observation import MetricRow
from tests.support.cluster_player import ClusterPlayer
from tests.support.db_manager import DbManagerServer
from tests.support.kube_mock import MockServer
from tests.support.pod_player import PodPlayer, sidecar_flags


class JobPlayer:
    """The Job controller and the metrics collector, over the API: a Job reports, then succeeds."""

    def __init__(self, cluster: ClusterPlayer, db: DbManagerServer) -> None:
        self.cluster, self.db = cluster, db
        self.pods = PodPlayer(cluster.transport, db.address)
        self.losses: dict[str, str] = {}

    def tick(self) -> None:
        live = self.cluster.objects("kubeflow.org/v1beta1/trials")
        trials = {trial["metadata"]["uid"] for trial in live}
        for job in self.cluster.objects("batch/v1/jobs"):
            meta = job["metadata"]
            path = f"/apis/batch/v1/namespaces/{meta['namespace']}/jobs/{meta['name']}"
            if not {r["uid"] for r in meta.get("ownerReferences") or []} & trials:
                self.cluster.transport.request("DELETE", path)  # garbage collection
                continue
            if (job.get("status") or {}).get("conditions"):
                continue
            if meta["name"] in self.losses:
                continue  # reported, the completion below not seen yet
            pod = self.pods.admit(job)
            flags = sidecar_flags(pod)
            assert (flags["-t"], flags["-s-db"]) == (meta["name"], self.db.address), flags
            loss = f"0.{len(self.losses) + 10}"
            self.losses[meta["name"]] = loss
            self.pods.collect(pod, [MetricRow("2026-01-01T00:00:00Z", "loss", loss)])
            status = {"conditions": [{"type": "Complete", "status": "True"}]}
            self.cluster.patch(path, {"status": status})


class TrialsPlayer(ClusterPlayer):
    """The cluster for a controller that runs the Trials itself: no trial controller is played,
    the Job controller and metrics collector are."""

    def __init__(
        self,
        server: MockServer,
        transport: Transport,
        db: DbManagerServer,
        *,
        suggestion_client: bool = True,
    ) -> None:
        super().__init__(
            server, transport, suggestion_client=suggestion_client, trial_controller=False
        )
        self.jobs = JobPlayer(self, db)

    def tick(self) -> None:
        super().tick()
        self.jobs.tick()
