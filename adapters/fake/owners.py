"""The store's index of owners: which objects live (by UID), which depend on which, and which
may just have lost their last owner. The garbage collector reads it, so its cost is what
changed (the dependents of the object deleted), not the size of the cluster.

Kubernetes' garbage collector keeps the same graph (``GraphBuilder``: owners to dependents,
fed by the watch) rather than listing the cluster on every pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from katib_resume.core.manifest import Manifest

Key = tuple[str, str, str, str]


def owner_uids(obj: Manifest) -> list[str]:
    return [str(r.get("uid")) for r in obj["metadata"].get("ownerReferences", [])]


def _nowhere(uid: object) -> bool:
    return False


class OwnerIndex:
    def __init__(self) -> None:
        self.keys: dict[str, Key] = {}
        """The live objects' UIDs."""
        self.elsewhere: Callable[[object], bool] = _nowhere
        """Whether a UID not in ``keys`` is a live object's all the same: a member of a block
        the store has not read (``store.Store``), which is live though not indexed here."""
        self.dependents: dict[str, set[Key]] = {}
        """Owner UID -> the objects naming it in their ``ownerReferences``."""
        self.suspects: set[Key] = set()
        """Objects one of whose owners is gone: perhaps orphans (the collector checks)."""
        self.order: dict[Key, int] = {}
        """When each object was created: the collector works in that order, as a list does."""
        self._created = 0

    def __contains__(self, uid: object) -> bool:
        """Whether ``uid`` is a live object's (the collector's question)."""
        return uid in self.keys or self.elsewhere(uid)

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

    def added(
        self, objects: Iterable[tuple[Key, Manifest]], created: Iterable[int] | None = None
    ) -> None:
        """``put(key, obj, None)`` for each, in order (a store opened: one pass, no calls).
        With ``created``, each one's place in the creation order is given (its
        ``objects.created`` on disk, so that members read later fall in their places), and
        an object put later comes after every one of them."""
        keys, dependents, suspects, order = self.keys, self.dependents, self.suspects, self.order
        items = list(objects)
        first = self._created + 1
        places = range(first, first + len(items)) if created is None else list(created)
        self._created = max(self._created, max(places, default=0))
        for (key, obj), place in zip(items, places, strict=True):
            order[key] = place
            meta = obj["metadata"]
            keys[meta["uid"]] = key
            for ref in meta.get("ownerReferences", ()):
                uid = str(ref.get("uid"))
                dependents.setdefault(uid, set()).add(key)
                if uid not in keys:
                    suspects.add(key)

    def after(self, place: int) -> None:
        """Every object put from now on comes after ``place`` in the creation order."""
        self._created = max(self._created, place)

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
