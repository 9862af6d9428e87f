"""Faults of Kubernetes' own simulated controllers (``FakeWorld``): late, slow or crashed.

A real cluster's controllers are not instantaneous: the garbage collector runs behind, the PV
controller takes its time to bind or provision, a node's kubelet restarts and every pod on it
with it. A controller that is correct only when they are prompt is not correct. Armed on
``world.faults``, consumed tick by tick:

- ``skip_gc(n)``: the garbage collector does not run in the next ``n`` ticks (dependents of a
  deleted owner stay that much longer);
- ``slow_binder(n)``: the binder and the dynamic provisioner do not run in the next ``n``
  ticks (a claim stays Pending);
- ``crash_kubelet(down_ticks)``: the kubelet dies now: every Deployment's pod is down (its
  status written unavailable at once), and the kubelet does not run for ``down_ticks`` ticks,
  so nothing becomes available again before it is back;
- ``at_random(gc=, binder=, kubelet=, seed=)``: in each tick the garbage collector and the
  binder are skipped, and the kubelet crashes (down for one to three ticks), with those
  probabilities, drawn from ``random.Random(seed)``: one seed, one sequence of faults.

The reclaimer and the protection controllers are never skipped: what they guard (a volume's
directory, a mounted claim) is data, and a fault here models delay, not loss.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class _Rates:
    gc: float
    binder: float
    kubelet: float
    draw: random.Random


class WorldFaults:
    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """No fault pending any more (a random one stops too; a crashed kubelet comes back)."""
        self._gc = 0
        self._binder = 0
        self._kubelet_down = 0
        self._crash_now = 0
        self._rates: _Rates | None = None

    def skip_gc(self, n: int = 1) -> None:
        self._gc += _count(n)

    def slow_binder(self, n: int = 1) -> None:
        self._binder += _count(n)

    def crash_kubelet(self, down_ticks: int = 1) -> None:
        if down_ticks < 1:
            raise ValueError(f"a crashed kubelet is down for >= 1 tick, not {down_ticks}")
        self._crash_now = max(self._crash_now, down_ticks)

    def at_random(
        self, *, gc: float = 0.0, binder: float = 0.0, kubelet: float = 0.0, seed: int = 0
    ) -> None:
        for rate in (gc, binder, kubelet):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"a fault rate must be within [0, 1], not {rate}")
        self._rates = _Rates(gc, binder, kubelet, random.Random(seed))

    @property
    def pending(self) -> bool:
        counters = (self._gc, self._binder, self._kubelet_down, self._crash_now)
        return any(counters) or self._rates is not None

    def tick(self) -> Tick:
        """What runs in this tick (consumes the counters and draws the random faults)."""
        rates = self._rates
        if rates is not None:
            if rates.draw.random() < rates.gc:
                self._gc = max(self._gc, 1)
            if rates.draw.random() < rates.binder:
                self._binder = max(self._binder, 1)
            if rates.draw.random() < rates.kubelet:
                self.crash_kubelet(rates.draw.randint(1, 3))
        crash, self._crash_now = self._crash_now, 0
        self._kubelet_down = max(self._kubelet_down, crash)
        ran = Tick(gc=not self._gc, binder=not self._binder, kubelet=not self._kubelet_down)
        self._gc, self._binder = max(self._gc - 1, 0), max(self._binder - 1, 0)
        self._kubelet_down = max(self._kubelet_down - 1, 0)
        return Tick(ran.gc, ran.binder, ran.kubelet, crashed=bool(crash))


@dataclass(frozen=True, slots=True)
class Tick:
    """Which controllers run in one tick, and whether the kubelet crashed at its start."""

    gc: bool = True
    binder: bool = True
    kubelet: bool = True
    crashed: bool = False


def _count(n: int) -> int:
    if n < 0:
        raise ValueError(f"a fault count must be >= 0, not {n}")
    return n
