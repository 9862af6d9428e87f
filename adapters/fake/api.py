"""The fake API server: Kubernetes' rules for reads and writes, with no fault injected.

This is where the fake is honest, so that a bug the real API server would expose is exposed here
too: a write with a stale ``resourceVersion`` is a ``Conflict``; a delete carries a UID
precondition; an object with finalizers only gets a ``deletionTimestamp`` and disappears when the
last finalizer goes, and no finalizer may be added once it is deleting (422, ``Invalid``); the
status subresource is written separately from spec and ``generation`` moves on spec changes only;
creation ignores a status and defaults the phase of PVCs and PVs (``Pending``) and a PV's reclaim
policy (``Retain``), as the API server's defaulting does.

Garbage collection follows owner references for namespaced dependents only: a cluster-scoped
PV is never collected through an owner reference (since Kubernetes 1.20 a namespaced owner of a
cluster-scoped object is unresolvable). By default an owner's deletion collects its dependents
at once; a ``FakeWorld`` makes it background work done by its ticks (``synchronous_gc``), as the
real garbage collector runs behind the API server.

A write answers with a private copy of the stored object, as a read does; with ``copy=False``
it answers with the stored object itself, as the watch hands it out: for a caller that keeps
the answer and never mutates it (an informer cache, ``FakeCluster.for_cache``).

Admission plugins (``admission``) mutate every object at creation; ``FakeWorld`` installs the
storage-protection one. ``FakeCluster`` wraps this class with fault injection: Kubernetes' own
controllers (``FakeWorld``) write here directly, so faults never hit them.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence

from katib_resume.adapters.fake.clock import FakeClock
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.store import (
    CLUSTER_SCOPED,
    Store,
    as_json,
    as_json_over,
    select,
)
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.ports import AlreadyExists, Conflict, Invalid, NotFound

Admission = Callable[[Manifest], None]
_CLAIM_KINDS = ("PersistentVolumeClaim", "PersistentVolume")


class ApiServer:
    def __init__(self, clock: FakeClock, store: Store | None = None) -> None:
        self.clock = clock
        self.store = store or Store()
        self.admission: list[Admission] = []
        self.synchronous_gc = True

    def get(self, ref: ObjectRef) -> Manifest:
        return clone(self.existing(ref))

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        labels: Mapping[str, str],
        *,
        copy: bool = True,
    ) -> Sequence[Manifest]:
        objects = self.store.of_kind(api_version, kind, namespace, labels)
        return select(objects, api_version, kind, namespace, labels, copy=copy)

    def observe(self, api_version: str, kind: str, namespace: str | None) -> Sequence[Manifest]:
        """The stored objects of a kind, without copies: for Kubernetes' own controllers (the
        world), which only read them (a write goes through the methods above). Copying every
        object on every tick of every simulated controller costs more than the rest of a tick."""
        objects = self.store.of_kind(api_version, kind, namespace)
        return select(objects, api_version, kind, namespace, {}, copy=False)

    def create(self, manifest: Manifest, *, copy: bool = True) -> Manifest:
        ref = ObjectRef.of(manifest)
        if self.store.find(ref) is not None:
            raise AlreadyExists(f"{ref} already exists")
        # one private copy, converted to the JSON the server keeps (a status is ignored)
        obj = as_json({key: value for key, value in manifest.items() if key != "status"})
        _default(obj)
        for plugin in self.admission:
            plugin(obj)
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
        return self.store.put_json(ref, obj, copy=copy)

    def update(self, manifest: Manifest, *, copy: bool = True) -> Manifest:
        """Replace metadata (labels, annotations, finalizers, owners) and spec; not status."""
        ref = ObjectRef.of(manifest)
        current = self.checked(ref, manifest["metadata"].get("resourceVersion"))
        obj = _shallow(current)
        meta = obj["metadata"]
        for field in ("labels", "annotations", "finalizers", "ownerReferences"):
            if field in manifest["metadata"]:
                meta[field] = as_json(manifest["metadata"][field])
            else:
                meta.pop(field, None)
        _no_new_finalizers(ref, current, meta.get("finalizers", []))
        _replace_spec(obj, manifest.get("spec"))
        return self._store_or_finish(ref, obj, copy)

    def update_spec(
        self, ref: ObjectRef, spec: Manifest, resource_version: str | None, *, copy: bool = True
    ) -> Manifest:
        current = self.checked(ref, resource_version)
        obj = _shallow(current)
        _replace_spec(obj, spec)
        return self.store.put_json(ref, obj, copy=copy)

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None, *, copy: bool = True
    ) -> Manifest:
        current = self.checked(ref, resource_version)
        obj = {**_shallow(current), "status": as_json_over(status, current.get("status"))}
        return self.store.put_json(ref, obj, copy=copy)  # only what changed needed converting

    def set_finalizers(
        self,
        ref: ObjectRef,
        finalizers: Sequence[str],
        resource_version: str | None,
        *,
        copy: bool = True,
    ) -> Manifest:
        current = self.checked(ref, resource_version)
        _no_new_finalizers(ref, current, finalizers)
        obj = _shallow(current)
        obj["metadata"]["finalizers"] = as_json(list(finalizers))
        if not finalizers:
            del obj["metadata"]["finalizers"]
        return self._store_or_finish(ref, obj, copy)

    def delete(self, ref: ObjectRef, uid: str) -> None:
        current = self.existing(ref)
        if uid and current["metadata"]["uid"] != uid:
            raise Conflict(f"{ref}: UID precondition failed")
        self._delete(ref, current)

    def existing(self, ref: ObjectRef) -> Manifest:
        obj = self.store.find(ref)
        if obj is None:
            raise NotFound(f"{ref} not found")
        return obj

    def checked(self, ref: ObjectRef, resource_version: str | None) -> Manifest:
        current = self.existing(ref)
        if resource_version is not None and current["metadata"]["resourceVersion"] != str(
            resource_version
        ):
            raise Conflict(
                f"{ref}: the object has been modified; please apply your changes "
                "to the latest version and try again"
            )
        return current

    def collect_orphans(self) -> int:
        """One pass of the garbage collector: delete namespaced objects whose owners are gone.

        Only the objects that lost an owner since the last pass can be new orphans (the store's
        ``owners`` index); the rest were checked before, and nothing else changes that."""
        owners, objects = self.store.owners, self.store.objects
        suspects = [objects[key] for key in owners.take_suspects()]
        orphans = [o for o in suspects if _orphaned(o, owners)]
        for obj in orphans:
            self._delete_if_same(obj)
        return len(orphans)

    def _delete(self, ref: ObjectRef, current: Manifest) -> None:
        if current["metadata"].get("finalizers"):
            if "deletionTimestamp" not in current["metadata"]:
                obj = _shallow(current)
                obj["metadata"]["deletionTimestamp"] = format_time(self.clock.now())
                self.store.keep_json(ref, obj)  # a delete answers nothing: no copy
            return
        self._finish(ref, current["metadata"]["uid"])

    def _store_or_finish(self, ref: ObjectRef, obj: Manifest, copy: bool) -> Manifest:
        meta = obj["metadata"]
        if "deletionTimestamp" in meta and not meta.get("finalizers"):
            self._finish(ref, meta["uid"])
            return clone(obj) if copy else obj
        return self.store.put_json(ref, obj, copy=copy)

    def _finish(self, ref: ObjectRef, uid: str) -> None:
        self.store.drop(ref)
        if self.synchronous_gc:
            self._collect(uid)

    def _collect(self, owner_uid: str) -> None:
        """Collect, at once, the namespaced dependents of ``owner_uid`` whose owners are gone."""
        owners, objects = self.store.owners, self.store.objects
        for obj in [objects[key] for key in self.store.dependents_of(owner_uid)]:
            if _orphaned(obj, owners):
                self._delete_if_same(obj)

    def _delete_if_same(self, obj: Manifest) -> None:
        """Delete ``obj`` unless an earlier deletion of this pass already removed it."""
        ref = ObjectRef.of(obj)
        current = self.store.find(ref)
        if current is not None and current["metadata"]["uid"] == obj["metadata"]["uid"]:
            self._delete(ref, current)


def _shallow(current: Manifest) -> Manifest:
    """A new object over a stored one, to change its top-level parts or its metadata's fields
    and pass to ``Store.put_json``: the untouched parts stay shared with the stored object."""
    return {**current, "metadata": dict(current["metadata"])}


def _orphaned(obj: Manifest, live: Container[str]) -> bool:
    refs = obj["metadata"].get("ownerReferences", [])
    if obj["kind"] in CLUSTER_SCOPED or not refs:
        return False
    return all(r.get("uid") not in live for r in refs)


def _replace_spec(obj: Manifest, spec: Manifest | None) -> None:
    if spec == obj.get("spec"):
        return
    if spec is None:
        del obj["spec"]
    else:
        obj["spec"] = as_json(spec)
    obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1


def _no_new_finalizers(ref: ObjectRef, current: Manifest, finalizers: Sequence[str]) -> None:
    meta = current["metadata"]
    added = set(finalizers) - set(meta.get("finalizers", []))
    if "deletionTimestamp" in meta and added:
        raise Invalid(
            f"{ref}: metadata.finalizers: Forbidden: no new finalizers can be added "
            f"if the object is being deleted, found new finalizers {sorted(added)}"
        )


def _default(obj: Manifest) -> None:
    """The API server's defaulting (phase, reclaim policy) and one validation of volume kinds."""
    if obj["kind"] not in _CLAIM_KINDS or obj["apiVersion"] != "v1":
        return
    spec = obj.setdefault("spec", {})
    obj["status"] = {"phase": "Pending"}
    if obj["kind"] == "PersistentVolume":
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    elif not ((spec.get("resources") or {}).get("requests") or {}).get("storage"):
        raise Invalid(f"{ObjectRef.of(obj)}: spec.resources[storage]: Required value")
