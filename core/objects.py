"""Cluster objects kept by kind, then by name: the one data structure of both watch caches.

The embedded runtime's ``app.loop.informer.Informer`` and the Kubernetes adapter's
``adapters.k8s.store.Store`` keep the same thing, the objects a watch reported and the answers
to the controller's own writes, and answer the same two reads of the ``Cluster`` port: one
object by name, and the objects of one kind in a namespace with some labels. ``Objects`` is that
structure, with the rule for which of two versions of an object is kept (``newer``); the caches
add what differs around it (the informer: a cursor into the fake's change log; the store: a
lock, its own change log and the UIDs it saw deleted).

Objects are kept by kind first, so a list (every reconcile lists its Trials) reads its own kind
only, never the whole cache. What is handed out is the cache's own object: readers never mutate
it (as with client-go's informer caches). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from katib_resume.core.kube import Manifest, has_labels

Kind = tuple[str, str]
Name = tuple[str, str]
"""An object's kind (apiVersion, kind) and its name within the kind (namespace or "", name)."""
Key = tuple[str, str, str, str]
"""(apiVersion, kind, namespace, name)."""


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
    def __init__(self) -> None:
        self.by_kind: dict[Kind, dict[Name, Manifest]] = {}

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Manifest | None:
        return self.by_kind.get((api_version, kind), {}).get((namespace or "", name))

    def select(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> list[Manifest]:
        """The objects of one kind, in ``namespace`` (``None``: all), carrying ``labels``."""
        return [
            obj
            for (ns, _), obj in self.by_kind.get((api_version, kind), {}).items()
            if (namespace is None or ns == namespace) and has_labels(obj, labels)
        ]

    def of_kind(self, api_version: str, kind: str) -> dict[Name, Manifest]:
        """The kind's own table, to be changed in place (a relist's replacement)."""
        return self.by_kind.setdefault((api_version, kind), {})

    def fill(self, api_version: str, kind: str, items: Iterable[Manifest]) -> None:
        """The kind's objects are ``items``, whatever was held before."""
        self.by_kind[(api_version, kind)] = {key_of(obj)[2:]: obj for obj in items}

    def keep(self, obj: Manifest) -> bool:
        """Hold ``obj`` if it is ``newer`` than the held version; whether it was kept."""
        key = key_of(obj)
        of_kind = self.of_kind(*key[:2])
        if not newer(of_kind.get(key[2:]), obj):
            return False
        of_kind[key[2:]] = obj
        return True

    def discard(self, obj: Manifest) -> Manifest | None:
        """Forget the object named like ``obj``; the one held, if any."""
        key = key_of(obj)
        return self.by_kind.get(key[:2], {}).pop(key[2:], None)
