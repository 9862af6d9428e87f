"""Where each kind lives on the API server: group, version, plural, scope and URL paths.

The adapter speaks to the API server in plain JSON over the official client's transport, so
one table names every kind the controller touches; a kind that is not in the table is a
programming error, reported as such rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.resources import RBAC_API_VERSION


@dataclass(frozen=True, slots=True)
class Resource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def root(self) -> str:
        """``/api/v1`` for the core group, ``/apis/<group>/<version>`` for the others."""
        return "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"

    def collection(self, namespace: str | None) -> str:
        """The collection's path; all namespaces when ``namespace`` is None."""
        if self.namespaced and namespace:
            return f"{self.root}/namespaces/{quote(namespace, safe='')}/{self.plural}"
        return f"{self.root}/{self.plural}"

    def item(self, namespace: str | None, name: str) -> str:
        return f"{self.collection(namespace)}/{quote(name, safe='')}"

    def typed(self, obj: Manifest) -> Manifest:
        """``obj`` with its ``apiVersion`` and ``kind``: the items of a list come without them
        (and some servers answer writes without them too)."""
        if obj.get("kind") and obj.get("apiVersion"):
            return obj
        return {**obj, "apiVersion": self.api_version, "kind": self.kind}


RUN_KINDS = (
    ("batch/v1", "Job"),
    ("kubeflow.org/v1", "TFJob"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v1", "MPIJob"),
    ("kubeflow.org/v1", "XGBoostJob"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
)
"""The Trial run-object kinds the adapter knows (Katib's standalone ``trialResources``)."""

_TABLE = (
    Resource("kubeflow.org/v1beta1", "Experiment", "experiments", True),
    Resource("kubeflow.org/v1beta1", "Suggestion", "suggestions", True),
    Resource("kubeflow.org/v1beta1", "Trial", "trials", True),
    Resource("apps/v1", "Deployment", "deployments", True),
    Resource("v1", "Service", "services", True),
    Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True),
    Resource("v1", "PersistentVolume", "persistentvolumes", False),
    Resource("v1", "ServiceAccount", "serviceaccounts", True),
    Resource("v1", "ConfigMap", "configmaps", True),
    Resource("v1", "Namespace", "namespaces", False),
    Resource(RBAC_API_VERSION, "Role", "roles", True),
    Resource(RBAC_API_VERSION, "RoleBinding", "rolebindings", True),
    Resource("events.k8s.io/v1", "Event", "events", True),
    Resource("coordination.k8s.io/v1", "Lease", "leases", True),
    *(Resource(api_version, kind, f"{kind.lower()}s", True) for api_version, kind in RUN_KINDS),
)
RESOURCES = {(r.api_version, r.kind): r for r in _TABLE}


def resource(api_version: str, kind: str) -> Resource:
    try:
        return RESOURCES[(api_version, kind)]
    except KeyError:
        raise LookupError(f"the adapter does not know the kind {api_version}/{kind}") from None


def path_of(ref: ObjectRef) -> str:
    return resource(ref.api_version, ref.kind).item(ref.namespace, ref.name)
