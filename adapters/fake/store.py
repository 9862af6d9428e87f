"""Object storage of the fake cluster: keys, copies and Kubernetes' bookkeeping fields.

Objects are stored as the JSON the API server would keep, copied on the way in and out (a caller
can never mutate the cluster behind its back): a tuple comes back a list, and a value JSON cannot
carry (a ``datetime``, a NaN) is a ``TypeError``/``ValueError`` at the write, as it would be in
the real client's serializer. Every change bumps a cluster-wide ``resourceVersion`` and appends
one event to the watch log, whoever made it; a write that changes nothing is a no-op, as in the
API server (which compares the encoded object before writing to etcd): no new version, no event.
UIDs are deterministic (a counter) so that runs repeat exactly.

The store also remembers the state of the one object the last change touched (``undo``): that
is the whole difference between the cluster now and the cluster one change ago, which is what an
informer cache lagging one event behind shows (``lagging`` and ``lagging_all``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter, methodcaller
from typing import Any

from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.lazy import Decoded, Undecoded
from katib_resume.adapters.fake.owners import OwnerIndex
from katib_resume.adapters.fake.sqlite import Journal
from katib_resume.adapters.fake.watch import EventKind, WatchEvent, WatchLog
from katib_resume.core.actions import ObjectRef
from katib_resume.core.digest import Digest, Digests
from katib_resume.core.manifest import Manifest, has_labels

CLUSTER_SCOPED = frozenset({"PersistentVolume", "Namespace", "StorageClass"})
Key = tuple[str, str, str, str]


def as_json(value: Any) -> Any:
    """A copy of ``value`` as the JSON the API server would store: tuples become lists, and a
    value JSON cannot carry (a ``datetime``, a NaN) fails here, as in the client's serializer.
    (Equivalent to ``json.loads(json.dumps(value, allow_nan=False))``, several times faster.)"""
    kind = type(value)
    if kind is dict or kind in _STORED:
        return {
            key if type(key) is str else _json_key(key): as_json(item)
            for key, item in value.items()
        }
    if kind is list or kind is tuple:
        if set(map(type, value)) <= _SCALARS:  # names, counters: copied at C speed
            return list(value)
        return [as_json(item) for item in value]
    if value is None or kind is str or kind is int or kind is bool:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        return value
    if isinstance(value, str):  # a str enum member: JSON writes its value
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    raise TypeError(f"Object of type {kind.__name__} is not JSON serializable")


_SCALARS = frozenset({str, int, bool, type(None)})
"""Leaf types that ``as_json`` keeps as they are (a float is checked for NaN one by one)."""
_STORED = frozenset({Decoded, Undecoded})
"""A stored object's own types (``lazy.py``), which a writer may hand back as it was read."""


def as_json_over(value: Any, stored: Any) -> Any:
    """``as_json(value)``, taking from ``stored`` (JSON the store holds at the same place,
    never mutated) every part equal to it: a status write converts what it changed, not the
    whole status again. Equality is checked at C speed from the top (a part equal to its stored
    place is that place); a list that differs from the stored one in one stretch (grown at its
    end, a name inserted in a sorted list) shares the stored items around it (``_spliced``). As
    in Python's ``==``, numbers that compare equal (``1``, ``1.0``, ``True``) keep the stored
    spelling where they meet (the same place of an equal part, or an item a splice keeps): no
    writer of this codebase changes a field's JSON type.
    """
    kind = type(value)
    if kind is type(stored) and value == stored:
        return stored
    if kind is dict and type(stored) is dict:
        return {
            key if type(key) is str else _json_key(key): as_json_over(item, stored.get(key))
            for key, item in value.items()
        }
    if (kind is list or kind is tuple) and type(stored) is list:
        shared = _spliced(value if kind is list else list(value), stored)
        if shared is not None:
            return shared
    return as_json(value)


def _spliced(value: list[Any], stored: list[Any]) -> list[Any] | None:
    """``as_json(value)`` as ``stored`` with one stretch replaced, or ``None`` if it is not.

    The Experiment's trial-name lists are sorted and written on every status write: one
    finished Trial inserts one name among thousands, which ``as_json`` would check and copy one
    by one. Here the common start and end are found by binary searches that look at one item
    per step (so they assume a list differs from the stored one in one stretch); the stretch
    between is converted, the rest taken from ``stored``, and the result is kept only if it
    equals ``value`` (one comparison at C speed, mostly by identity, as the lists share their
    items): a wrong guess costs that comparison and falls back to ``as_json``, never a wrong
    answer. ``None`` when nothing is shared, too."""
    room = min(len(value), len(stored))
    start = _agreeing(value, stored, room, 0)
    end = _agreeing(value, stored, room - start, -1)
    if not start and not end:
        return None
    joined = list(stored)  # one copy; the stretch replaced in place
    joined[start : len(stored) - end] = as_json(value[start : len(value) - end])
    return joined if joined == value else None


