"""An honest in-memory Kubernetes API for the objects katib-resume touches.

It implements ``core.ports.Cluster`` with the semantics a controller relies on, so that a bug
the real API server would expose is exposed here too: a write with a stale ``resourceVersion``
is a ``Conflict``; a delete carries a UID precondition; an object with finalizers only gets a
``deletionTimestamp`` and disappears when the last finalizer goes; background garbage collection
follows owner references for namespaced dependents only (a cluster-scoped PV is never collected
through an owner reference, as in Kubernetes); the status subresource is written separately from
spec, and ``generation`` moves on spec changes only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from adapters.fake.clock import FakeClock
from adapters.fake.store import CLUSTER_SCOPED, Store
from core.actions import EventType, ObjectRef
from core.kube import Manifest, format_time
from core.ports import AlreadyExists, Conflict, NotFound


@dataclass(frozen=True, slots=True)
class Event:
    ref: ObjectRef
    type: EventType
    reason: str
    message: str
    time: str


class FakeCluster:
    """Implements ``core.ports.Cluster`` in memory."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.store = Store()
        self.events: list[Event] = []

    def get(self, ref: ObjectRef) -> Manifest:
        return copy.deepcopy(self._existing(ref))

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        found = []
        for obj in self.store.all():
            meta = obj["metadata"]
            if (obj["apiVersion"], obj["kind"]) != (api_version, kind):
                continue
            if namespace is not None and meta.get("namespace") != namespace:
                continue
            if all(meta.get("labels", {}).get(k) == v for k, v in labels.items()):
                found.append(copy.deepcopy(obj))
        return sorted(
            found, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"])
        )

    def create(self, manifest: Manifest) -> Manifest:
        ref = ObjectRef.of(manifest)
        if self.store.find(ref) is not None:
            raise AlreadyExists(f"{ref} already exists")
        obj = copy.deepcopy(manifest)
        obj.pop("status", None)
        meta = obj["metadata"]
        if ref.kind in CLUSTER_SCOPED:
            meta.pop("namespace", None)
        else:
            meta.setdefault("namespace", "default")
        meta.update(
            uid=self.store.next_uid(),
            creationTimestamp=format_time(self.clock.now()),
            generation=1,
        )
        for transient in ("deletionTimestamp", "resourceVersion"):
            meta.pop(transient, None)
        return self.store.put(ref, obj)

    def update(self, manifest: Manifest) -> Manifest:
        """Replace metadata (labels, annotations, finalizers) and spec; status is untouched."""
        ref = ObjectRef.of(manifest)
        current = self._checked(ref, manifest["metadata"].get("resourceVersion"))
        obj = copy.deepcopy(current)
        meta = obj["metadata"]
        for field in ("labels", "annotations", "finalizers", "ownerReferences"):
            if field in manifest["metadata"]:
                meta[field] = copy.deepcopy(manifest["metadata"][field])
            else:
                meta.pop(field, None)
        if manifest.get("spec") != current.get("spec"):
            obj["spec"] = copy.deepcopy(manifest.get("spec"))
            meta["generation"] = meta.get("generation", 1) + 1
        return self._store_or_finish(ref, obj)

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        obj = copy.deepcopy(self._checked(ref, resource_version))
        obj["status"] = copy.deepcopy(status)
        return self.store.put(ref, obj)

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        obj = copy.deepcopy(self._checked(ref, resource_version))
        obj["metadata"]["finalizers"] = list(finalizers)
        if not finalizers:
            del obj["metadata"]["finalizers"]
        return self._store_or_finish(ref, obj)

    def delete(self, ref: ObjectRef, uid: str) -> None:
        current = self._existing(ref)
        if uid and current["metadata"]["uid"] != uid:
            raise Conflict(f"{ref}: UID precondition failed")
        self._delete(ref, current)

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        self.events.append(Event(ref, type_, reason, message, format_time(self.clock.now())))

    def _existing(self, ref: ObjectRef) -> Manifest:
        obj = self.store.find(ref)
        if obj is None:
            raise NotFound(f"{ref} not found")
        return obj

    def _checked(self, ref: ObjectRef, resource_version: str | None) -> Manifest:
        current = self._existing(ref)
        if (
            resource_version is not None
            and current["metadata"]["resourceVersion"] != resource_version
        ):
            raise Conflict(
                f"{ref}: the object has been modified; please apply your changes "
                "to the latest version and try again"
            )
        return current

    def _delete(self, ref: ObjectRef, current: Manifest) -> None:
        if current["metadata"].get("finalizers"):
            if "deletionTimestamp" not in current["metadata"]:
                obj = copy.deepcopy(current)
                obj["metadata"]["deletionTimestamp"] = format_time(self.clock.now())
                self.store.put(ref, obj)
            return
        self.store.drop(ref)
        self._collect(current["metadata"]["uid"])

    def _store_or_finish(self, ref: ObjectRef, obj: Manifest) -> Manifest:
        meta = obj["metadata"]
        if "deletionTimestamp" in meta and not meta.get("finalizers"):
            self.store.drop(ref)
            self._collect(meta["uid"])
            return copy.deepcopy(obj)
        return self.store.put(ref, obj)

    def _collect(self, owner_uid: str) -> None:
        """Background garbage collection of namespaced dependents whose owners are all gone."""
        live = {o["metadata"]["uid"] for o in self.store.all()}
        for obj in self.store.all():
            refs = obj["metadata"].get("ownerReferences", [])
            if obj["kind"] in CLUSTER_SCOPED or not any(r.get("uid") == owner_uid for r in refs):
                continue
            if all(r.get("uid") not in live for r in refs):
                self._delete(ObjectRef.of(obj), obj)
