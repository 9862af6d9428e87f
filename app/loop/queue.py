"""A de-duplicating, delayed work queue of reconcile keys, on a clock port.

Level-based controllers need only this: a key is in the queue at most once (a burst of changes
to one Experiment is one reconcile), a key can be scheduled for later (a requeue, a backoff),
and the earliest due key comes out first. Time comes from the clock port, so a simulation (and
every test) runs on fake time and never sleeps.

Among keys due at the same instant, a lower ``rank`` comes out first, then the first added. The
controller ranks Trials before Experiments: the Trials a tick woke take their passes first, and
their Experiment, woken by each of their writes, is reconciled once after them, on what they
all wrote, rather than once after each write (``tests/property/test_coalesced_reconciles.py``
shows that it ends in the same state through the same conditions).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

KeyT = TypeVar("KeyT")


def _same_rank(_: object) -> int:
    return 0


@dataclass
class WorkQueue(Generic[KeyT]):
    rank: Callable[[KeyT], int] = _same_rank
    """Which of the keys due at one instant comes out first (lowest first)."""
    _heap: list[tuple[datetime, int, int, KeyT]] = field(default_factory=list)
    _due: dict[KeyT, datetime] = field(default_factory=dict)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def add(self, key: KeyT, now: datetime, after: float = 0.0) -> None:
        """Schedule ``key`` at ``now + after``; an earlier schedule already queued wins."""
        due = now + timedelta(seconds=after)
        current = self._due.get(key)
        if current is not None and current <= due:
            return
        self._due[key] = due
        heapq.heappush(self._heap, (due, self.rank(key), next(self._order), key))

    def pop(self, now: datetime) -> KeyT | None:
        """The earliest key due at ``now``, or ``None``."""
        while self._heap:
            due, _, _, key = self._heap[0]
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
            due, _, _, key = self._heap[0]
            if self._due.get(key) == due:
                return due
            heapq.heappop(self._heap)
        return None

    def __len__(self) -> int:
        return len(self._due)

    def __contains__(self, key: object) -> bool:
        return key in self._due
