"""A de-duplicating, delayed work queue of reconcile keys, on a clock port.

Level-based controllers need only this: a key is in the queue at most once (a burst of changes
to one Experiment is one reconcile), a key can be scheduled for later (a requeue, a backoff),
and the earliest due key comes out first. Time comes from the clock port, so a simulation (and
every test) runs on fake time and never sleeps.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

KeyT = TypeVar("KeyT")


@dataclass
class WorkQueue(Generic[KeyT]):
    _heap: list[tuple[datetime, int, KeyT]] = field(default_factory=list)
    _due: dict[KeyT, datetime] = field(default_factory=dict)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def add(self, key: KeyT, now: datetime, after: float = 0.0) -> None:
        """Schedule ``key`` at ``now + after``; an earlier schedule already queued wins."""
        due = now + timedelta(seconds=after)
        current = self._due.get(key)
        if current is not None and current <= due:
            return
        self._due[key] = due
        heapq.heappush(self._heap, (due, next(self._order), key))

    def pop(self, now: datetime) -> KeyT | None:
        """The earliest key due at ``now``, or ``None``."""
        while self._heap:
            due, _, key = self._heap[0]
            if self._due.get(key) != due:
                heapq.heappop(self._heap)  # superseded by an earlier schedule
                continue
            if due > now:
                return None
            heapq.heappop(self._heap)
            del self._due[key]
            return key
        return None

    def next_due(self) -> datetime | None:
        """The earliest schedule queued: the heap's top once the superseded entries above it
        are dropped (as ``pop`` drops them), not a scan of every key queued."""
        while self._heap:
            due, _, key = self._heap[0]
            if self._due.get(key) == due:
                return due
            heapq.heappop(self._heap)
        return None

    def __len__(self) -> int:
        return len(self._due)

    def __contains__(self, key: object) -> bool:
        return key in self._due
