"""A watch-fed cache of the cluster: the controller's reads cost no API call.

A controller that asks the API server for every object on every reconcile pays for it in
latency and load; Kubernetes controllers read from informers instead: list once, then apply
every watch event to a local cache, and read from that. ``Informer`` is that cache for the
``Cluster`` port: ``get`` and ``list`` answer from memory, writes go through to the cluster and
their answers refresh the cache at once (so the next reconcile sees its own writes), and
``sync`` applies the watch events since the last one, which the runtime also turns into
reconcile keys. A watch that fell too far behind (``Gone``) is answered by listing again.

Objects handed out are the cache's own: readers parse them and never mutate them (as with
client-go's informer caches). They are kept in ``core.objects.Objects``, the structure (and the
rule for which version is kept) of the Kubernetes adapter's watch cache too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol

from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.kube import Manifest
from katib_resume.core.objects import Cursor, Delta, Objects
from katib_resume.core.ports import Cluster, Gone, NotFound
from katib_resume.core.resources import CONTROLLED_KINDS

KINDS = CONTROLLED_KINDS
"""The kinds the controller reads: everything else in the cluster is not cached."""


class Change(Protocol):
    @property
    def type(self) -> Literal["ADDED", "MODIFIED", "DELETED"]: ...

    @property
    def object(self) -> Manifest: ...


class ChangeLog(Cluster, Protocol):
    """A cluster with a watch: ordered changes after a cursor."""

    @property
    def cursor(self) -> int: ...

    def changes_since(self, cursor: int) -> tuple[int, Sequence[Change]]: ...


class Watched(ChangeLog, Protocol):
    """A change log that can also list one kind at a known cursor (what the cache starts from)."""

    def list_at(self, api_version: str, kind: str) -> tuple[int, Sequence[Manifest]]:
        """Every object of a kind and the cursor the answer is current at (a list's
        ``resourceVersion``): watching from there misses nothing."""
        ...


class Informer:
    """Implements ``core.ports.Cluster``: reads from the cache, writes through."""

    def __init__(self, cluster: Watched, kinds: Sequence[tuple[str, str]] = KINDS) -> None:
        self.inner = cluster
        self.kinds = tuple(kinds)
        """What ``relist`` lists (the run objects' kinds too, for a controller that runs Trials)."""
        self.objects = Objects()
        """By kind, then by name: a list reads one kind, never the whole cache."""
        self.cursor = 0
        self.relist()

    def relist(self) -> None:
        """List every cached kind again and watch from the oldest list's cursor.

        A list may be older than the newest change (served from a lagging cache); watching from
        *now* would then lose the changes in between for good, since nothing would ever replay
        them. Watching from the list's own cursor replays them; the events the lists already
        reflect are dropped by the version check in ``_remember``.
        """
        self.objects = Objects()
        cursors = []
        for api_version, kind in self.kinds:
            cursor, items = self.inner.list_at(api_version, kind)
            cursors.append(cursor)
            self.objects.fill(api_version, kind, items)
        self.cursor = min(cursors)

    def sync(self) -> Sequence[Change] | None:
        """Apply the watch events since the last sync; ``None`` when it had to list again."""
        try:
            self.cursor, changes = self.inner.changes_since(self.cursor)
        except Gone:
            self.relist()
            return None
        for change in changes:
            if change.type == "DELETED":
                self.objects.discard(change.object)
            else:
                self.objects.keep(change.object)
        return changes

    def get(self, ref: ObjectRef) -> Manifest:
        found = self.objects.get(ref.api_version, ref.kind, ref.namespace, ref.name)
        if found is None:
            raise NotFound(f"{ref} not found")
        return found

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        return self.objects.select(api_version, kind, namespace, labels)

    def changes(
        self, api_version: str, kind: str, field: str, value: str, since: Cursor | None
    ) -> Delta:
        """What changed in one index bucket since ``since`` (``core.objects.Objects.changes``)."""
        return self.objects.changes(api_version, kind, field, value, since)

    def create(self, manifest: Manifest) -> Manifest:
        return self._remember(self.inner.create(manifest))

    def update(self, manifest: Manifest) -> Manifest:
        return self._remember(self.inner.update(manifest))

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        return self._remember(self.inner.update_spec(ref, spec, resource_version))

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        return self._remember(self.inner.update_status(ref, status, resource_version))

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        return self._remember(self.inner.set_finalizers(ref, finalizers, resource_version))

    def delete(self, ref: ObjectRef, uid: str) -> None:
        self.inner.delete(ref, uid)  # the watch says when it is really gone

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        self.inner.record_event(ref, type_, reason, message)

    def _remember(self, obj: Manifest) -> Manifest:
        """A write's answer, kept unless the cache already holds this version or a newer one."""
        self.objects.keep(obj)
        return obj
