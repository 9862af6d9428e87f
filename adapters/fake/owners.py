"""The store's index of owners: which objects live (by UID), which depend on which, and which
may just have lost their last owner. The garbage collector reads it, so its cost is what
changed (the dependents of the object deleted), not the size of the cluster.

Kubernetes' garbage collector keeps the same graph (``GraphBuilder``: owners to dependents,
fed by the watch) rather than listing the cluster on every pass.
"""

from __future__ import annotations

from collections.abc import Iterable

from katib_resume.core.manifest import Manifest

Key = tuple[str, str, str, str]


def owner_uids(obj: Manifest) -> list[str]:
    return [str(r.get("uid")) for r in obj["metadata"].get("ownerReferences", [])]


class OwnerIndex:
    def __init__(self) -> None:
        self.keys: dict[str, Key] = {}
        """The live objects' UIDs."""
        self.dependents: dict[str, set[Key]] = {}
        """Owner UID -> the objects naming it in their ``ownerReferences``."""
        self.suspects: set[Key] = set()
        """Objects one of whose owners is gone: perhaps orphans (the collector checks)."""
        self.order: dict[Key, int] = {}
        """When each object was created: the collector works in that order, as a list does."""
        self._created = 0

    def __contains__(self, uid: object) -> bool:
        return uid in self.keys

    def put(self, key: Key, obj: Manifest, before: Manifest | None) -> None:
        if before is None:
            self._created += 1
            self.order[key] = self._created
        else:
            self._unlink(key, owner_uids(before))
        self.keys[obj["metadata"]["uid"]] = key
        for uid in owner_uids(obj):
            self.dependents.setdefault(uid, set()).add(key)
            if uid not in self.keys:
                self.suspects.add(key)

    def added(self, objects: Iterable[tuple[Key, Manifest]]) -> None:
        """``put(key, obj, None)`` for each, in order (a store opened: one pass, no calls)."""
        keys, dependents, suspects, order = self.keys, self.dependents, self.suspects, self.order
        for key, obj in objects:
            self._created += 1
            order[key] = self._created
            meta = obj["metadata"]
            keys[meta["uid"]] = key
            for ref in meta.get("ownerReferences", ()):
                uid = str(ref.get("uid"))
                dependents.setdefault(uid, set()).add(key)
                if uid not in keys:
                    suspects.add(key)

    def drop(self, key: Key, obj: Manifest) -> None:
        uid = obj["metadata"]["uid"]
        self.keys.pop(uid, None)
        self.order.pop(key, None)
        self._unlink(key, owner_uids(obj))
        self.suspects.discard(key)
        self.suspects.update(self.dependents.get(uid, ()))

    def dependents_of(self, uid: str) -> list[Key]:
        return self.in_order(self.dependents.get(uid, ()))

    def take_suspects(self) -> list[Key]:
        taken, self.suspects = self.suspects, set()
        return self.in_order(taken)

    def in_order(self, keys: Iterable[Key]) -> list[Key]:
        return sorted((k for k in keys if k in self.order), key=self.order.__getitem__)

    def _unlink(self, key: Key, uids: list[str]) -> None:
        for uid in uids:
            dependents = self.dependents.get(uid)
            if dependents is not None:
                dependents.discard(key)
                if not dependents:
                    del self.dependents[uid]
