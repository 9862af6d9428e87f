"""Object storage of the fake cluster: keys, copies and Kubernetes' bookkeeping fields.

Objects are stored as JSON-like dicts, copied on the way in and out (a caller can never mutate
the cluster behind its back). Every write bumps a cluster-wide ``resourceVersion``; ``generation``
moves only when ``spec`` changes; UIDs are deterministic (a counter) so that runs repeat exactly.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from core.actions import ObjectRef
from core.kube import Manifest

CLUSTER_SCOPED = frozenset({"PersistentVolume", "Namespace", "StorageClass"})


def key_of(ref: ObjectRef) -> tuple[str, str, str, str]:
    namespace = "" if ref.kind in CLUSTER_SCOPED else (ref.namespace or "default")
    return (ref.api_version, ref.kind, namespace, ref.name)


@dataclass
class Store:
    objects: dict[tuple[str, str, str, str], Manifest] = field(default_factory=dict)
    _versions: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _uids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_version(self) -> str:
        return str(next(self._versions))

    def next_uid(self) -> str:
        return f"00000000-0000-4000-8000-{next(self._uids):012d}"

    def find(self, ref: ObjectRef) -> Manifest | None:
        return self.objects.get(key_of(ref))

    def put(self, ref: ObjectRef, obj: Manifest) -> Manifest:
        obj["metadata"]["resourceVersion"] = self.next_version()
        self.objects[key_of(ref)] = obj
        return copy.deepcopy(obj)

    def drop(self, ref: ObjectRef) -> Manifest | None:
        return self.objects.pop(key_of(ref), None)

    def all(self) -> list[Manifest]:
        return list(self.objects.values())
