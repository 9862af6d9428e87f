"""Plays, over HTTP, the parts of a cluster a controller test needs and kmock does not run.

A kubelet (a Deployment becomes ``Available``), a volume binder (a PVC becomes ``Bound``),
Katib's suggestion client (a Suggestion's new ``spec.requests`` get assignments in
``status.suggestions``; optional, since the controller asks the services itself) and its trial
controller (a Trial succeeds with an observation), and
the API server's garbage collector (a deleted Suggestion's dependents go). Each ``tick`` looks
at the mock's objects and makes the writes those components would make, through the same
JSON API the controller uses.

Also the set-up a lifecycle on kmock shares: the katib-config ConfigMap (``put_katib_config``),
the example Experiment as the webhook would admit it (``defaulted_example``) and an object's
condition pairs (``conditions``).
"""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path
from typing import Any

from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from katib_resume.core.defaults import default_experiment
from katib_resume.core.model import Experiment
from katib_resume.core.ports import NotFound
from tests.support.harness import load
from tests.support.kube_mock import MockServer, config_map

Json = dict[str, Any]
KATIB = "/apis/kubeflow.org/v1beta1"
SHIPPED_CONFIG = Path(__file__).resolve().parents[2] / "app" / "data" / "katib-config.yaml"


def put_katib_config(transport: Transport, text: str | None = None) -> None:
    """Create ``kubeflow/katib-config`` holding ``text`` (by default the shipped katib-config)."""
    body = config_map("kubeflow", SHIPPED_CONFIG.read_text("utf-8") if text is None else text)
    transport.request("POST", "/api/v1/namespaces/kubeflow/configmaps", body=body)


def defaulted_example(name: str = "from-volume-resume") -> Json:
    """An example Experiment with Katib's defaults filled in, as the webhook admits it."""
    exp = default_experiment(Experiment.model_validate(load(f"{name}.yaml")))
    body: Json = exp.model_dump(by_alias=True, exclude_none=True, mode="json")
    return body


def conditions(obj: Json) -> list[tuple[str, str]]:
    """The ``(type, status)`` pairs of an object's status conditions."""
    return [(c["type"], c["status"]) for c in (obj.get("status") or {}).get("conditions") or []]


class ClusterPlayer:
    """``suggestion_client=False`` leaves assignments to the controller under test (which then
    asks a real suggestion service over gRPC); ``trial_controller=False`` leaves the Trials to it
    (``controller --run-trials``)."""

    def __init__(
        self,
        server: MockServer,
        transport: Transport,
        *,
        suggestion_client: bool = True,
        trial_controller: bool = True,
    ) -> None:
        self.server, self.transport = server, transport
        self.plays_suggestion_client = suggestion_client
        self.plays_trial_controller = trial_controller
        self.numbers = itertools.count(1)

    def objects(self, resource: str) -> list[Json]:
        return list(self.server.call(lambda mock: mock.all(resource)))

    def patch(self, path: str, body: Json) -> None:
        self.transport.request("PATCH", path, body=body, content_type=MERGE_PATCH)

    def tick(self) -> None:
        self.kubelet()
        self.binder()
        if self.plays_suggestion_client:
            self.suggestion_client()
        if self.plays_trial_controller:
            self.trial_controller()
        self.garbage_collector()

    def kubelet(self) -> None:
        for deployment in self.objects("apps/v1/deployments"):
            meta = deployment["metadata"]
            conditions = (deployment.get("status") or {}).get("conditions") or []
            if meta.get("deletionTimestamp") or any(c["type"] == "Available" for c in conditions):
                continue
            path = f"/apis/apps/v1/namespaces/{meta['namespace']}/deployments/{meta['name']}"
            status = {"conditions": [{"type": "Available", "status": "True"}]}
            self.patch(f"{path}/status", {"status": status})

    def binder(self) -> None:
        for claim in self.objects("v1/persistentvolumeclaims"):
            meta = claim["metadata"]
            if (claim.get("status") or {}).get("phase") == "Bound":
                continue
            path = f"/api/v1/namespaces/{meta['namespace']}/persistentvolumeclaims/{meta['name']}"
            self.patch(f"{path}/status", {"status": {"phase": "Bound"}})

    def suggestion_client(self) -> None:
        for suggestion in self.objects("kubeflow.org/v1beta1/suggestions"):
            meta = suggestion["metadata"]
            have = list((suggestion.get("status") or {}).get("suggestions") or [])
            wanted = int((suggestion.get("spec") or {}).get("requests") or 0)
            if wanted <= len(have):
                continue
            for _ in range(wanted - len(have)):
                number = next(self.numbers)
                have.append(
                    {
                        "name": f"{meta['name']}-{number:04d}",
                        "parameterAssignments": [
                            {"name": "lr", "value": f"0.0{number % 9 + 1}"},
                            {"name": "momentum", "value": "0.9"},
                        ],
                    }
                )
            path = f"{KATIB}/namespaces/{meta['namespace']}/suggestions/{meta['name']}/status"
            self.patch(path, {"status": {"suggestions": have}})

    def trial_controller(self) -> None:
        for trial in self.objects("kubeflow.org/v1beta1/trials"):
            meta = trial["metadata"]
            conditions = (trial.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Succeeded" for c in conditions):
                continue
            objective = trial["spec"]["objective"]["objectiveMetricName"]
            status = {
                "conditions": [
                    {"type": "Created", "status": "True", "reason": "TrialCreated"},
                    {"type": "Succeeded", "status": "True", "reason": "TrialSucceeded"},
                ],
                "observation": {
                    "metrics": [{"name": objective, "latest": "0.5", "min": "0.5", "max": "0.5"}]
                },
            }
            path = f"{KATIB}/namespaces/{meta['namespace']}/trials/{meta['name']}/status"
            self.patch(path, {"status": status})

    def garbage_collector(self) -> None:
        """Delete namespaced dependents whose controller owner is gone (never a PV)."""
        owners = {
            (s["metadata"]["namespace"], s["metadata"]["uid"])
            for s in self.objects("kubeflow.org/v1beta1/suggestions")
        } | {
            (e["metadata"]["namespace"], e["metadata"]["uid"])
            for e in self.objects("kubeflow.org/v1beta1/experiments")
        }
        for resource, root in (
            ("apps/v1/deployments", "/apis/apps/v1"),
            ("v1/services", "/api/v1"),
            ("v1/persistentvolumeclaims", "/api/v1"),
            ("kubeflow.org/v1beta1/suggestions", KATIB),
            ("kubeflow.org/v1beta1/trials", KATIB),
        ):
            plural = resource.rsplit("/", 1)[1]
            for obj in self.objects(resource):
                meta = obj["metadata"]
                refs = meta.get("ownerReferences") or []
                if meta.get("deletionTimestamp"):
                    continue  # deleting already: its finalizer's owner is at work
                if refs and all((meta["namespace"], r["uid"]) not in owners for r in refs):
                    path = f"{root}/namespaces/{meta['namespace']}/{plural}/{meta['name']}"
                    with contextlib.suppress(NotFound):  # gone since the listing
                        self.transport.request("DELETE", path)
