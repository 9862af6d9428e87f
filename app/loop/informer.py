"""A watch-fed cache of the cluster: the controller's reads cost no API call.

A controller that asks the API server for every object on every reconcile pays for it in
latency and load; Kubernetes controllers read from informers instead: list once, then apply
every watch event to a local cache, and read from that. ``Informer`` is that cache for the
``Cluster`` port: ``get`` and ``list`` answer from memory, writes go through to the cluster and
their answers refresh the cache at once (so the next reconcile sees its own writes), and
``sync`` applies the watch events since the last one, which the runtime also turns into
reconcile keys. A watch that fell too far behind (``Gone``) is answered by listing again.

A watch can also be wrong without saying so: an event lost, repeated or out of order leaves a
cache that disagrees with the server and nothing that would ever correct it. Two repairs come
from the API server, never from the cache itself: ``relist``, which the runtime calls every
``relist_seconds`` and which reports only the objects whose ``resourceVersion`` differs, and
``reread``, the read of one object whose write was refused as stale, so a cache that missed an
event heals at the next write that depends on it. A relist first compares each kind's digest
(``core.digest``) with the server's and lists only the kinds that disagree: when the watch lost
nothing it costs a look-up per kind, not per object. A repeated event is harmless (an object is
never replaced by an older or equal version) and so is a deletion that arrives after a namesake
was made (it is matched by UID).

Objects handed out are the cache's own: readers parse them and never mutate them (as with
client-go's informer caches). They are kept in ``core.objects.Objects``, the structure (and the
rule for which version is kept) of the Kubernetes adapter's watch cache too.

A cluster that keeps settled objects sealed in blocks (``core.blocks``: the embedded runtime's
finished Trials) hands them to the first list as blocks (``BlockSource``), and the cache holds
each unread, in O(1), until an answer needs one of its members (``core.objects``): a restart
does not read the history it never looks at. A relist of a kind whose digest differs reads the
cache's blocks of that kind and compares every object, as without them; a block is added only
by the first list.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, TypeGuard, runtime_checkable

from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.blocks import Block
from katib_resume.core.digest import Digest
from katib_resume.core.manifest import Manifest
from katib_resume.core.objects import Cursor, Delta, Objects, newer, version_of
from katib_resume.core.ports import AlreadyExists, Cluster, ClusterError, Conflict, Gone, NotFound
from katib_resume.core.resources import CONTROLLED_KINDS

KINDS = CONTROLLED_KINDS
"""The kinds the controller reads: everything else in the cluster is not cached."""


class Change(Protocol):
    @property
    def type(self) -> Literal["ADDED", "MODIFIED", "DELETED"]: ...

    @property
    def object(self) -> Manifest: ...


class ChangeLog(Cluster, Protocol):
    """A cluster with a watch: ordered changes after a cursor."""

    @property
    def cursor(self) -> int: ...

    def changes_since(self, cursor: int) -> tuple[int, Sequence[Change]]: ...


class Watched(ChangeLog, Protocol):
    """A change log that can also list one kind at a known cursor (what the cache starts from)."""

    def list_at(self, api_version: str, kind: str) -> tuple[int, Sequence[Manifest]]:
        """Every object of a kind and the cursor the answer is current at (a list's
        ``resourceVersion``): watching from there misses nothing."""
        ...

    def digest_at(self, api_version: str, kind: str) -> tuple[int, Digest]:
        """The ``core.digest.Digest`` of every object of a kind and the cursor it is current
        at: the server's truth (never a faulted view), which equals the cache's digest exactly
        when a list of the kind would change nothing in the cache."""
        ...


@runtime_checkable
class BlockSource(Protocol):
    """A watched cluster whose first list can hand settled objects over sealed, unread."""

    def list_blocks_at(
        self, api_version: str, kind: str
    ) -> tuple[int, Sequence[Manifest], Sequence[Block]]:
        """What ``Watched.list_at`` answers, with some of the objects in blocks instead of in
        the list (each object in one or the other), unread: a block's ``load`` and ``holds``
        answer for its members as they were listed, whatever the cluster wrote since."""
        ...


@functools.cache
def _block_source_type(cls: type) -> bool:
    return issubclass(cls, BlockSource)


def block_source(cluster: Watched) -> TypeGuard[BlockSource]:
    """Whether ``cluster`` is a ``BlockSource``, decided once per class (a runtime protocol
    checked on an instance walks its members on every call)."""
    return _block_source_type(type(cluster))


@dataclass(frozen=True, slots=True)
class Relisted:
    """A change a list from the API server found that the cache had not seen."""

    type: Literal["ADDED", "MODIFIED", "DELETED"]
    object: Manifest


class Informer:
    """Implements ``core.ports.Cluster``: reads from the cache, writes through."""

    def __init__(self, cluster: Watched, kinds: Sequence[tuple[str, str]] = KINDS) -> None:
        self.inner = cluster
        self.kinds = tuple(kinds)
        """What ``relist`` lists (the run objects' kinds too, for a controller that runs Trials)."""
        self.objects = Objects()
        """By kind, then by name: a list reads one kind, never the whole cache."""
        self.cursor = 0
        self.relists = 0
        self.listed = 0
        """Kinds listed by the relists so far (the others' digests agreed)."""
        self.echoes: list[Relisted] = []
        """The answers of this cache's own writes, handed out by the next ``sync``: see
        ``_write``."""
        self._first_list()

    def _first_list(self) -> None:
        """``relist`` into the empty cache: every object is new, so each kind's list is held
        as it comes, put and indexed in one pass (``Objects.fill``), with nothing to compare,
        and its blocks held unread (``BlockSource``); a kind the server holds nothing of (its
        digest empty, as the cache's) is not listed."""
        self._list(dict.fromkeys(self.kinds), False, self._fill)  # a kind named twice: once

    def _fill(self, api_version: str, kind: str) -> tuple[int, list[Relisted]]:
        blocks: Sequence[Block] = ()
        if block_source(self.inner):
            cursor, items, blocks = self.inner.list_blocks_at(api_version, kind)
        else:
            cursor, items = self.inner.list_at(api_version, kind)
        self.objects.fill(api_version, kind, items)
        for block in blocks:
            self.objects.hold(block)
        return cursor, []

    def relist(self, *, full: bool = False) -> list[Relisted]:
        """List from the API server every cached kind whose digest differs from the cache's
        (``full``: every kind), keep what differs from the cache (its blocks of a listed kind
        read, so every object is compared), and watch from the oldest cursor; what changed
        (for the runtime to reconcile).

        This is the repair of a watch that lost, repeated or reordered events: the list is
        the server's truth, not a replay of the cache. An object is compared by
        ``resourceVersion`` only, so a list costs a look-up per object, and reports (and so
        wakes up) only the objects that changed. A kind whose digest (``core.digest``: the
        count and a sum of hashes of every object's namespace, name, UID and version) equals
        the server's would change nothing if it were listed, so it is not: a relist that finds
        nothing costs a comparison per kind. A list may be older than the newest change
        (served from a lagging cache); watching from *now* would then lose the changes in
        between for good, since nothing would ever replay them. Watching from the list's own
        cursor replays them; the events the lists already reflect are dropped by the version
        check in ``Objects.keep``. A digest is current at its own cursor, so a kind that agrees
        there needs no replay before it.
        """
        return self._list(self.kinds, full, self._merge)

    def _list(
        self,
        kinds: Iterable[tuple[str, str]],
        full: bool,
        take: Callable[[str, str], tuple[int, list[Relisted]]],
    ) -> list[Relisted]:
        """Have ``take`` list each of ``kinds`` whose digest differs from the cache's (``full``:
        each) and watch from the oldest cursor; what ``take`` found."""
        changes: list[Relisted] = []
        cursors = []
        for api_version, kind in kinds:
            agreed = False
            if not full:
                cursor, digest = self.inner.digest_at(api_version, kind)
                agreed = digest == self.objects.digest(api_version, kind)
            if not agreed:
                cursor, found = take(api_version, kind)
                self.listed += 1
                changes += found
            cursors.append(cursor)
        self.cursor = min(cursors)
        self.relists += 1
        return changes

    def _merge(self, api_version: str, kind: str) -> tuple[int, list[Relisted]]:
        """List the kind and keep what differs from the cache (its blocks of the kind read:
        every object is compared); what is gone in name order, then the rest in the list's.

        The cache holds its objects in the order it took them in (the first list's, then the
        watch's, and a block's members when the block is read), which is its history, not the
        cluster's: a cache holding blocks took the same objects in another order than one
        holding every object. The runtime queues the reconciles a relist wakes in the order it
        reports them, so what is gone is reported in an order of its own."""
        cursor, items = self.inner.list_at(api_version, kind)
        held = self.objects.table(api_version, kind)
        fresh = {
            (obj["metadata"].get("namespace") or "", obj["metadata"]["name"]): obj for obj in items
        }
        changes = [
            Relisted("DELETED", gone)
            for name in sorted(name for name in held if name not in fresh)
            if (gone := self.objects.pop(api_version, kind, name)) is not None
        ]
        for name, obj in fresh.items():
            old = held.get(name)
            if old is obj:
                continue  # the very object the watch delivered (the fake lists what it stores)
            if old is not None and (version_of(old) == version_of(obj) or not newer(old, obj)):
                continue  # the same version, or the cache knows a newer one (a write's answer)
            if old is not None and _uid(old) != _uid(obj):
                changes.append(Relisted("DELETED", old))  # replaced under the same name
                old = None
            self.objects.put(obj)
            changes.append(Relisted("ADDED" if old is None else "MODIFIED", obj))
        return cursor, changes

    def sync(self) -> Sequence[Change]:
        """Apply the watch events since the last sync; after ``Gone``, what a relist found.
        The answers of this cache's own writes since then come first (``_write``)."""
        echoes, self.echoes = self.echoes, []
        try:
            self.cursor, changes = self.inner.changes_since(self.cursor)
        except Gone:
            return [*echoes, *self.relist()]
        for change in changes:
            if change.type != "DELETED":
                self.objects.keep(change.object)
                continue
            obj = change.object
            held = self.objects.get(obj["apiVersion"], obj["kind"], *_name(obj))
            if held is not None and _uid(held) == _uid(obj):  # not a namesake made since
                self.objects.discard(obj)
        return [*echoes, *changes] if echoes else changes

    def get(self, ref: ObjectRef) -> Manifest:
        found = self.objects.get(ref.api_version, ref.kind, ref.namespace, ref.name)
        if found is None:
            raise NotFound(f"{ref} not found")
        return found

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        return self.objects.select(api_version, kind, namespace, labels)

    def held(self, api_version: str, kind: str) -> Sequence[Manifest]:
        """The objects of a kind the cache holds one by one, not those of its unread blocks
        (``core.blocks``): for a reader that knows what a block's members are (the embedded
        runtime's resync passes over settled Trials, which is all that blocks hold)."""
        return list(self.objects.by_kind.get((api_version, kind), {}).values())

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
        """What changed in one index bucket since ``since`` (``core.objects.Objects.changes``:
        with ``blocks``, the unread blocks under it as blocks)."""
        return self.objects.changes(api_version, kind, field, value, since, blocks=blocks)

    def create(self, manifest: Manifest) -> Manifest:
        return self._write(ObjectRef.of(manifest), lambda: self.inner.create(manifest))

    def update(self, manifest: Manifest) -> Manifest:
        return self._write(ObjectRef.of(manifest), lambda: self.inner.update(manifest))

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        return self._write(ref, lambda: self.inner.update_spec(ref, spec, resource_version))

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        return self._write(ref, lambda: self.inner.update_status(ref, status, resource_version))

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        return self._write(
            ref, lambda: self.inner.set_finalizers(ref, finalizers, resource_version)
        )

    def delete(self, ref: ObjectRef, uid: str) -> None:
        try:
            self.inner.delete(ref, uid)  # the watch says when it is really gone
        except (Conflict, NotFound):
            self.reread(ref)
            raise

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        self.inner.record_event(ref, type_, reason, message)

    def _write(self, ref: ObjectRef, call: Callable[[], Manifest]) -> Manifest:
        """A write's answer, kept unless the cache already holds this version or a newer one;
        a write refused as stale re-reads its object first (``reread``).

        The answer is also the write's own echo (``echoes``): the watch's echo is what wakes
        the write's owners up (a Trial's reconcile after its status was written, the
        Experiment's after a Trial was made), and if the watch lost it, the cache, already
        holding the answer, would give a relist nothing to repair. The work queue merges it
        with the watch's echo when both come."""
        try:
            obj = call()
        except (Conflict, NotFound, AlreadyExists):
            self.reread(ref)
            raise
        self.objects.keep(obj)
        self.echoes.append(Relisted("MODIFIED", obj))
        return obj

    def reread(self, ref: ObjectRef) -> None:
        """Read ``ref`` from the API server into the cache: a write was refused because the
        cache is behind (a ``Conflict``: the object moved on; ``NotFound``: it is gone;
        ``AlreadyExists``: it was made), perhaps because the watch lost the event that said
        so. The retry then plans from the server's version, not from the same stale one."""
        try:
            fresh = self.inner.get(ref)
        except NotFound:
            held = self.objects.get(ref.api_version, ref.kind, ref.namespace, ref.name)
            if held is not None:
                self.objects.discard(held)
            return
        except ClusterError:
            return  # the retry meets the server again
        self.objects.keep(fresh)


def _name(obj: Manifest) -> tuple[str | None, str]:
    meta = obj["metadata"]
    return meta.get("namespace"), meta["name"]


def _uid(obj: Manifest) -> str:
    return str(obj["metadata"].get("uid") or "")
