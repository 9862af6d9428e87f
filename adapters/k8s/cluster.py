"""``KubeCluster``: the cluster port on a real API server.

Reads answer from the watch-fed ``Store`` (no API call); writes go to the API server as merge
patches guarded by ``resourceVersion`` (``adapters.k8s.patches``) and their answers refresh the
store at once, so the next reconcile sees its own writes. The pieces of the port's contract
that the API server does not give for free are made explicit here:

- a create answered ``AlreadyExists`` fetches the object into the store before raising, so the
  next reconcile sees who owns it and the core decides (it never adopts a stranger's volume);
- a delete carries a UID precondition, and a 404 is ``NotFound`` (the caller's "already gone");
- a write refused as stale (``Conflict``, or ``NotFound`` for an object the store still holds)
  re-reads the object into the store before raising, so a store that missed a watch event is
  repaired at the next write that depends on it;
- a status write goes to the status subresource only;
- Events go through the Events API (``events.k8s.io/v1``) and never fail a reconcile: an Event
  is a report, not state.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime

from katib_resume.adapters.k8s.patches import guarded, merge_diff
from katib_resume.adapters.k8s.resources import RESOURCES, Resource, path_of, resource
from katib_resume.adapters.k8s.store import Change, Store
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from katib_resume.adapters.k8s.watch import KindWatch
from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import Cursor, Delta, key_of, older, version_of
from katib_resume.core.ports import AlreadyExists, ClusterError, Conflict, NotFound
from katib_resume.core.resources import CONTROLLED_KINDS

log = logging.getLogger("katib_resume.cluster")
WATCHED = CONTROLLED_KINDS
"""The kinds the controller reads; Events, Leases and ConfigMaps are written or read apart."""
REPORTER = "katib-resume"
USER_METADATA = ("labels", "annotations", "ownerReferences", "finalizers")


class KubeCluster:
    """Implements ``core.ports.Cluster`` and the app's ``ChangeLog`` (a cursor over changes)."""

    def __init__(
        self,
        transport: Transport,
        *,
        namespace: str | None = None,
        kinds: Sequence[tuple[str, str]] = WATCHED,
        instance: str | None = None,
        relist_seconds: float | None = None,
    ) -> None:
        self.transport, self.namespace = transport, namespace
        self.store = Store()
        self.stop_event = threading.Event()
        self.watches = [
            KindWatch(
                transport,
                self.store,
                RESOURCES[kind],
                namespace,
                self.stop_event,
                relist_seconds=relist_seconds,
            )
            for kind in kinds
        ]
        self.watched = frozenset(kinds)
        self.instance = instance or socket.gethostname()
        self.dropped_events = 0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> bool:
        """Start the watches; whether every kind was listed within ``timeout`` seconds."""
        for watch in self.watches:
            watch.start()
        return self.wait_synced(timeout)

    def wait_synced(self, timeout: float) -> bool:
        return all(watch.synced.wait(timeout) for watch in self.watches)

    @property
    def synced(self) -> bool:
        return all(watch.synced.is_set() for watch in self.watches)

    def close(self) -> None:
        self.stop_event.set()

    # -- ChangeLog -------------------------------------------------------------------------

    @property
    def cursor(self) -> int:
        return self.store.cursor

    def changes_since(self, cursor: int) -> tuple[int, Sequence[Change]]:
        return self.store.changes_since(cursor)

    # -- reads: from the store -------------------------------------------------------------

    def get(self, ref: ObjectRef) -> Manifest:
        found = self.store.get(_ref_key(ref))
        if found is None:
            raise NotFound(f"{ref.kind} {ref.namespace or ''}/{ref.name} not found")
        return found

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        return self.store.select(api_version, kind, namespace, labels)

    def changes(
        self,
        api_version: str,
        kind: str,
        field: str,
        value: str,
        since: Cursor | None,
        *,
        blocks: bool = False,
    ) -> Delta:
        """What changed in one index bucket of the cache since ``since`` (no API call)."""
        return self.store.changes(api_version, kind, field, value, since, blocks=blocks)

    # -- writes: to the API server ---------------------------------------------------------

    def create(self, manifest: Manifest) -> Manifest:
        kind = resource(manifest["apiVersion"], manifest["kind"])
        meta = manifest["metadata"]
        path = kind.collection(meta.get("namespace"))
        try:
            created = self.transport.request("POST", path, body=manifest)
        except AlreadyExists:
            self._refresh(kind, meta.get("namespace"), meta["name"])
            raise
        return self._remember(kind, created)

    def update(self, manifest: Manifest) -> Manifest:
        kind = resource(manifest["apiVersion"], manifest["kind"])
        meta = manifest["metadata"]
        ref = ObjectRef(kind.api_version, kind.kind, meta.get("namespace"), meta["name"])
        old = self._at(ref, meta.get("resourceVersion"))
        patch = merge_diff(_user_part(old), _user_part(manifest))
        return self._patch(ref, patch, meta.get("resourceVersion"), old=old)

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        old = self._at(ref, resource_version)
        patch = merge_diff({"spec": old.get("spec")}, {"spec": spec})
        return self._patch(ref, patch, resource_version, old=old)

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        old = self._at(ref, resource_version)
        patch = merge_diff({"status": old.get("status")}, {"status": status})
        return self._patch(ref, patch, resource_version, old=old, subresource="/status")

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        old = self._at(ref, resource_version)
        patch = {"metadata": {"finalizers": list(finalizers)}}
        if list(old["metadata"].get("finalizers") or ()) == list(finalizers):
            patch = {}
        return self._patch(ref, patch, resource_version, old=old)

    def delete(self, ref: ObjectRef, uid: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": uid},
            "propagationPolicy": "Background",
        }
        with self._rereading(ref):
            self.transport.request("DELETE", path_of(ref), body=body)

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        namespace = ref.namespace or "default"
        body = self._event(ref, namespace, type_, reason, message)
        events = resource("events.k8s.io/v1", "Event")
        try:
            self.transport.request("POST", events.collection(namespace), body=body)
        except ClusterError as error:
            self.dropped_events += 1
            log.warning("event not recorded", extra={"reason": reason, "error": str(error)})

    # -- helpers ---------------------------------------------------------------------------

    def _patch(
        self,
        ref: ObjectRef,
        patch: Manifest,
        resource_version: str | None,
        *,
        old: Manifest,
        subresource: str = "",
    ) -> Manifest:
        """Send ``patch`` (nothing at all when it is empty: no no-op writes)."""
        if not patch:
            return old
        body = guarded(patch, resource_version)
        kind = resource(ref.api_version, ref.kind)
        path = kind.item(ref.namespace, ref.name) + subresource
        with self._rereading(ref):
            written = self.transport.request("PATCH", path, body=body, content_type=MERGE_PATCH)
        return self._remember(kind, written)

    @contextlib.contextmanager
    def _rereading(self, ref: ObjectRef) -> Iterator[None]:
        """A write refused as stale re-reads its object into the store before the error goes
        on: a ``Conflict`` (it moved on) fetches the server's version, a ``NotFound`` drops it
        (and logs the deletion the watch missed). A cache that missed an event then heals at
        the next write that depends on it, and the retry plans from the server's truth."""
        try:
            yield
        except Conflict:
            with contextlib.suppress(ClusterError):
                self._refresh(resource(ref.api_version, ref.kind), ref.namespace, ref.name)
            raise
        except NotFound:
            self._forget(ref)
            raise

    def _at(self, ref: ObjectRef, resource_version: str | None) -> Manifest:
        """The object at ``resource_version`` (the store's copy when it is that version);
        ``Conflict`` when the object has moved on: at once when the watch already brought a
        newer version (another writer won; the write would be refused anyway), after a read
        of the server otherwise."""
        held = self.store.get(_ref_key(ref))
        if held is not None:
            at = version_of(held)
            if resource_version is None or resource_version == at:
                return held
            if older(resource_version, at):
                raise Conflict(f"{ref.kind} {ref.name} is at {at}, not {resource_version}")
        kind = resource(ref.api_version, ref.kind)
        with self._rereading(ref):
            fresh = self._refresh(kind, ref.namespace, ref.name)
        at = version_of(fresh)
        if resource_version is not None and at != resource_version:
            raise Conflict(f"{ref.kind} {ref.name} is at {at}, not {resource_version}")
        return fresh

    def _forget(self, ref: ObjectRef) -> None:
        held = self.store.get(_ref_key(ref))
        if held is not None:
            self.store.forget(held)

    def _refresh(self, kind: Resource, namespace: str | None, name: str) -> Manifest:
        return self._remember(kind, self.transport.request("GET", kind.item(namespace, name)))

    def _remember(self, kind: Resource, obj: Manifest) -> Manifest:
        obj = kind.typed(obj)
        if (kind.api_version, kind.kind) in self.watched:
            self.store.remember(obj)
        return obj

    def _event(
        self, ref: ObjectRef, namespace: str, type_: EventType, reason: str, message: str
    ) -> Manifest:
        regarding: Manifest = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
        if ref.namespace:
            regarding["namespace"] = ref.namespace
        held = self.store.get(_ref_key(ref))
        if held is not None and held["metadata"].get("uid"):
            regarding["uid"] = held["metadata"]["uid"]
        now = datetime.now(UTC)
        return {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"generateName": f"{ref.name}.", "namespace": namespace},
            "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "reportingController": f"kubeflow.org/{REPORTER}",
            "reportingInstance": self.instance,
            "action": reason,
            "reason": reason,
            "note": message[:1024],
            "type": type_,
            "regarding": regarding,
        }


def _ref_key(ref: ObjectRef) -> tuple[str, str, str, str]:
    return (ref.api_version, ref.kind, ref.namespace or "", ref.name)


def _user_part(obj: Manifest) -> Manifest:
    """What ``update`` replaces: the user-settable metadata and the spec."""
    meta = obj.get("metadata") or {}
    part: Manifest = {"metadata": {k: meta[k] for k in USER_METADATA if k in meta}}
    if "spec" in obj:
        part["spec"] = obj["spec"]
    return part


__all__ = ["WATCHED", "KubeCluster", "key_of"]
