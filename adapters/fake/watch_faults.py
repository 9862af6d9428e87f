"""Faults of the watch our controller reads: events lost, duplicated, reordered, a 410 Gone.

The fake's watch log (``watch.py``) is the cluster's history and stays true; these faults sit
between it and one reader, ``FakeCluster.changes_since``, and change what that reader is handed:

- ``lose_next(n, kind=, type=)``: the next ``n`` events (of that kind and event type, when
  given) are never delivered. The cursor moves past them, as a watch that dropped them would:
  nothing replays them, only a list from the API server can repair what they said.
- ``duplicate_next(n)``: the next ``n`` events are delivered twice in a row (a watch resumed
  from an older ``resourceVersion`` repeats what it had already sent).
- ``reorder_next(n)``: each of the next ``n`` events is held back and delivered after the next
  event, possibly in the reader's next read (or alone in its next read when nothing follows).
  An event of the same object is never overtaken: a watch keeps one object's events in order,
  while the watches of different kinds interleave as they please, so a reader can see one
  kind's change before another's that happened first.
- ``expire()``: the next read is ``Gone`` (410: the cursor was compacted away), and the reader
  must list again.
- ``at_random(loss=, duplication=, reordering=, expiry=, seed=)``: every event is lost,
  duplicated or held back with those probabilities, and every read expires with probability
  ``expiry``, all drawn from ``random.Random(seed)``: the same seed and the same history give
  the same faults, run after run.

Counters are consumed by the events they strike, in the order armed; ``pending`` says whether
one still waits (a random fault never stops waiting until ``clear``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from katib_resume.adapters.fake.watch import WatchEvent
from katib_resume.core.ports import Gone


@dataclass
class _Rule:
    """``left`` events still to strike: those of ``kind`` and ``type`` (``None``: any)."""

    fault: str
    left: int
    kind: str | None = None
    type: str | None = None

    def matches(self, event: WatchEvent) -> bool:
        kind_ok = self.kind is None or self.kind == event.ref.kind
        return self.left > 0 and kind_ok and (self.type is None or self.type == event.type)


@dataclass(frozen=True, slots=True)
class _Rates:
    loss: float
    duplication: float
    reordering: float
    expiry: float
    draw: random.Random


class WatchFaults:
    def __init__(self) -> None:
        self._held: WatchEvent | None = None
        """An event held back until the next one (of another object) has been delivered: kept
        by ``clear``, which stops faults, not deliveries."""
        self.lost = 0
        """Events not delivered so far (a figure for tests and benchmarks)."""
        self.clear()

    def clear(self) -> None:
        """No new fault any more (a random one stops too); a held-back event still comes."""
        self._rules: list[_Rule] = []
        self._expire = False
        self._rates: _Rates | None = None

    def lose_next(self, n: int = 1, *, kind: str | None = None, type: str | None = None) -> None:
        self._rules.append(_Rule("lose", _count(n), kind, type))

    def duplicate_next(self, n: int = 1) -> None:
        self._rules.append(_Rule("duplicate", _count(n)))

    def reorder_next(self, n: int = 1) -> None:
        self._rules.append(_Rule("reorder", _count(n)))

    def expire(self) -> None:
        self._expire = True

    def at_random(
        self,
        *,
        loss: float = 0.0,
        duplication: float = 0.0,
        reordering: float = 0.0,
        expiry: float = 0.0,
        seed: int = 0,
    ) -> None:
        for rate in (loss, duplication, reordering, expiry):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"a fault rate must be within [0, 1], not {rate}")
        if loss + duplication + reordering > 1.0:
            raise ValueError("loss, duplication and reordering must add up to at most 1")
        self._rates = _Rates(loss, duplication, reordering, expiry, random.Random(seed))

    @property
    def pending(self) -> bool:
        waiting = any(rule.left for rule in self._rules) or self._held is not None
        return waiting or self._expire or self._rates is not None

    def check(self) -> None:
        """Raise ``Gone`` if the reader's watch is to expire now."""
        rates = self._rates
        if rates is not None and rates.expiry and rates.draw.random() < rates.expiry:
            self._expire = True
        if self._expire:
            self._expire = False
            raise Gone("injected: the watch expired (410 Gone); list again")

    def deliver(self, events: Sequence[WatchEvent]) -> list[WatchEvent]:
        """What the reader is handed of ``events`` (those after its cursor, in order)."""
        if not self._rules and self._rates is None and self._held is None:
            return list(events)
        out: list[WatchEvent] = []
        for event in events:
            fault = self._fault_for(event)
            if fault == "lose":
                self.lost += 1
                continue
            held, self._held = self._held, None
            if held is not None and held.ref == event.ref:
                out.append(held)  # one object's events keep their order
                held = None
            if fault == "reorder":
                self._held = event
            else:
                out += [event, event] if fault == "duplicate" else [event]
            if held is not None:
                out.append(held)  # behind the event that overtook it
        if not events and self._held is not None:
            out.append(self._held)  # nothing overtook it: it is late, not lost
            self._held = None
        return out

    def _fault_for(self, event: WatchEvent) -> str | None:
        for rule in self._rules:
            if rule.matches(event):
                rule.left -= 1
                return rule.fault
        rates = self._rates
        if rates is None:
            return None
        roll = rates.draw.random()
        if roll < rates.loss:
            return "lose"
        if roll < rates.loss + rates.duplication:
            return "duplicate"
        if roll < rates.loss + rates.duplication + rates.reordering:
            return "reorder"
        return None


def _count(n: int) -> int:
    if n < 0:
        raise ValueError(f"a fault count must be >= 0, not {n}")
    return n
