"""``LiveCluster``: the cluster port with every read sent to the API server.

The controller reads from its watch cache; an admission webhook must not. Its stale-volume check
answers "does this PersistentVolume exist *now*?", and a cache that lags by one watch event could
admit an Experiment onto a volume that another one still owns. The writes are
``KubeCluster``'s (guarded merge patches); only reads differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from katib_resume.adapters.k8s.cluster import KubeCluster
from katib_resume.adapters.k8s.resources import path_of, resource
from katib_resume.adapters.k8s.transport import Transport
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest


class LiveCluster(KubeCluster):
    def __init__(self, transport: Transport) -> None:
        super().__init__(transport, kinds=())

    def get(self, ref: ObjectRef) -> Manifest:
        return resource(ref.api_version, ref.kind).typed(
            self.transport.request("GET", path_of(ref))
        )

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        query = [("labelSelector", ",".join(f"{k}={v}" for k, v in sorted(labels.items())))]
        of_kind = resource(api_version, kind)
        answer = self.transport.request(
            "GET", of_kind.collection(namespace), query=query if labels else ()
        )
        return [of_kind.typed(item) for item in answer.get("items") or ()]
