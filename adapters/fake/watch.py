"""The fake cluster's watch: one ordered log of every change, bounded like etcd's history.

A Kubernetes watch delivers ``ADDED``, ``MODIFIED`` and ``DELETED`` events in ``resourceVersion``
order, for every change whoever made it: a client, the garbage collector, a finalizer that
completes a deletion, a controller. The store appends one event per change here, so a test can
assert the order of what happened and an informer-like consumer can follow the cluster.

The log keeps only the last ``capacity`` events, as etcd compacts its history: a consumer whose
cursor points before the oldest kept event has missed changes it can never replay and gets
``Gone``, the cue to list again. A cursor is the number of events seen so far (0 at the start),
so ``changes_since(cursor)`` returns the events after it and the cursor to pass next time.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.ports import Gone

EventKind = Literal["ADDED", "MODIFIED", "DELETED"]
CAPACITY = 1_000
"""Events kept. The API server's watch cache keeps about a hundred per resource; a thousand
covers every consumer here (the controller's informer reads the log after every reconcile) and
keeps the log, which the state directory saves with the cluster, small. A long-running world
holds this many old object versions alive: ten times as many made each lifecycle of the
embedded runtime about 3% slower (memory and garbage-collector work)."""


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change: ``object`` is the object after it (for ``DELETED``, its last state)."""

    type: EventKind
    ref: ObjectRef
    object: Manifest
    resource_version: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "object": self.object, "resourceVersion": self.resource_version}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WatchEvent:
        kind: EventKind = data["type"]
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            raise ValueError(f"unknown watch event type {kind!r}")
        obj = data["object"]
        return cls(kind, ObjectRef.of(obj), obj, str(data["resourceVersion"]))


class WatchLog:
    """The last ``capacity`` events; ``base`` counts the events compacted away before them."""

    def __init__(
        self, events: Iterable[WatchEvent] = (), base: int = 0, capacity: int = CAPACITY
    ) -> None:
        kept = list(events)
        dropped = max(0, len(kept) - capacity)  # a log saved with a larger capacity
        self._events: deque[WatchEvent] = deque(kept[dropped:], maxlen=capacity)
        self.base = base + dropped  # compacted, not forgotten: every cursor keeps its meaning

    @property
    def cursor(self) -> int:
        """The cursor after the newest event."""
        return self.base + len(self._events)

    def append(self, event: WatchEvent) -> None:
        if len(self._events) == self._events.maxlen:
            self.base += 1
        self._events.append(event)

    def since(self, cursor: int) -> tuple[int, list[WatchEvent]]:
        """The events after ``cursor`` and the new cursor; ``Gone`` if compacted.

        The events are the log's own (a watch hands every watcher the same decoded objects, as
        client-go's shared informers do): watchers read them and never mutate them.
        """
        if cursor < self.base:
            raise Gone(f"watch cursor {cursor} is too old: the oldest kept is {self.base}")
        if cursor > self.cursor:
            raise ValueError(f"watch cursor {cursor} is ahead of the log ({self.cursor})")
        newest = list(itertools.islice(reversed(self._events), self.cursor - cursor))
        return self.cursor, newest[::-1]  # from the newest end: the cost is what is new

    def events(self) -> list[WatchEvent]:
        return list(self._events)
