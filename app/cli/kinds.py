"""The kinds the embedded commands know, by the names kubectl users type for them.

One table maps every accepted spelling (``experiment``, ``experiments``, ``exp``; ``svc``;
``deploy``...) to the resource it means, so that ``get``, ``describe``, ``edit`` and ``delete``
resolve names the same way and an unknown word gets one message listing what is accepted.
``find`` turns the port's ``NotFound`` into kubectl's ``... "NAME" not found`` and, because the
default namespace is ``default`` while Katib's examples live in ``kubeflow``, points at the
namespace where an object of that name does exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from katib_resume.app.common.inputs import InputError
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.kube import Manifest
from katib_resume.core.ports import Cluster, NotFound


@dataclass(frozen=True, slots=True)
class Resource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    def ref(self, namespace: str, name: str) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, namespace if self.namespaced else None, name)


EXPERIMENT = Resource(API_VERSION, "Experiment", "experiments")
SUGGESTION = Resource(API_VERSION, "Suggestion", "suggestions")
TRIAL = Resource(API_VERSION, "Trial", "trials")
DEPLOYMENT = Resource("apps/v1", "Deployment", "deployments")
SERVICE = Resource("v1", "Service", "services")
PVC = Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims")
PV = Resource("v1", "PersistentVolume", "persistentvolumes", namespaced=False)
EVENT = Resource("v1", "Event", "events")

ALIASES: dict[str, Resource] = {
    **dict.fromkeys(("experiment", "experiments", "exp"), EXPERIMENT),
    **dict.fromkeys(("suggestion", "suggestions"), SUGGESTION),
    **dict.fromkeys(("trial", "trials"), TRIAL),
    **dict.fromkeys(("deployment", "deployments", "deploy"), DEPLOYMENT),
    **dict.fromkeys(("service", "services", "svc"), SERVICE),
    **dict.fromkeys(("pvc", "persistentvolumeclaim", "persistentvolumeclaims"), PVC),
    **dict.fromkeys(("pv", "persistentvolume", "persistentvolumes"), PV),
    **dict.fromkeys(("event", "events", "ev"), EVENT),
}


def resolve(word: str, allowed: tuple[Resource, ...] | None = None) -> Resource:
    """The resource ``word`` names (case-insensitive), limited to ``allowed`` when given."""
    resource = ALIASES.get(word.lower())
    choices = allowed or tuple(dict.fromkeys(ALIASES.values()))
    if resource is None or resource not in choices:
        names = ", ".join(r.plural if r not in (PVC, PV) else _short(r) for r in choices)
        raise InputError(f"unknown kind {word!r}: expected one of {names}")
    return resource


def find(cluster: Cluster, resource: Resource, namespace: str, name: str) -> Manifest:
    """The object, or ``InputError`` saying it is not found (and where it is, if elsewhere)."""
    try:
        return cluster.get(resource.ref(namespace, name))
    except NotFound:
        pass
    where = f' in namespace "{namespace}"' if resource.namespaced else ""
    hint = _elsewhere(cluster, resource, name)
    raise InputError(f'{resource.kind.lower()} "{name}" not found{where}{hint}')


def _elsewhere(cluster: Cluster, resource: Resource, name: str) -> str:
    if not resource.namespaced:
        return ""
    spaces = sorted(
        obj["metadata"].get("namespace", "default")
        for obj in cluster.list(resource.api_version, resource.kind, None, {})
        if obj["metadata"]["name"] == name
    )
    return f" (it exists in namespace {', '.join(spaces)}: add -n {spaces[0]})" if spaces else ""


def _short(resource: Resource) -> str:
    return "pvc" if resource is PVC else "pv"
