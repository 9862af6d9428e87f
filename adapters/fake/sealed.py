"""The blocks of one fake store (``core.blocks``): which are unread, which were read, and which
held object is a member of which.

A writer opening a state with thousands of settled Trials sealed into blocks holds each block as
its row (``sqlite.Stored``) until something needs a member (``store.Store`` decides when): this
module keeps the unread blocks by id, by the place a look-up by key would find a member in
(apiVersion, kind, namespace), and by the owner UID their fields name, with each kind's sum of
their digests, so a store answers "may a block hold this?" and "what does this kind's digest
count?" without a query. A block read is held by the store as objects, one by one; this module
still knows it as a block, as it stands on disk (its count and sum less each member written or
deleted since: ``leaving``, ``left``), so that the journal can take a written member out of it.
Pure bookkeeping: no I/O (``Source`` is the disk's side).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, TypeVar

from katib_resume.adapters.fake.owners import owner_uids
from katib_resume.adapters.fake.sqlite import Key, Leaving, Stored
from katib_resume.core.blocks import Block, Field
from katib_resume.core.digest import EMPTY, Digest, digest_of
from katib_resume.core.manifest import Manifest
from katib_resume.core.object_index import OWNER, Index
from katib_resume.core.objects import INDEXED_LABELS

Kind = tuple[str, str]
Place = tuple[str, str, str]
"""(apiVersion, kind, namespace): where a look-up by key finds a member."""
Member = tuple[Key, int, Manifest]
"""A member read from disk: its key, its ``objects.created`` (the store's order), the object."""
_INDEX = Index(INDEXED_LABELS)
T = TypeVar("T")


class Source(Protocol):
    """Where a store's blocks are kept (``rows.Members``: the writer's database)."""

    def blocks(self) -> list[Stored]:
        """Every block, as stored when the state was opened."""
        ...

    def members(self, block: int) -> list[Member]:
        """The members of ``block`` as stored now, in the order they were created."""
        ...

    def block_of(self, key: Key) -> int | None:
        """The block the live object ``key`` is a member of (``None``: none, or no object)."""
        ...

    def block_of_uid(self, uid: str) -> int | None:
        """The block of the member whose UID is ``uid`` (``None``: no member has it)."""
        ...


def fields_of(obj: Manifest) -> frozenset[Field]:
    """The index fields a cache puts ``obj`` under (``Block.fields``: every member's)."""
    return frozenset(_INDEX.fields(obj))


def unsealable(obj: Manifest, owning: bool) -> str | None:
    """Why ``obj`` may not be a member of a block, if it may not: being deleted; owned by
    another than the controller owner its fields name (a deletion of an owner reads only the
    unread blocks whose fields name it); ``owning`` other objects (a dependent would reach
    into a block that is not read)."""
    if "deletionTimestamp" in obj["metadata"]:
        return "is being deleted"
    controller = {value for field, value in fields_of(obj) if field == OWNER}
    if not set(owner_uids(obj)) <= controller:
        return "has an owner that is not its controller"
    return "owns other objects" if owning else None


def record(block: Block) -> Stored:
    """What a store keeps of a block read: its row, without ``load`` and ``holds``."""
    where = (block.api_version, block.kind, block.namespace)
    return Stored(block.id, *where, block.fields, block.digest, block.note)


def owner_of(block: Stored | Block) -> str | None:
    """The controller owner's UID every member names (its fields), if any."""
    return next((value for field, value in block.fields if field == OWNER), None)


class Sealed:
    def __init__(self) -> None:
        self.unread: dict[int, Block] = {}
        """The blocks no member of which is held, by id."""
        self.read: dict[int, Stored] = {}
        """The blocks read (or sealed by this store), as stored now: without the members
        written or deleted since (a block left empty is gone from here and from disk)."""
        self.member_of: dict[Key, int] = {}
        """Each held member of a block read, and its block."""
        self.members: dict[int, dict[Key, None]] = {}
        """Each block read: its held members, in the order they were created (empty once
        every one left: the block answers ``load`` with none)."""
        self.as_read: dict[int, dict[str, Manifest]] = {}
        """Each block read: its members by name as they were when it was read or made, in the
        order they were created. A ``Block`` handed out answers ``load`` and ``holds`` for
        them, written since or not: a cache holds it for its members as its first list found
        them (no member is written before its block is read), and learns of a write from its
        watch. What it keeps beyond ``members`` is the last version of each member that left."""
        self.last = 0
        """The highest block id known (a store without a journal numbers its own)."""
        self.details: dict[int, str] = {}
        """Each block's detail, for a store without a journal (one with keeps them on disk)."""
        self._places: dict[Place, set[int]] = {}
        self._owned: dict[str, set[int]] = {}
        self._sums: dict[Kind, Digest] = {}

    def hold(self, block: Block) -> None:
        """``block`` kept unread."""
        self.unread[block.id] = block
        self.last = max(self.last, block.id)
        self._places.setdefault(_place(block), set()).add(block.id)
        owner = owner_of(block)
        if owner is not None:
            self._owned.setdefault(owner, set()).add(block.id)
        kind = (block.api_version, block.kind)
        self._sums[kind] = self._sums.get(kind, EMPTY).plus(block.digest)

    def release(self, ident: int) -> Block:
        """The unread block ``ident``, no longer kept unread (read, or merged)."""
        block = self.unread.pop(ident)
        _discard(self._places, _place(block), ident)
        owner = owner_of(block)
        if owner is not None:
            _discard(self._owned, owner, ident)
        kind = (block.api_version, block.kind)
        left = self._sums[kind].minus(block.digest)
        if left.size:
            self._sums[kind] = left
        else:
            del self._sums[kind]
        return block

    def made(self, block: Stored, held: Iterable[tuple[Key, Manifest]]) -> None:
        """``block`` read (or made by this store), its members ``held`` (in order)."""
        pairs = list(held)
        members = self.members[block.id] = dict.fromkeys(key for key, _ in pairs)
        self.member_of.update(dict.fromkeys(members, block.id))
        self.as_read[block.id] = {key[3]: obj for key, obj in pairs}
        self.read[block.id] = block
        self.last = max(self.last, block.id)

    def forget(self, ident: int) -> None:
        """The read block ``ident`` merged into another (its members are that one's now)."""
        del self.read[ident], self.members[ident], self.as_read[ident]

    def sum(self, kind: Kind) -> Digest:
        """The digest of the unread blocks' members of ``kind``."""
        return self._sums.get(kind, EMPTY)

    def at(self, place: Place) -> bool:
        """Whether an unread block may hold a member at ``place``."""
        return place in self._places

    def owned_by(self, uid: str) -> list[int]:
        """The unread blocks whose members' controller owner is ``uid``."""
        return sorted(self._owned.get(uid, ()))

    def owners(self) -> list[str]:
        """The UIDs the unread blocks' members name as their owner."""
        return list(self._owned)

    def under(
        self, kind: Kind, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> list[int]:
        """The unread blocks of ``kind`` that may hold an object in ``namespace`` (``None``:
        any) carrying ``labels``: every member is under its block's fields exactly, so a block
        without an indexed label's pair holds no object with that label."""
        wanted = [
            (key, value)
            for key, value in (labels or {}).items()
            if key in INDEXED_LABELS and type(value) is str
        ]
        return [
            ident
            for ident, block in self.unread.items()
            if (block.api_version, block.kind) == kind
            and (namespace is None or block.namespace == namespace)
            and all(pair in block.fields for pair in wanted)
        ]

    def leaving(self, key: Key, obj: Manifest) -> Leaving | None:
        """The block ``obj`` (held at ``key``) is a member of, with its digest without it."""
        ident = self.member_of.get(key)
        if ident is None:
            return None
        return ident, self.read[ident].digest.minus(digest_of([obj]))

    def left(self, key: Key, out: Leaving | None) -> None:
        """The member ``key`` has left its block (``out``, from ``leaving``)."""
        if out is None:
            return
        ident, digest = out
        del self.member_of[key], self.members[ident][key]
        if digest.size:
            self.read[ident] = self.read[ident]._replace(digest=digest)
        else:
            del self.read[ident]


def _place(block: Block) -> Place:
    return (block.api_version, block.kind, block.namespace)


def _discard(index: dict[T, set[int]], key: T, ident: int) -> None:
    found = index.get(key)
    if found is not None:
        found.discard(ident)
        if not found:
            del index[key]
