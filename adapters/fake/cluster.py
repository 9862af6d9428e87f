"""The fake cluster as our controller sees it: the ``Cluster`` port, with faults injectable.

``FakeCluster`` implements ``core.ports.Cluster`` over an in-memory ``ApiServer`` (``api.py``
holds Kubernetes' rules: resource versions, UID preconditions, finalizers, garbage collection).
What this layer adds is what stands between a controller and the API server: injected faults
(``faults.py``: conflicts, server errors, lost responses, stale caches, a crash between two
writes; ``watch_faults.py``: lost, repeated and reordered watch events, an expired watch),
Kubernetes-style Events, and the watch (``changes_since``).

Writes and lists answer with private copies; ``for_cache`` gives the same cluster to an
informer cache, whose writes and lists answer with the stored objects themselves (as its watch
events are), because a cache only keeps and reads them: copying every answer only to keep it
was about a seventh of the embedded runtime's time.

Every write through this class passes the fault gate; ``FakeWorld`` (Kubernetes' own
controllers) writes to ``cluster.api`` directly, so injected faults never hit it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from katib_resume.adapters.fake.api import ApiServer
from katib_resume.adapters.fake.clock import FakeClock
from katib_resume.adapters.fake.clone import clone
from katib_resume.adapters.fake.deferred import Deferred
from katib_resume.adapters.fake.faults import Faults
from katib_resume.adapters.fake.store import Store, select
from katib_resume.adapters.fake.watch import WatchEvent
from katib_resume.core.actions import EventType, ObjectRef
from katib_resume.core.blocks import Block
from katib_resume.core.digest import Digest
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.ports import NotFound

T = TypeVar("T")
Changes = tuple[int, list[WatchEvent]]
"""Watch events after a cursor, and the cursor to pass next time."""


@dataclass(frozen=True, slots=True)
class Event:
    ref: ObjectRef
    type: EventType
    reason: str
    message: str
    time: str

    def to_dict(self) -> dict[str, Any]:
        ref = self.ref
        where = {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace}
        return {
            "ref": {**where, "name": ref.name},
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
            "time": self.time,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        raw = data["ref"]
        ref = ObjectRef(raw["apiVersion"], raw["kind"], raw["namespace"], raw["name"])
        if data["type"] not in ("Normal", "Warning"):
            raise ValueError(f"unknown event type {data['type']!r}")
        return cls(ref, data["type"], data["reason"], data["message"], data["time"])


class FakeCluster:
    """Implements ``core.ports.Cluster`` in memory."""

    def __init__(self, clock: FakeClock | None = None, store: Store | None = None) -> None:
        self.clock = clock or FakeClock()
        self.api = ApiServer(self.clock, store)
        self.faults = Faults()
        self.events: Deferred[Event] = Deferred()
        """The Kubernetes Events, oldest first (those read back from disk decoded when read)."""
        self.copies = True
        """Whether a write answers with a private copy (``for_cache``)."""

    def for_cache(self) -> FakeCluster:
        """This cluster (the same API server, faults and Events) for a caller that keeps write
        answers and never mutates them: an informer cache, which hands out what it keeps only to
        readers. Its writes and lists answer with the stored objects, not copies.

        The view shares every part by reference, so none is ever rebound after construction
        (the Events list is filled in place, never replaced)."""
        view = copy.copy(self)
        view.copies = False
        return view

    @property
    def store(self) -> Store:
        return self.api.store

    def get(self, ref: ObjectRef) -> Manifest:
        if not self.faults.take_stale_read():
            return self.api.get(ref)
        obj = self.store.lagging(ref)
        if obj is None:
            raise NotFound(f"{ref} not found")
        return clone(obj)

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: Mapping[str, str]
    ) -> Sequence[Manifest]:
        if self.faults.take_stale_read():
            return select(self.store.lagging_all(), api_version, kind, namespace, labels)
        return self.api.list(api_version, kind, namespace, labels, copy=self.copies)

    def list_at(self, api_version: str, kind: str) -> tuple[int, Sequence[Manifest]]:
        """Every object of a kind, and the watch cursor the answer is current at.

        An API server's list says which ``resourceVersion`` it is current at, and a watch from
        there misses nothing. A stale list (the fault) is one change behind, so it says so: its
        cursor is one back, and a watch from it replays that change.
        """
        if self.faults.take_stale_read():
            return self._lagging_at(api_version, kind)
        return self.cursor, self.api.list(api_version, kind, None, {}, copy=self.copies)

    def list_blocks_at(
        self, api_version: str, kind: str
    ) -> tuple[int, Sequence[Manifest], Sequence[Block]]:
        """``list_at``, with the kind's unread blocks handed over as blocks (``core.blocks``),
        not read: a cache's first list holds them as the store does, and reads one when it
        needs a member (``Block.load``, which reads it into the store and answers for the
        members as listed, whatever was written since). With a stale list armed (the fault),
        the answer is ``list_at``'s, every block read, and no block."""
        if self.faults.take_stale_read():
            return (*self._lagging_at(api_version, kind), ())
        held = self.store.unsealed(api_version, kind)
        items = select(held, api_version, kind, None, {}, copy=self.copies)
        return self.cursor, items, self.store.blocks_of(api_version, kind)

    def _lagging_at(self, api_version: str, kind: str) -> tuple[int, Sequence[Manifest]]:
        """A stale list of a kind: one change behind, and its cursor one back (a watch from
        it replays that change)."""
        behind = 0 if self.store.undo is None else 1
        items = select(self.store.lagging_all(), api_version, kind, None, {})
        return self.cursor - behind, items

    def digest_at(self, api_version: str, kind: str) -> tuple[int, Digest]:
        """The kind's ``core.digest.Digest`` and the watch cursor it is current at: always the
        truth, whatever fault is armed. It is what tells a relist that a watch fault left the
        cache wrong, so no fault may hide one; a stale list (the fault above) still strikes the
        kinds whose digests differ, which are the ones listed."""
        return self.cursor, self.store.digest(api_version, kind)

    def create(self, manifest: Manifest) -> Manifest:
        return self._write(
            f"create {ObjectRef.of(manifest)}", lambda: self.api.create(manifest, copy=self.copies)
        )

    def update(self, manifest: Manifest) -> Manifest:
        """Replace metadata (labels, annotations, finalizers, owners) and spec; not status."""
        return self._write(
            f"update {ObjectRef.of(manifest)}", lambda: self.api.update(manifest, copy=self.copies)
        )

    def update_spec(self, ref: ObjectRef, spec: Manifest, resource_version: str | None) -> Manifest:
        """Replace ``spec``; ``generation`` moves only if it changed; ``Conflict`` if stale."""
        return self._write(
            f"update spec of {ref}",
            lambda: self.api.update_spec(ref, spec, resource_version, copy=self.copies),
        )

    def update_status(
        self, ref: ObjectRef, status: Manifest, resource_version: str | None
    ) -> Manifest:
        return self._write(
            f"update status of {ref}",
            lambda: self.api.update_status(ref, status, resource_version, copy=self.copies),
        )

    def set_finalizers(
        self, ref: ObjectRef, finalizers: Sequence[str], resource_version: str | None
    ) -> Manifest:
        return self._write(
            f"set finalizers of {ref}",
            lambda: self.api.set_finalizers(ref, finalizers, resource_version, copy=self.copies),
        )

    def delete(self, ref: ObjectRef, uid: str) -> None:
        self._write(f"delete {ref}", lambda: self.api.delete(ref, uid))

    def record_event(self, ref: ObjectRef, type_: EventType, reason: str, message: str) -> None:
        event = Event(ref, type_, reason, message, format_time(self.clock.now()))
        if self.store.journal is not None:  # committed first: a full disk records nothing
            self.store.journal.event(event.to_dict())
        self.events.append(event)

    def events_about(self, kind: str, namespace: str | None, name: str) -> Sequence[Event]:
        """The Events about one object, oldest first, as ``events`` holds them: those read back
        from disk found by the store's index when it has one (the others never decoded), so
        what this costs is that object's Events, not the history's."""
        key = (kind, namespace, name)
        return self.events.where(key, lambda e: (e.ref.kind, e.ref.namespace, e.ref.name) == key)

    def events_named(self, names: Collection[str]) -> Sequence[tuple[int, Event]]:
        """The Events about an object (of any kind and namespace) named one of ``names``, each
        with its place in ``events`` (1 for the first), oldest first: those read back from
        disk found by the store's index when the ids are the places, so what this costs is
        those objects' Events, not the history's."""
        wanted = frozenset(names)
        return self.events.placed_where(wanted, lambda e: e.ref.name in wanted)

    def changes_since(self, cursor: int) -> Changes:
        """Watch events after ``cursor`` and the next cursor; ``Gone`` if compacted away (or
        if an injected watch fault expires it). What is handed out passes the watch faults
        (``faults.watch``); the cursor is the log's, past whatever they kept back."""
        self.faults.watch.check()
        after, events = self.store.log.since(cursor)
        return after, self.faults.watch.deliver(events)

    @property
    def cursor(self) -> int:
        """The cursor of the newest change: a watch started now begins here."""
        return self.store.log.cursor

    def _write(self, what: str, call: Callable[[], T]) -> T:
        self.faults.before_write(what)
        result = call()
        self.faults.after_write(what)
        return result
