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
is the cache's own object: readers never mutate it (as with client-go's informer caches).

A kind may also hold unread blocks (``core.blocks``: settled objects sealed together, handed
over by a first list as one record each, ``hold``). A block costs O(1) to hold and answers for
its members until an answer needs one of them: a look-up of a name it ``holds``, a selection or
a bucket it is under, its kind's table, a write to a member. That answer reads the block
(``load``), holds its members one by one from then on, as a first list puts them, and then
answers as if they had always been held; its buckets get new epochs (``core.object_index``).
A reader that can take members as a block asks ``changes(..., blocks=True)`` and gets the
unread blocks under a bucket in a complete ``Delta`` instead. The kind's digest counts each
unread block by its stored digest, which equals its members' (``core.digest``), so reading one
leaves the digest as it is. Pure: no I/O (``load`` and ``holds`` are the block holder's), no
clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from katib_resume.core.blocks import Block
from katib_resume.core.digest import EMPTY, Digest, Digests
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
        self,
        api_version: str,
        kind: str,
        field: str,
        value: str,
        since: Cursor | None,
        *,
        blocks: bool = False,
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
        """The objects held one by one (no unread block's members). Read-only outside this
        class: every change goes through ``put``/``pop`` (the index)."""
        self.blocks: dict[Kind, dict[str, dict[int, Block]]] = {}
        """The unread blocks, by kind, then namespace, then id (read-only outside this class:
        ``hold``); a kind or namespace left without one is dropped."""
        self.index = Index(tuple(indexed_labels))
        self.digests = Digests()
        """Of the objects held one by one, kept by ``put``/``pop`` as the index is."""
        self._sealed: dict[Kind, Digest] = {}
        """The sum of each kind's unread blocks' digests."""

    def hold(self, block: Block) -> None:
        """Keep ``block`` unread, in O(1): its members answer every read as if held, and are
        read the first time an answer needs one of them. None of them may be held (a first
        list hands each object over once: in a block or as an item); its ``fields`` are each
        member's ``Index.fields`` under this cache's indexed labels."""
        kind = (block.api_version, block.kind)
        if (EVERY, "") not in block.fields:
            raise ValueError(f"block {block.id}: fields {sorted(block.fields)} are no object's")
        by_namespace = self.blocks.setdefault(kind, {})
        if any(block.id in ids for ids in by_namespace.values()):
            raise ValueError(f"block {block.id} of {kind} is held already")
        by_namespace.setdefault(block.namespace, {})[block.id] = block
        self.index.held(kind, block)
        self._sealed[kind] = self._sealed.get(kind, EMPTY).plus(block.digest)

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Manifest | None:
        key = (namespace or "", name)
        found = self.by_kind.get((api_version, kind), {}).get(key)
        if found is None and self.blocks:
            found = self._member((api_version, kind), key)
        return found

    def select(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> list[Manifest]:
        """The objects of one kind, in ``namespace`` (``None``: all), carrying ``labels``: from
        the bucket of an indexed label when ``labels`` has one, else by a scan of the kind."""
        if self.blocks:
            self._read_matching((api_version, kind), namespace, labels)
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
        self._read_under((api_version, kind), OWNER, owner_uid)
        return list(self.index.bucket((api_version, kind), OWNER, owner_uid).values())

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
        """What changed in one bucket (``field``: an indexed label, ``OWNER``, or ``EVERY`` with
        the value ``""`` for the whole kind) since ``since``
        (``core.object_index.Index.changes``). ``blocks``: the reader takes the unread blocks
        under the bucket as blocks (``Delta.blocks``, in a complete delta), so none is read;
        otherwise they are read first, and every member is an object like any other."""
        if not blocks:
            self._read_under((api_version, kind), field, value)
        return self.index.changes((api_version, kind), field, value, since)

    def digest(self, api_version: str, kind: str) -> Digest:
        """The ``core.digest.Digest`` of the kind's objects, unread blocks' members included:
        O(1), kept as they change."""
        held = self.digests.of((api_version, kind))
        sealed = self._sealed.get((api_version, kind))
        return held if sealed is None else held.plus(sealed)

    def table(self, api_version: str, kind: str) -> Mapping[Name, Manifest]:
        """The kind's objects by name (read-only: change them with ``put`` and ``pop``), its
        unread blocks read first."""
        for block in self._blocks_of((api_version, kind), None):
            self._read((api_version, kind), block)
        return self.by_kind.get((api_version, kind), {})

    def fill(self, api_version: str, kind: str, items: Iterable[Manifest]) -> None:
        """The kind's objects are ``items``, whatever was held before (its unread blocks
        forgotten unread). Into a kind that holds nothing (a cache's first list), items all of
        the kind, each named once, are put and indexed in one pass (``Index.added``); any
        others one by one, as ``put`` does."""
        for block in self._blocks_of((api_version, kind), None):
            self._forget((api_version, kind), block)
        for name in list(self.by_kind.get((api_version, kind), {})):
            self.pop(api_version, kind, name)
        items = list(items)
        if not self._added((api_version, kind), items):
            for obj in items:
                self.put(obj)

    def put(self, obj: Manifest) -> None:
        """Hold ``obj``, whatever was held under its name (a member of an unread block: the
        block is read first, and ``obj`` replaces that member)."""
        key = key_of(obj)
        kind, name = key[:2], key[2:]
        table = self.by_kind.setdefault(kind, {})
        old = table.get(name)
        if old is None and self.blocks:
            old = self._member(kind, name)
        table[name] = obj
        self.index.moved(kind, name, old, obj)
        self.digests.moved(kind, old, obj)

    def pop(self, api_version: str, kind: str, name: Name) -> Manifest | None:
        """Forget the object ``name`` of a kind; the one held, if any (a member of an unread
        block: read with its block first)."""
        table = self.by_kind.get((api_version, kind))
        if self.blocks and (table is None or name not in table):
            self._member((api_version, kind), name)
            table = self.by_kind.get((api_version, kind))
        old = None if table is None else table.pop(name, None)
        if old is not None:
            self.index.moved((api_version, kind), name, old, None)
            self.digests.moved((api_version, kind), old, None)
        return old

    def keep(self, obj: Manifest) -> bool:
        """Hold ``obj`` if it is ``newer`` than the held version; whether it was kept."""
        key = key_of(obj)
        held = self.by_kind.get(key[:2], {}).get(key[2:])
        if held is None and self.blocks:
            held = self._member(key[:2], key[2:])
        if not newer(held, obj):
            return False
        self.put(obj)
        return True

    def discard(self, obj: Manifest) -> Manifest | None:
        """Forget the object named like ``obj``; the one held, if any."""
        key = key_of(obj)
        return self.pop(key[0], key[1], key[2:])

    def _member(self, kind: Kind, name: Name) -> Manifest | None:
        """The object ``name`` of ``kind`` if an unread block holds it, read with its block."""
        for block in self.blocks.get(kind, {}).get(name[0], {}).values():
            if block.holds(name[1]):
                self._read(kind, block)
                return self.by_kind.get(kind, {}).get(name)
        return None

    def _read_matching(self, kind: Kind, namespace: str | None, labels: Mapping[str, str]) -> None:
        """Read the unread blocks of ``kind`` whose members may carry ``labels``: those in
        ``namespace`` (``None``: any) under the bucket of each indexed label ``labels`` has
        (every member of a block carries the same indexed labels, its ``fields``)."""
        wanted = {(label, labels[label]) for label in self.index.labels if label in labels}
        for block in self._blocks_of(kind, namespace):
            if wanted <= block.fields:
                self._read(kind, block)

    def _read_under(self, kind: Kind, field: str, value: str) -> None:
        if self.blocks:
            for block in self.index.blocks(kind, field, value):
                self._read(kind, block)

    def _blocks_of(self, kind: Kind, namespace: str | None) -> list[Block]:
        by_namespace = self.blocks.get(kind, {})
        if namespace is not None:
            return list(by_namespace.get(namespace, {}).values())
        return [block for ids in by_namespace.values() for block in ids.values()]

    def _read(self, kind: Kind, block: Block) -> None:
        """Hold ``block``'s members one by one from now on: in one pass, as a first list puts
        them, or, when one is held already (a block that did not keep to ``hold``'s terms),
        one by one, the newer version kept. A block whose ``load`` fails stays held."""
        members = list(block.load())
        self._forget(kind, block)
        if not self._added(kind, members):
            for obj in members:
                self.keep(obj)

    def _forget(self, kind: Kind, block: Block) -> None:
        """Hold ``block`` no more (its members neither: ``_read`` puts them)."""
        by_namespace = self.blocks[kind]
        ids = by_namespace[block.namespace]
        del ids[block.id]
        if not ids:
            del by_namespace[block.namespace]
            if not by_namespace:
                del self.blocks[kind]
        if kind in self.blocks:
            self._sealed[kind] = self._sealed[kind].minus(block.digest)
        else:
            del self._sealed[kind]
        self.index.unheld(kind, block)

    def _added(self, kind: Kind, items: list[Manifest]) -> bool:
        """Put ``items`` in one pass (``Index.added``, ``Digests.added``) if all are of
        ``kind``, each named once, and none held; whether they were."""
        if not items:
            return True
        fresh = {key_of(obj)[2:]: obj for obj in items}
        kinds = {(obj["apiVersion"], obj["kind"]) for obj in items}
        table = self.by_kind.get(kind, {})
        if len(fresh) != len(items) or kinds != {kind} or not table.keys().isdisjoint(fresh):
            return False
        self.by_kind.setdefault(kind, {}).update(fresh)
        self.index.added(kind, fresh.items())
        self.digests.added(kind, items)
        return True
