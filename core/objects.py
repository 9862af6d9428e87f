"""Cluster objects kept by kind, then by name, and indexed: the one data structure of both
watch caches.

The embedded runtime's ``app.loop.informer.Informer`` and the Kubernetes adapter's
``adapters.k8s.store.Store`` keep the same thing, the objects a watch reported and the answers
to the controller's own writes, and answer the same reads of the ``Cluster`` port: one object by
name, and the objects of one kind in a namespace with some labels. ``Objects`` is that
structure, with the rule for which of two versions of an object is kept (``newer``); the caches
add what differs around it (the informer: a cursor into the fake's change log; the store: a
lock, its own change log and the UIDs it saw deleted).

Objects are kept by kind first, so a list reads its own kind only. Within a kind they are also
indexed by the values the controller looks them up by (``core.object_index``): the labels of
``INDEXED_LABELS`` (every reconcile lists its Experiment's Trials by the experiment label) and
the controller owner's UID. A list by an indexed label reads that label's bucket only, never
every object of the kind, and each bucket knows which of its names changed since a cursor
(``changes``), so a reader that keeps what it derived from a bucket pays per change, not per
object. Each kind also has a ``core.digest.Digest`` of what it holds, kept as it changes, which a
relist compares with the API server's to list only the kinds that disagree. What is handed out
is the cache's own object: readers never mutate it (as with client-go's informer caches). Pure:
no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from katib_resume.core.digest import Digest, Digests
from katib_resume.core.katib import LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest, has_labels
from katib_resume.core.object_index import EVERY, OWNER, Cursor, Delta, Index

Kind = tuple[str, str]
Name = tuple[str, str]
"""An object's kind (apiVersion, kind) and its name within the kind (namespace or "", name)."""
Key = tuple[str, str, str, str]
"""(apiVersion, kind, namespace, name)."""
INDEXED_LABELS = (LABEL_EXPERIMENT,)
"""The labels the controller lists by (an unindexed label is answered by a scan of the kind)."""
__all__ = [
    "EVERY",
    "OWNER",
    "Cursor",
    "Delta",
    "IndexedCache",
    "Objects",
    "key_of",
    "newer",
    "older",
    "version_of",
]


@runtime_checkable
class IndexedCache(Protocol):
    """A watch cache (a ``Cluster`` whose reads are ``Objects``) that says which objects of an
    index bucket changed since a cursor: the informer and the Kubernetes adapter's cluster."""

    def changes(
        self, api_version: str, kind: str, field: str, value: str, since: Cursor | None
    ) -> Delta: ...


def key_of(obj: Manifest) -> Key:
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace") or "", meta["name"])


def version_of(obj: Manifest) -> str:
    """An object's (or a list's) ``resourceVersion``; ``""`` when it has none."""
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def older(version: str, than: str) -> bool:
    """Whether ``version`` is known to be older than ``than``.

    ``resourceVersion`` is opaque by contract, but every API server in use (and the fake)
    numbers it from a revision counter: when both are numbers they compare as such; otherwise
    neither is known to be older.
    """
    return version.isdigit() and than.isdigit() and int(version) < int(than)


def newer(held: Manifest | None, incoming: Manifest) -> bool:
    """Whether ``incoming`` replaces ``held``: unless it is known to be older (with versions
    that are not numbers, the later arrival wins). An equal copy of the same version keeps the
    held object, and so its identity, which the runtime's cache of parsed models is keyed by
    (a different content under the same version, which a mock API server may send, replaces)."""
    if held is None:
        return True
    version, held_version = version_of(incoming), version_of(held)
    if version and version == held_version:
        return held is not incoming and held != incoming
    return not older(version, held_version)


