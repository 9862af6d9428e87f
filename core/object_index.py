"""The index of ``core.objects.Objects``: objects by an indexed label's value or by controller
owner, and which of them changed since a reader last looked.

A bucket holds the objects of one kind that share one indexed value (the experiment label
``e1``, the owner UID ``u1``), by name, and remembers when each name in it last changed (was
added, replaced or removed), in the order of those changes. A reader that keeps something
derived from a bucket (the reconcile shell keeps each Experiment's trial ledger) asks for the
names changed since its cursor and pays for those only; the newest changes are at the end of
the bucket's record, so the walk stops at the first change the reader has seen.

A bucket that empties is dropped; one made again later has a new epoch, and a cursor of an
older epoch gets the whole bucket (``Delta.complete``), as does a reader with no cursor. A
removed name stays in the record (so a reader behind learns of the removal) until its bucket
empties.

A bucket also holds the unread blocks (``core.blocks``) whose members it would hold: a block
stands in every bucket of its ``fields`` until ``core.objects.Objects`` reads it. A complete
``Delta`` hands them over (``Delta.blocks``) to a reader that can take members as a block;
holding a block, forgetting one and reading one give each of its buckets a new epoch, since a
reader's record of the bucket counted the block as a block (or without it) and must start
again from the whole bucket. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter

from katib_resume.core.blocks import Block
from katib_resume.core.index_fill import Positions, placed
from katib_resume.core.manifest import Manifest

Kind = tuple[str, str]
Name = tuple[str, str]
Cursor = tuple[int, int]
"""(the bucket's epoch, the last change the reader has seen)."""
OWNER = "@controller-owner"
"""The index field of the controller owner's UID (not a label: no label key has an ``@``)."""
EVERY = "@kind"
"""The index field every object has, with the value ``""``: its bucket is the whole kind, so a
reader of the kind's changes (the embedded runtime's suggestion services) pays per change."""
_EMPTY: Mapping[Name, Manifest] = {}
_NAME, _OBJECT = itemgetter(0), itemgetter(1)


@dataclass(frozen=True, slots=True)
class Delta:
    """A bucket's changes since a cursor: the objects as now held, the names no longer held,
    and the cursor to ask from next time. ``complete``: ``changed`` and ``blocks`` are the whole
    bucket (no cursor, or one of a bucket since renewed or dropped), and a reader starts again
    from them. ``blocks``: the unread blocks under the bucket, whose members are in no
    ``changed`` (only in a complete delta, and only for a reader that asked for blocks: an
    unread block never changes, and reading one renews its buckets)."""

    cursor: Cursor
    changed: tuple[Manifest, ...]
    removed: tuple[Name, ...]
    complete: bool
    blocks: tuple[Block, ...] = ()


class _Bucket:
    __slots__ = ("blocks", "epoch", "items", "touched")

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.items: dict[Name, Manifest] = {}
        self.touched: dict[Name, int] = {}
        """Name -> serial of its last change, oldest first (re-inserted on every change)."""
        self.blocks: dict[int, Block] = {}
        """The unread blocks under the bucket, by id."""

    def touch(self, name: Name, serial: int) -> None:
        self.touched.pop(name, None)
        self.touched[name] = serial

    def since(self, serial: int) -> list[Name]:
        names = []
        for name, at in reversed(self.touched.items()):
            if at <= serial:
                break
            names.append(name)
        return names


class Index:
    def __init__(self, labels: tuple[str, ...]) -> None:
        self.labels = labels
        self.serial = 0
        self._buckets: dict[tuple[Kind, str, str], _Bucket] = {}

    def bucket(self, kind: Kind, field: str, value: str) -> Mapping[Name, Manifest]:
        found = self._buckets.get((kind, field, value))
        return _EMPTY if found is None else found.items

    def blocks(self, kind: Kind, field: str, value: str) -> tuple[Block, ...]:
        """The unread blocks under a bucket."""
        found = self._buckets.get((kind, field, value))
        return () if found is None else tuple(found.blocks.values())

    def held(self, kind: Kind, block: Block) -> None:
        """``block`` stands, unread, in each bucket of its ``fields``: each a new epoch."""
        self.serial += 1
        for field, value in block.fields:
            bucket = self._buckets.get((kind, field, value)) or self._new(kind, field, value)
            bucket.epoch = self.serial
            bucket.blocks[block.id] = block

    def unheld(self, kind: Kind, block: Block) -> None:
        """``block`` stands in its buckets no more (read or forgotten): each a new epoch, or
        dropped if nothing else is left in it."""
        self.serial += 1
        for field, value in block.fields:
            key = (kind, field, value)
            bucket = self._buckets[key]
            del bucket.blocks[block.id]
            if bucket.items or bucket.blocks:
                bucket.epoch = self.serial
            else:
                del self._buckets[key]

    def fields(self, obj: Manifest | None) -> set[tuple[str, str]]:
        """The (field, value) pairs ``obj`` is indexed under."""
        if obj is None:
            return set()
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        found = {(key, str(labels[key])) for key in self.labels if key in labels}
        found.add((EVERY, ""))
        for ref in meta.get("ownerReferences") or ():
            if ref.get("controller") and ref.get("uid"):
                found.add((OWNER, str(ref["uid"])))
                break
        return found

    def moved(self, kind: Kind, name: Name, old: Manifest | None, new: Manifest | None) -> None:
        """The object ``name`` of ``kind`` was ``old`` and is now ``new`` (None: absent)."""
        self.serial += 1
        before, after = self.fields(old), self.fields(new)
        for field, value in before - after:
            key = (kind, field, value)
            bucket = self._buckets[key]
            del bucket.items[name]
            bucket.touch(name, self.serial)
            if not bucket.items and not bucket.blocks:
                del self._buckets[key]
        if new is None:
            return
        for field, value in after:
            bucket = self._buckets.get((kind, field, value)) or self._new(kind, field, value)
            bucket.items[name] = new
            bucket.touch(name, self.serial)

    def added(self, kind: Kind, objects: Iterable[tuple[Name, Manifest]]) -> None:
        """``moved(kind, name, None, obj)`` for each of ``objects``, in order, none of them
        held now (a cache's first list, a block read): the same buckets, serials and epochs, in
        one pass without the comparison with a previous state."""
        items = list(objects)
        names, held = list(map(_NAME, items)), list(map(_OBJECT, items))
        groups = placed(self.labels, (EVERY, ""), OWNER, held)
        if groups is None:
            groups = self._placed(held)
        base = self.serial + 1  # the serial of the first object
        for (field, value), positions in groups.items():
            bucket = self._buckets.get((kind, field, value))
            if bucket is None:
                bucket = self._buckets[(kind, field, value)] = _Bucket(base + positions[0])
            objects_at: Iterable[Manifest]
            serials: Iterable[int]
            if positions == range(len(items)):  # every object, in order
                at, objects_at, serials = names, held, range(base, base + len(items))
            else:
                at = list(map(names.__getitem__, positions))
                objects_at, serials = map(held.__getitem__, positions), map(base.__add__, positions)
            bucket.items.update(zip(at, objects_at, strict=True))
            if not bucket.touched.keys().isdisjoint(at):  # a name removed before: moved last
                for name in at:
                    bucket.touched.pop(name, None)
            bucket.touched.update(zip(at, serials, strict=True))
        self.serial += len(items)

    def _placed(self, objects: list[Manifest]) -> dict[tuple[str, str], Positions]:
        """``placed`` of objects of any shape: each one's ``fields``, one by one."""
        groups: dict[tuple[str, str], list[int]] = {}
        for at, obj in enumerate(objects):
            for pair in self.fields(obj):
                groups.setdefault(pair, []).append(at)
        return dict(groups)

    def _new(self, kind: Kind, field: str, value: str) -> _Bucket:
        bucket = self._buckets[(kind, field, value)] = _Bucket(self.serial)
        return bucket

    def changes(self, kind: Kind, field: str, value: str, since: Cursor | None) -> Delta:
        """The bucket's changes since ``since`` (everything when ``since`` is None or stale)."""
        bucket = self._buckets.get((kind, field, value))
        if bucket is None:
            return Delta((-1, self.serial), (), (), since is None or since[0] != -1)
        cursor = (bucket.epoch, self.serial)
        if since is None or since[0] != bucket.epoch:
            blocks = tuple(bucket.blocks.values())
            return Delta(cursor, tuple(bucket.items.values()), (), True, blocks)
        names = bucket.since(since[1])
        changed = tuple(bucket.items[n] for n in reversed(names) if n in bucket.items)
        removed = tuple(n for n in reversed(names) if n not in bucket.items)
        return Delta(cursor, changed, removed, False)
