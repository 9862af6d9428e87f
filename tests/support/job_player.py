"""Kubernetes' Job controller and Katib's metrics collector, played over the API for tests.

Each new Job (of a live Trial) reports one ``loss`` row for its Trial to the katib-db-manager
stand-in, then completes; a Job whose Trial is gone is deleted (the garbage collector).
"""

from __future__ import annotations

from katib_resume.adapters.k8s.transport import Transport
from tests.support.cluster_player import ClusterPlayer
from tests.support.db_manager import DbManagerServer
from tests.support.kube_mock import MockServer


class JobPlayer:
    """The Job controller and the metrics collector, over the API: a Job reports, then succeeds."""

    def __init__(self, cluster: ClusterPlayer, db: DbManagerServer) -> None:
        self.cluster, self.db = cluster, db
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
            loss = f"0.{len(self.losses) + 10}"
            self.losses[meta["name"]] = loss
            row = {"time_stamp": "2026-01-01T00:00:00Z", "metric": {"name": "loss", "value": loss}}
            self.db.rows.setdefault(meta["name"], []).append(row)
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