def _agreeing(value: list[Any], stored: list[Any], most: int, side: int) -> int:
    """How many items, at most ``most``, from the start (``side`` 0) or the end (``side``
    -1) of ``value`` and ``stored`` agree, assuming those that agree come first: a binary
    search on whether the ``n``-th item from that side agrees."""
    lo, hi = 0, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        at = mid - 1 if side == 0 else -mid
        mine, held = value[at], stored[at]
        if mine is held or mine == held:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return str(key)
    raise TypeError(f"keys must be str, not {type(key).__name__}")


def key_of(ref: ObjectRef) -> Key:
    namespace = "" if ref.kind in CLUSTER_SCOPED else (ref.namespace or "default")
    return (ref.api_version, ref.kind, namespace, ref.name)


def select(
    objects: Iterable[Manifest],
    api_version: str,
    kind: str,
    namespace: str | None,
    labels: Mapping[str, str],
    *,
    copy: bool = True,
) -> list[Manifest]:
    """Copies of the objects of a kind in ``namespace`` (``None``: all) matching ``labels``
    (with ``copy=False`` the stored objects themselves, for readers that never mutate them)."""
    found = []
    for obj in objects:
        if obj["kind"] != kind or obj["apiVersion"] != api_version:
            continue
        meta = obj["metadata"]
        if namespace is not None and meta.get("namespace") != namespace:
            continue
        if has_labels(obj, labels):
            found.append(clone(obj) if copy else obj)
    return _sorted(found)


def _sorted(objects: list[Manifest]) -> list[Manifest]:
    """``objects`` by namespace, then name, as a list answers them. A list of every object of a
    kind (the informer's first list, a restart's of every Trial) holds thousands, most often in
    one namespace, and comparing (namespace, name) pairs cost three times comparing the names:
    so with one namespace the names alone are compared, each read once at C level."""
    metas = list(map(_META, objects))
    names = list(map(_NAME, metas))
    spaces = list(map(_NAMESPACE, metas))
    keys: list[Any] = names if len(set(spaces)) < 2 else list(zip(spaces, names, strict=True))
    return [objects[index] for index in sorted(range(len(objects)), key=keys.__getitem__)]


_META, _NAME = itemgetter("metadata"), itemgetter("name")
_NAMESPACE = methodcaller("get", "namespace", "")


