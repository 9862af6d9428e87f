"""The kinds the embedded commands know, by the names kubectl users type for them.

One table maps every accepted spelling (``experiment``, ``experiments``, ``exp``; ``svc``;
``deploy``...) to the resource it means, so that ``get``, ``describe``, ``edit`` and ``delete``
resolve names the same way and an unknown word gets one message listing what is accepted.
``find`` turns the port's ``NotFound`` into kubectl's
``Error from server (NotFound): experiments.kubeflow.org "NAME" not found`` (exit status 1) and,
because the default namespace is ``default`` while Katib's examples live in ``kubeflow``, points
at the namespace where an object of that name does exist. ``targets`` reads what kubectl reads
after ``get``: ``KIND[,KIND...] [NAME...]`` or ``KIND/NAME...``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from katib_resume.app.common.errors import InputError, NotFoundError
from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster, NotFound


@dataclass(frozen=True, slots=True)
class Resource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    def ref(self, namespace: str, name: str) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, namespace if self.namespaced else None, name)

    @property
    def group(self) -> str:
        """The API group (``kubeflow.org``, ``apps``; ``""`` for the core group)."""
        group, slash, _ = self.api_version.rpartition("/")
        return group if slash else ""

    @property
    def qualified(self) -> str:
        """``plural.group``, as kubectl names the resource in an error."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def name_of(self, name: str) -> str:
        """``-o name``'s ``kind.group/name``: ``persistentvolumeclaim/x``, ``deployment.apps/x``."""
        kind = self.kind.lower()
        return f"{kind}.{self.group}/{name}" if self.group else f"{kind}/{name}"

    def not_found(self, name: str) -> NotFoundError:
        return NotFoundError(f'Error from server (NotFound): {self.qualified} "{name}" not found')


@dataclass(frozen=True, slots=True)
class Target:
    """A kind and the names asked for (none: every object of the kind)."""

    resource: Resource
    names: tuple[str, ...] = ()


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


def targets(words: Sequence[str]) -> list[Target]:
    """``KIND[,KIND...] [NAME...]`` or ``KIND/NAME...``, one ``Target`` per kind, in order."""
    if not any("/" in word for word in words):
        kinds = [resolve(kind) for kind in words[0].split(",")] if words else []
        names = tuple(dict.fromkeys(words[1:]))
        return [Target(resource, names) for resource in dict.fromkeys(kinds)]
    chosen: dict[Resource, list[str]] = {}
    for word in words:
        kind, slash, name = word.partition("/")
        if not slash:
            raise InputError(
                f"there is no need to give the kind {word!r} apart when the other arguments "
                "are in KIND/NAME form (e.g. `get experiment/NAME`, not `get experiment "
                "experiment/NAME`)"
            )
        if not name or "/" in name:
            raise InputError(f"{word!r}: expected KIND/NAME")
        chosen.setdefault(resolve(kind), []).append(name)
    return [Target(resource, tuple(dict.fromkeys(names))) for resource, names in chosen.items()]


def find(cluster: Cluster, resource: Resource, namespace: str, name: str) -> Manifest:
    """The object, or kubectl's ``NotFound`` (with where it is, if in another namespace)."""
    try:
        return cluster.get(resource.ref(namespace, name))
    except NotFound:
        pass
    error = resource.not_found(name)
    raise NotFoundError(f"{error}{_elsewhere(cluster, resource, name)}")


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