class Objects:
    def __init__(self, indexed_labels: Iterable[str] = INDEXED_LABELS) -> None:
        self.by_kind: dict[Kind, dict[Name, Manifest]] = {}
        """Read-only outside this class: every change goes through ``put``/``pop`` (the index)."""
        self.index = Index(tuple(indexed_labels))
        self.digests = Digests()
        """Of every kind held, kept by ``put``/``pop`` as the index is."""

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Manifest | None:
        return self.by_kind.get((api_version, kind), {}).get((namespace or "", name))

    def select(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> list[Manifest]:
        """The objects of one kind, in ``namespace`` (``None``: all), carrying ``labels``: from
        the bucket of an indexed label when ``labels`` has one, else by a scan of the kind."""
        field = next((f for f in self.index.labels if f in labels), None)
        table: Mapping[Name, Manifest]
        if field is None:
            table = self.by_kind.get((api_version, kind), {})
        else:
            table = self.index.bucket((api_version, kind), field, labels[field])
        return [
            obj
            for (ns, _), obj in table.items()
            if (namespace is None or ns == namespace) and has_labels(obj, labels)
        ]

    def owned(self, api_version: str, kind: str, owner_uid: str) -> list[Manifest]:
        """The objects of one kind whose controller owner has ``owner_uid``."""
        return list(self.index.bucket((api_version, kind), OWNER, owner_uid).values())

    def changes(
        self, api_version: str, kind: str, field: str, value: str, since: Cursor | None
    ) -> Delta:
        """What changed in one bucket (``field``: an indexed label, ``OWNER``, or ``EVERY`` with
        the value ``""`` for the whole kind) since ``since``
        (``core.object_index.Index.changes``)."""
        return self.index.changes((api_version, kind), field, value, since)

    def digest(self, api_version: str, kind: str) -> Digest:
        """The ``core.digest.Digest`` of the kind's objects: O(1), kept as they change."""
        return self.digests.of((api_version, kind))

    def table(self, api_version: str, kind: str) -> Mapping[Name, Manifest]:
        """The kind's objects by name (read-only: change them with ``put`` and ``pop``)."""
        return self.by_kind.get((api_version, kind), {})

    def fill(self, api_version: str, kind: str, items: Iterable[Manifest]) -> None:
        """The kind's objects are ``items``, whatever was held before. Into a kind that holds
        nothing (a cache's first list), items all of the kind, each named once, are put and
        indexed in one pass (``Index.added``); any others one by one, as ``put`` does."""
        for name in list(self.table(api_version, kind)):
            self.pop(api_version, kind, name)
        items = list(items)
        fresh = {key_of(obj)[2:]: obj for obj in items}
        kinds = {(obj["apiVersion"], obj["kind"]) for obj in items}
        if len(fresh) != len(items) or kinds != {(api_version, kind)}:
            for obj in items:
                self.put(obj)
            return
        self.by_kind.setdefault((api_version, kind), {}).update(fresh)
        self.index.added((api_version, kind), fresh.items())
        self.digests.added((api_version, kind), items)

    def put(self, obj: Manifest) -> None:
        """Hold ``obj``, whatever was held under its name."""
        key = key_of(obj)
        kind, name = key[:2], key[2:]
        table = self.by_kind.setdefault(kind, {})
        old = table.get(name)
        table[name] = obj
        self.index.moved(kind, name, old, obj)
        self.digests.moved(kind, old, obj)

    def pop(self, api_version: str, kind: str, name: Name) -> Manifest | None:
        """Forget the object ``name`` of a kind; the one held, if any."""
        table = self.by_kind.get((api_version, kind))
        old = None if table is None else table.pop(name, None)
        if old is not None:
            self.index.moved((api_version, kind), name, old, None)
            self.digests.moved((api_version, kind), old, None)
        return old

    def keep(self, obj: Manifest) -> bool:
        """Hold ``obj`` if it is ``newer`` than the held version; whether it was kept."""
        key = key_of(obj)
        if not newer(self.by_kind.get(key[:2], {}).get(key[2:]), obj):
            return False
        self.put(obj)
        return True

    def discard(self, obj: Manifest) -> Manifest | None:
        """Forget the object named like ``obj``; the one held, if any."""
        key = key_of(obj)
        return self.pop(key[0], key[1], key[2:])
