"""Faults a test injects into the fake cluster's port: the failures a real controller meets.

Each fault is a counter consumed by the next calls through ``FakeCluster``'s public methods
(writes: create, update, update_spec, update_status, set_finalizers, delete; reads: get, list).
Kubernetes' own simulated controllers (``FakeWorld``) bypass them: a fault models what happens
to *our* controller's requests, not a broken cluster.

- ``conflict_next_write``: the next write loses an optimistic-concurrency race (``Conflict``)
  and changes nothing.
- ``fail_next_writes(n)``: the next ``n`` writes fail with ``Unavailable`` and change nothing
  (a 5xx, a timeout before the server acted, throttling).
- ``lose_next_response``: the next write the server applies *is* applied, then
  ``Unavailable`` is raised: the response was lost, so the controller does not know that its
  write happened (a write refused anyway, e.g. by a stale version, leaves the fault pending).
- ``stale_reads(n)``: the next ``n`` reads answer from a cache one change behind (an informer
  that has not yet seen the last watch event).
- ``crash_after_writes(k)``: the ``k``-th write applied from now raises ``ControllerCrash``
  after it is applied: the controller process dies between two writes. ``ControllerCrash`` is
  deliberately not a ``ClusterError``, so a retry loop does not swallow it.

The watch has faults of its own (``watch_faults.py``: events lost, duplicated, reordered, a
410 Gone), armed on ``faults.watch`` and cleared with the rest.

Applied writes are counted whatever their outcome for the caller: a write whose response is
lost still counts towards ``crash_after_writes`` (and the crash wins if both fall on one write).
"""

from __future__ import annotations

from katib_resume.adapters.fake.watch_faults import WatchFaults
from katib_resume.core.ports import Conflict, Unavailable


class ControllerCrash(Exception):
    """The controller process died here; the harness restarts it from the cluster's state."""


class Faults:
    def __init__(self) -> None:
        self.watch = WatchFaults()
        """What the controller's watch is handed (``FakeCluster.changes_since``)."""
        self.clear()

    def clear(self) -> None:
        """No fault pending any more."""
        self._conflicts = 0
        self._failures = 0
        self._lost = 0
        self._stale = 0
        self._crash_in: int | None = None
        self.watch.clear()

    def conflict_next_write(self) -> None:
        self._conflicts += 1

    def fail_next_writes(self, n: int) -> None:
        self._failures += _count(n)

    def lose_next_response(self) -> None:
        self._lost += 1

    def stale_reads(self, n: int) -> None:
        self._stale += _count(n)

    def crash_after_writes(self, k: int) -> None:
        if k < 1:
            raise ValueError(f"crash_after_writes needs k >= 1, not {k}")
        self._crash_in = k

    @property
    def pending(self) -> bool:
        """Whether any fault is still waiting to happen."""
        counters = (self._conflicts, self._failures, self._lost, self._stale)
        return any(counters) or self._crash_in is not None or self.watch.pending

    def before_write(self, what: str) -> None:
        """Raise the fault that stops a write before the server applies it, if one is due."""
        if self._conflicts:
            self._conflicts -= 1
            raise Conflict(f"{what}: injected conflict: the object has been modified")
        if self._failures:
            self._failures -= 1
            raise Unavailable(f"{what}: injected server error (nothing was written)")

    def after_write(self, what: str) -> None:
        """Raise the fault that strikes after the server applied a write, if one is due."""
        lost = self._lost > 0
        self._lost = max(self._lost - 1, 0)
        if self._crash_in is not None:
            self._crash_in -= 1
            if self._crash_in == 0:
                self._crash_in = None
                raise ControllerCrash(f"the controller crashed after writing {what}")
        if lost:
            raise Unavailable(f"{what}: injected lost response (the write WAS applied)")

    def take_stale_read(self) -> bool:
        """Whether this read answers from the lagging cache (consumes one stale read)."""
        if not self._stale:
            return False
        self._stale -= 1
        return True


def _count(n: int) -> int:
    if n < 0:
        raise ValueError(f"a fault count must be >= 0, not {n}")
    return n
