"""Is this pod a Trial's? Katib's owner walk, from the pod up to the Trial's run object.

A pod belongs to a Trial when it, or an object up its chain of owners, is owned by a
``kubeflow.org/v1beta1`` ``Trial``: that object is the Trial's run object (a Job, a TFJob...),
named after the Trial. Owners are read live from the API server, in the pod's namespace, one
branch after the other; a branch whose owner cannot be read (a kind the webhook does not know,
such as a ReplicaSet, or an object that is gone) is no Trial's, as in Katib, so the pod is let
through unchanged. The walk is bounded (depth and number of reads) and never visits an object
twice, so an ownership cycle or a pod with a thousand owners written by hand cannot hold the API
server's request.
"""

from __future__ import annotations

from dataclasses import dataclass

from katib_resume.core.actions import ObjectRef
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Cluster, ClusterError

TRIAL_KIND = "Trial"
MAX_DEPTH = 8
MAX_READS = 32
"""At most this many owners are read for one pod (a Trial's pod needs one or two)."""


@dataclass(frozen=True, slots=True)
class RunObject:
    """The object a Trial owns on the pod's chain: its kind and name (the Trial's name)."""

    kind: str
    name: str


def run_object_of(cluster: Cluster, pod: Manifest, namespace: str) -> RunObject | None:
    """The Trial's run object above ``pod`` (maybe the pod itself), or None."""
    return _Walk(cluster, namespace).run_object(pod, "Pod", 0)


class _Walk:
    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.cluster, self.namespace = cluster, namespace
        self.seen: set[tuple[str, str, str]] = set()

    def run_object(self, obj: Manifest, kind: str, depth: int) -> RunObject | None:
        owners = _owners(obj)
        name = _metadata(obj).get("name")
        if any(_is_trial(owner) for owner in owners) and isinstance(name, str) and name:
            return RunObject(kind, name)
        if depth >= MAX_DEPTH:
            return None
        for owner in owners:
            parent = self._owner(owner)
            found = parent and self.run_object(parent[1], parent[0], depth + 1)
            if found:
                return found
        return None

    def _owner(self, owner: Manifest) -> tuple[str, Manifest] | None:
        """The owner's kind and object, unless it cannot be read or was visited already."""
        ref = _ref(owner, self.namespace)
        if ref is None:
            return None
        key = (ref.api_version, ref.kind, ref.name)
        if key in self.seen or len(self.seen) >= MAX_READS:
            return None
        self.seen.add(key)
        try:
            return ref.kind, self.cluster.get(ref)
        except (ClusterError, LookupError):  # not found, unreadable, or a kind we do not know
            return None


def _is_trial(owner: Manifest) -> bool:
    return owner.get("kind") == TRIAL_KIND and owner.get("apiVersion") == API_VERSION


def _ref(owner: Manifest, namespace: str) -> ObjectRef | None:
    fields = owner.get("apiVersion"), owner.get("kind"), owner.get("name")
    if not all(isinstance(value, str) and value for value in fields):
        return None
    api_version, kind, name = (str(value) for value in fields)
    return ObjectRef(api_version, kind, namespace, name)


def _owners(obj: Manifest) -> list[Manifest]:
    found = _metadata(obj).get("ownerReferences")
    return [owner for owner in found if isinstance(owner, dict)] if isinstance(found, list) else []


def _metadata(obj: Manifest) -> Manifest:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}
