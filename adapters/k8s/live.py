"""``LiveCluster``: the cluster port with every read sent to the API server.

The controller reads from its watch cache; an admission webhook must not. Its stale-volume check
answers "does this PersistentVolume exist *now*?", and a cache that lags by one watch event could
admit an Experiment onto a volume that another one still owns. The writes are
``KubeCluster``'s (guarded merge patches); only reads differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from adapters.k8s.cluster import KubeCluster
from adapters.k8s.resources import path_of, resource
from adapters.k8s.transport import Transport
from core.actions import ObjectRef
from core.kube import Manifest


class LiveCluster(KubeCluster):
    def __init__(self, transport: Transport) -> None:
        super().__init__(transport, kinds=())

    def get(self, ref: ObjectRef) -> Manifest:
        found = self.transport.request("GET", path_of(ref))
        return self._typed(ref.api_version, ref.kind, found)

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        query = [("labelSelector", ",".join(f"{k}={v}" for k, v in sorted(labels.items())))]
        answer = self.transport.request(
            "GET", resource(api_version, kind).collection(namespace), query=query if labels else ()
        )
        return [self._typed(api_version, kind, item) for item in answer.get("items") or ()]

    @staticmethod
    def _typed(api_version: str, kind: str, obj: Manifest) -> Manifest:
        if obj.get("kind") and obj.get("apiVersion"):
            return obj
        return {**obj, "apiVersion": api_version, "kind": kind}
