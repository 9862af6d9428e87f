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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from functools import partial, reduce
from operator import itemgetter, methodcaller
from typing import Any

from katib_resume.adapters.fake.chained import Chained
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.lazy import DamagedObject, Decoded, Undecoded
from katib_resume.adapters.fake.owners import OwnerIndex
from katib_resume.adapters.fake.sealed import (
    Sealed,
    Source,
    fields_of,
    record,
    unsealable,
)
from katib_resume.adapters.fake.sqlite import Journal, Stored
from katib_resume.adapters.fake.watch import EventKind, WatchEvent, WatchLog
from katib_resume.core.actions import ObjectRef
from katib_resume.core.blocks import Block
from katib_resume.core.digest import EMPTY, Digest, Digests, digest_of
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
    if isinstance(value, Chained):  # assignments not decoded: their texts are stored JSON
        return value.converted(as_json)
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
    writer of this codebase changes a field's JSON type. Assignments not decoded
    (``chained.py``) that extend the stored ones (a status write's new batch) are the stored
    ones extended by the new items converted: neither is read.
    """
    kind = type(value)
    if kind is type(stored) and value == stored:
        return stored
    if kind is Chained:
        if type(stored) is Chained and value.extends(stored):
            return stored.extended(as_json(list(value[len(stored) :])))
        return as_json(value)
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
    """The objects of a cluster, and its watch (see the module docstring).

    A store opened for writing from a state with blocks (``core.blocks``: settled objects sealed
    together on disk) holds each block unread, as its row, until something needs a member: a
    look-up by a key it holds (``find``), a list of its kind (in its namespace, with labels its
    fields do not rule out), every object (``all``), a deletion of the object owning its
    members, or a ``load`` of the ``Block`` handed out. Its members are then held one by one,
    as any other object, in their places in the creation order, and the store remembers which
    block each came from (``member_of``): a write of one takes it out of its block in the same
    transaction. Every answer is what a store holding every member would give; a digest counts
    an unread block by its stored digest, which equals its members' (``core.digest``).
    """

    objects: dict[Key, Manifest] = field(default_factory=dict)
    """The objects held (a member of a block not read is not here), in the order they were
    created."""
    version: int = 0
    uids: int = 0
    log: WatchLog = field(default_factory=WatchLog)
    undo: tuple[Key, Manifest | None] | None = None
    journal: Journal | None = field(default=None, compare=False, repr=False)
    """The durable copy (``sqlite.py``), written before the change is made here: a write that
    cannot be committed (a full disk) raises and changes nothing. ``None``: memory only."""
    source: Source | None = field(default=None, compare=False, repr=False)
    """Where the unread blocks' members are (``rows.Members``: the writer's database)."""
    created: InitVar[Sequence[int] | None] = None
    """Each object's place in the creation order, on disk (``objects.created``), in the order
    of ``objects``: where a member read later falls among them. ``None``: as given."""
    kinds: dict[tuple[str, str], dict[Key, Manifest]] = field(init=False, compare=False, repr=False)
    """The objects by (apiVersion, kind): a list reads its own kind only."""
    owners: OwnerIndex = field(init=False, compare=False, repr=False)
    digests: Digests = field(init=False, compare=False, repr=False)
    """Each kind's ``core.digest.Digest`` of the objects held, kept by every put and drop (and
    made here from the objects a store opens with); ``digest`` adds the unread blocks'."""
    sealed: Sealed = field(init=False, compare=False, repr=False)
    """The blocks, unread and read (``sealed.py``)."""

    def __post_init__(self, created: Sequence[int] | None) -> None:
        """The indexes of the objects given (a state opened), built in one pass each; the
        blocks of ``source`` kept unread, but for those whose owner is gone (their members are
        the collector's suspects, as they would be if held)."""
        self.kinds, self.owners, self.digests = {}, OwnerIndex(), Digests()
        self.sealed = Sealed()
        for key, obj in self.objects.items():
            self.kinds.setdefault(key[:2], {})[key] = obj
        for kind, table in self.kinds.items():
            self.digests.added(kind, table.values())
        self.owners.added(self.objects.items(), created)
        if self.source is None:
            return
        self.owners.after(self.version)  # a member was created at a version before it
        self.owners.elsewhere = self._unread_uid
        for row in self.source.blocks():
            self.sealed.hold(self._block(row))
        orphaned = [uid for uid in self.sealed.owners() if uid not in self.owners]
        for uid in orphaned:
            self._read_all(self.sealed.owned_by(uid))

    @property
    def blocks(self) -> dict[int, Block]:
        """The unread blocks, by id."""
        return self.sealed.unread

    @property
    def member_of(self) -> dict[Key, int]:
        """Each held member of a block, and its block (a write takes it out)."""
        return self.sealed.member_of

    def next_version(self) -> str:
        self.version += 1
        return str(self.version)

    def next_uid(self) -> str:
        self.uids += 1
        return f"00000000-0000-4000-8000-{self.uids:012d}"

    def find(self, ref: ObjectRef) -> Manifest | None:
        return self._get(key_of(ref))

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
        before = self._get(key)
        if before is not None and _same(before, obj):
            return before
        version = obj["metadata"]["resourceVersion"] = str(self.version + 1)
        out = None if before is None else self.sealed.leaving(key, before)
        if self.journal is not None:
            self.journal.put(key, obj, before, self.uids, out)
        self.version += 1
        self.objects[key] = obj
        self._index(key, obj, before)
        self.sealed.left(key, out)
        self.undo = (key, before)
        kind: EventKind = "ADDED" if before is None else "MODIFIED"
        self.log.append(WatchEvent(kind, ObjectRef.of(obj), obj, version))  # never mutated:
        # a write stores a new object; the log's readers only read (``WatchLog.since``)
        return obj

    def drop(self, ref: ObjectRef) -> Manifest | None:
        key = key_of(ref)
        obj = self._get(key)
        if obj is not None:
            # the blocks it owns are read first: their members are the collector's suspects
            self._read_all(self.sealed.owned_by(obj["metadata"]["uid"]))
            version = str(self.version + 1)
            # the object's last state at the deletion's version: only the metadata is new, the
            # rest is shared with the stored object (never mutated, as in ``put_json``)
            last = {**obj, "metadata": {**obj["metadata"], "resourceVersion": version}}
            out = self.sealed.leaving(key, obj)
            if self.journal is not None:
                self.journal.drop(key, last, obj, out)
            del self.objects[key]
            del self.kinds[key[:2]][key]
            self.owners.drop(key, obj)
            self.digests.moved(key[:2], obj, None)
            self.sealed.left(key, out)
            self.version += 1
            self.undo = (key, obj)
            self.log.append(WatchEvent("DELETED", ObjectRef.of(last), last, version))
        return obj

    def all(self) -> list[Manifest]:
        self._read_all(list(self.sealed.unread))
        return list(self.objects.values())

    def of_kind(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Manifest]:
        """Every object of a kind (the blocks that may hold one in ``namespace`` carrying
        ``labels`` read first; the objects held of the kind are all answered, whatever their
        namespace and labels: ``select`` picks)."""
        self._read_all(self.sealed.under((api_version, kind), namespace, labels))
        return self.unsealed(api_version, kind)

    def unsealed(self, api_version: str, kind: str) -> list[Manifest]:
        """The objects of a kind held now, without reading a block (``blocks_of``: the rest)."""
        return list(self.kinds.get((api_version, kind), {}).values())

    def blocks_of(self, api_version: str, kind: str) -> list[Block]:
        """The unread blocks of a kind, oldest first (a cache's first list holds them)."""
        ids = self.sealed.under((api_version, kind))
        return [self.sealed.unread[ident] for ident in sorted(ids)]

    def every_block(self) -> list[Block]:
        """Every block of this store, unread or read, as it stands on disk now, by id (what a
        sealer merges into: ``merge``): a read one answers ``load`` and ``holds`` for the
        members it has now, as its digest counts them."""
        read = [self._block(row, now=True) for row in self.sealed.read.values()]
        return sorted([*self.sealed.unread.values(), *read], key=lambda block: block.id)

    def digest(self, api_version: str, kind: str) -> Digest:
        """The kind's ``core.digest.Digest`` now, the unread blocks' members included: O(1)."""
        kind_ = (api_version, kind)
        return self.digests.of(kind_).plus(self.sealed.sum(kind_))

    def dependents_of(self, uid: str) -> list[Key]:
        """The objects naming ``uid`` as an owner, in the order they were created (the blocks
        it owns read first)."""
        self._read_all(self.sealed.owned_by(uid))
        return self.owners.dependents_of(uid)

    def _index(self, key: Key, obj: Manifest, before: Manifest | None) -> None:
        self.kinds.setdefault(key[:2], {})[key] = obj
        self.owners.put(key, obj, before)
        self.digests.moved(key[:2], before, obj)

    def lagging(self, ref: ObjectRef) -> Manifest | None:
        """The object as it was before the last change."""
        key = key_of(ref)
        if self.undo is not None and self.undo[0] == key:
            return self.undo[1]
        return self._get(key)

    def lagging_all(self) -> list[Manifest]:
        """Every object as it was before the last change."""
        if self.undo is None:
            return self.all()
        self._read_all(list(self.sealed.unread))
        key, before = self.undo
        objects = {k: v for k, v in self.objects.items() if k != key}
        if before is not None:
            objects[key] = before
        return list(objects.values())

    def seal(self, keys: Iterable[Key], note: str, detail: str = "") -> Block:
        """The held objects ``keys`` made one block with ``note`` (and ``detail``, read when
        the block's ``detail`` is called: what its sealer may need later but not at an open),
        written in one transaction.
        They stay held (as members of the block read: nothing in memory moves); the next
        process that opens the state holds them as the block, unread. ``ValueError`` unless
        there is at least one, and all are held, of one apiVersion, kind and namespace, under
        the same index fields, none deleting, none owned but by the owner those fields name,
        none an owner of another object, and none a member of a block already."""
        members = self._sealable(list(dict.fromkeys(keys)))
        key, first = members[0]
        objects = [obj for _, obj in members]
        row = Stored(0, *key[:3], fields_of(first), digest_of(objects), note)
        if self.journal is None:
            row = row._replace(id=self.sealed.last + 1)
            self.sealed.details[row.id] = detail
        else:
            uids = [(k, str(obj["metadata"]["uid"])) for k, obj in members]
            row = row._replace(id=self.journal.seal(row, uids, detail))
        self.sealed.made(row, members)
        return self._block(row)

    def merge(self, ids: Iterable[int], note: str, detail: str = "") -> Block:
        """The blocks ``ids`` made one block with ``note`` and ``detail`` (``seal``), in one
        transaction: unread if they
        all were, else read (each one read first). ``ValueError`` unless there is at least one,
        and all are blocks of this store, of one apiVersion, kind, namespace and fields. A
        ``Block`` handed out for one of them answers ``load`` and ``holds`` no more (merge what
        no cache holds)."""
        merged = list(dict.fromkeys(ids))
        rows = [self._stored(ident) for ident in merged]
        if not rows or len({(*r[1:4], r.fields) for r in rows}) > 1:
            raise ValueError(f"blocks {merged} are not of one kind, namespace and fields")
        digest = reduce(Digest.plus, (r.digest for r in rows), EMPTY)
        unread = all(ident in self.sealed.unread for ident in merged)
        if not unread:
            self._read_all([ident for ident in merged if ident in self.sealed.unread])
        row = rows[0]._replace(digest=digest, note=note)
        if self.journal is None:
            ident = self.sealed.last + 1
            self.sealed.details[ident] = detail
        else:
            ident = self.journal.merge(merged, row, detail)
        row = row._replace(id=ident)
        if unread:
            for old in merged:
                self.sealed.release(old)
            block = self._block(row)
            self.sealed.hold(block)
            return block
        members = [key for old in merged for key in self.sealed.members[old]]
        for old in merged:
            self.sealed.forget(old)
        members.sort(key=self.owners.order.__getitem__)
        self.sealed.made(row, [(key, self.objects[key]) for key in members])
        return self._block(row)

    def to_dict(self) -> dict[str, Any]:
        undo = None if self.undo is None else {"key": list(self.undo[0]), "object": self.undo[1]}
        return {
            "objects": self.all(),
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

    def _get(self, key: Key) -> Manifest | None:
        """The object at ``key``, its block read first if an unread one holds it (one look-up
        by key on disk, only when an unread block is where it would be)."""
        found = self.objects.get(key)
        if found is None and self.sealed.at(key[:3]):
            assert self.source is not None
            ident = self.source.block_of(key)
            if ident in self.sealed.unread:
                self._read_all([ident])
                found = self.objects.get(key)
        return found

    def _read_all(self, ids: Iterable[int]) -> None:
        """The unread blocks ``ids`` read: their members held in their places, indexed, and
        counted in the digests instead of their blocks (a ``DamagedObject`` if they do not add
        up to the block's digest: the state's file is damaged)."""
        for ident in ids:
            block = self.sealed.release(ident)
            assert self.source is not None
            members = self.source.members(ident)
            kind = (block.api_version, block.kind)
            before = self.digests.of(kind)
            pairs = [(key, obj) for key, _, obj in members]
            self.owners.added(pairs, [created for _, created, _ in members])
            _placed(self.objects, pairs, self.owners.order)
            _placed(self.kinds.setdefault(kind, {}), pairs, self.owners.order)
            self.digests.added(kind, [obj for _, obj in pairs])
            self.sealed.made(record(block), pairs)
            after = self.digests.of(kind)
            read = after.minus(before)
            if read != block.digest:
                raise DamagedObject(f"block {ident} holds {read}, its record says {block.digest}")

    def _unread_uid(self, uid: object) -> bool:
        """Whether ``uid`` is a member's in a block not read (one look-up on disk)."""
        if not self.sealed.unread or type(uid) is not str:
            return False
        assert self.source is not None
        return self.source.block_of_uid(uid) in self.sealed.unread

    def _block(self, row: Stored, *, now: bool = False) -> Block:
        """The ``Block`` of ``row``, answering ``load`` and ``holds`` through this store for
        its members as they were when it was read, as the holder it was handed out to counts
        them (``now``: for those it has now, as ``row`` counts them), and ``detail``."""
        load = partial(self._load, row.id, now)
        holds = partial(self._holds, row.id, now)
        detail = partial(self._detail, row.id)
        where = (row.api_version, row.kind, row.namespace)
        return Block(
            row.id, *where, row.fields, row.digest, row.note, load=load, holds=holds, detail=detail
        )

    def _detail(self, ident: int) -> str:
        """The detail of block ``ident`` (kept on disk, or in memory without a journal)."""
        if self.journal is None:
            if ident not in self.sealed.details:
                raise ValueError(f"no block {ident} in this store")
            return self.sealed.details[ident]
        return self.journal.detail(ident)

    def _stored(self, ident: int) -> Stored:
        block = self.sealed.unread.get(ident)
        if block is not None:
            return record(block)
        if ident not in self.sealed.read:
            raise ValueError(f"no block {ident} in this store")
        return self.sealed.read[ident]

    def _load(self, ident: int, now: bool) -> list[Manifest]:
        """The members of block ``ident`` as they were when it was read (``now``: those it has
        now, as stored now), read into this store first (the stored objects themselves: never
        mutated). A member written since has left the block, but a holder of the block as
        handed out counts it among the members, at the version it had: its digest does."""
        if ident in self.sealed.unread:
            self._read_all([ident])
        as_read = self.sealed.as_read.get(ident)
        if as_read is None:
            raise ValueError(f"block {ident} was merged into another")
        if now:
            return [self.objects[key] for key in self.sealed.members[ident]]
        return list(as_read.values())

    def _holds(self, ident: int, now: bool, name: str) -> bool:
        """Whether block ``ident`` holds a member named ``name``: unread, one look-up by key on
        disk; read, whether it held one when read (``now``: whether it holds one now), as
        ``_load`` answers."""
        block = self.sealed.unread.get(ident)
        if block is not None:
            assert self.source is not None
            key = (block.api_version, block.kind, block.namespace, name)
            return self.source.block_of(key) == ident
        as_read = self.sealed.as_read.get(ident)
        if as_read is None:
            raise ValueError(f"block {ident} was merged into another")
        if now:
            return any(key[3] == name for key in self.sealed.members[ident])
        return name in as_read

    def _sealable(self, keys: list[Key]) -> list[tuple[Key, Manifest]]:
        """The objects ``keys`` in the order they were created, if they may be sealed into
        one block (``seal``); else ``ValueError``."""
        if not keys:
            raise ValueError("a block needs at least one member")
        if len({key[:3] for key in keys}) > 1:
            raise ValueError("a block's members are of one apiVersion, kind and namespace")
        members = []
        for key in keys:
            obj = self.objects.get(key)
            if obj is None or key in self.sealed.member_of:
                raise ValueError(f"{key} is not held, or is a member of a block already")
            uid = obj["metadata"]["uid"]
            owning = bool(self.owners.dependents.get(uid) or self.sealed.owned_by(uid))
            refused = unsealable(obj, owning)
            if refused:
                raise ValueError(f"{key} {refused}")
            members.append((key, obj))
        fields = {fields_of(obj) for _, obj in members}
        if len(fields) > 1:
            raise ValueError("a block's members are under the same index fields")
        members.sort(key=lambda member: self.owners.order[member[0]])
        return members


def _placed(
    table: dict[Key, Manifest], added: list[tuple[Key, Manifest]], order: Mapping[Key, int]
) -> None:
    """``added`` put in ``table`` (ordered by creation, ``order``) at their places."""
    if not added:
        return
    last = next(reversed(table), None)
    if last is not None and order[last] > order[added[0][0]]:
        items = [*table.items(), *added]
        items.sort(key=lambda item: order[item[0]])
        table.clear()
        table.update(items)
    else:
        table.update(added)


def _same(before: Manifest, after: Manifest) -> bool:
    """Equal but for ``resourceVersion`` (the writer may have sent another)."""
    return {**before, "metadata": {**before["metadata"], "resourceVersion": None}} == {
        **after,
        "metadata": {**after["metadata"], "resourceVersion": None},
    }


def _key(raw: list[str]) -> Key:
    api_version, kind, namespace, name = (str(part) for part in raw)
    return (api_version, kind, namespace, name)