@dataclass
class Store:
    objects: dict[Key, Manifest] = field(default_factory=dict)
    version: int = 0
    uids: int = 0
    log: WatchLog = field(default_factory=WatchLog)
    undo: tuple[Key, Manifest | None] | None = None
    journal: Journal | None = field(default=None, compare=False, repr=False)
    """The durable copy (``sqlite.py``), written before the change is made here: a write that
    cannot be committed (a full disk) raises and changes nothing. ``None``: memory only."""
    kinds: dict[tuple[str, str], dict[Key, Manifest]] = field(init=False, compare=False, repr=False)
    """The objects by (apiVersion, kind): a list reads its own kind only."""
    owners: OwnerIndex = field(init=False, compare=False, repr=False)
    digests: Digests = field(init=False, compare=False, repr=False)
    """Each kind's ``core.digest.Digest``, kept by every put and drop (and made here from the
    objects a store opens with): what a watch cache compares its own with before listing."""

    def __post_init__(self) -> None:
        """The indexes of the objects given (a state opened), built in one pass each."""
        self.kinds, self.owners, self.digests = {}, OwnerIndex(), Digests()
        for key, obj in self.objects.items():
            self.kinds.setdefault(key[:2], {})[key] = obj
        for kind, table in self.kinds.items():
            self.digests.added(kind, table.values())
        self.owners.added(self.objects.items())

    def next_version(self) -> str:
        self.version += 1
        return str(self.version)

    def next_uid(self) -> str:
        self.uids += 1
        return f"00000000-0000-4000-8000-{self.uids:012d}"

    def find(self, ref: ObjectRef) -> Manifest | None:
        return self.objects.get(key_of(ref))

    def put_json(self, ref: ObjectRef, obj: Manifest, *, copy: bool = True) -> Manifest:
        """Store ``obj``, already JSON, and return a copy of it (``copy=False``: the stored
        object itself, for a caller that only reads it, as a watcher does).

        A write that replaces one part of an object (its status, its spec, its finalizers) need
        not convert the rest again: ``obj`` may share the unchanged parts with the stored object
        it replaces, because a stored object is never mutated (every write stores a new one, and
        readers get copies or, for the watch and the world's controllers, read only). Only
        ``obj`` itself and its ``metadata`` must be new: the version is written into them.
        """
        stored = self.keep_json(ref, obj)
        return clone(stored) if copy else stored

    def keep_json(self, ref: ObjectRef, obj: Manifest) -> Manifest:
        """``put_json`` without the copy: the stored object itself, for the API server's own
        writes whose answer nobody reads (it must never be mutated nor handed out)."""
        key = key_of(ref)
        before = self.objects.get(key)
        if before is not None and _same(before, obj):
            return before
        version = obj["metadata"]["resourceVersion"] = str(self.version + 1)
        if self.journal is not None:
            self.journal.put(key, obj, before, self.uids)
        self.version += 1
        self.objects[key] = obj
        self._index(key, obj, before)
        self.undo = (key, before)
        kind: EventKind = "ADDED" if before is None else "MODIFIED"
        self.log.append(WatchEvent(kind, ObjectRef.of(obj), obj, version))  # never mutated:
        # a write stores a new object; the log's readers only read (``WatchLog.since``)
        return obj

    def drop(self, ref: ObjectRef) -> Manifest | None:
        key = key_of(ref)
        obj = self.objects.get(key)
        if obj is not None:
            version = str(self.version + 1)
            # the object's last state at the deletion's version: only the metadata is new, the
            # rest is shared with the stored object (never mutated, as in ``put_json``)
            last = {**obj, "metadata": {**obj["metadata"], "resourceVersion": version}}
            if self.journal is not None:
                self.journal.drop(key, last, obj)
            del self.objects[key]
            del self.kinds[key[:2]][key]
            self.owners.drop(key, obj)
            self.digests.moved(key[:2], obj, None)
            self.version += 1
            self.undo = (key, obj)
            self.log.append(WatchEvent("DELETED", ObjectRef.of(last), last, version))
        return obj

    def all(self) -> list[Manifest]:
        return list(self.objects.values())

    def of_kind(self, api_version: str, kind: str) -> list[Manifest]:
        return list(self.kinds.get((api_version, kind), {}).values())

    def digest(self, api_version: str, kind: str) -> Digest:
        """The kind's ``core.digest.Digest`` now: O(1)."""
        return self.digests.of((api_version, kind))

    def _index(self, key: Key, obj: Manifest, before: Manifest | None) -> None:
        self.kinds.setdefault(key[:2], {})[key] = obj
        self.owners.put(key, obj, before)
        self.digests.moved(key[:2], before, obj)

    def lagging(self, ref: ObjectRef) -> Manifest | None:
        """The object as it was before the last change."""
        key = key_of(ref)
        if self.undo is not None and self.undo[0] == key:
            return self.undo[1]
        return self.objects.get(key)

    def lagging_all(self) -> list[Manifest]:
        """Every object as it was before the last change."""
        if self.undo is None:
            return self.all()
        key, before = self.undo
        objects = {k: v for k, v in self.objects.items() if k != key}
        if before is not None:
            objects[key] = before
        return list(objects.values())

    def to_dict(self) -> dict[str, Any]:
        undo = None if self.undo is None else {"key": list(self.undo[0]), "object": self.undo[1]}
        return {
            "objects": list(self.objects.values()),
            "version": self.version,
            "uids": self.uids,
            "undo": undo,
            "watch": {"base": self.log.base, "events": [e.to_dict() for e in self.log.events()]},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Store:
        objects = {key_of(ObjectRef.of(obj)): obj for obj in data["objects"]}
        events = [WatchEvent.from_dict(e) for e in data["watch"]["events"]]
        raw = data["undo"]
        undo = None if raw is None else (_key(raw["key"]), raw["object"])
        log = WatchLog(events, int(data["watch"]["base"]))
        return cls(objects, int(data["version"]), int(data["uids"]), log, undo)


def _same(before: Manifest, after: Manifest) -> bool:
    """Equal but for ``resourceVersion`` (the writer may have sent another)."""
    return {**before, "metadata": {**before["metadata"], "resourceVersion": None}} == {
        **after,
        "metadata": {**after["metadata"], "resourceVersion": None},
    }


def _key(raw: list[str]) -> Key:
    api_version, kind, namespace, name = (str(part) for part in raw)
    return (api_version, kind, namespace, name)
