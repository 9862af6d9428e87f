"""Fewer passes of Python's cycle collector while the embedded runtime steps.

CPython's cycle collector looks at the young objects every 700 allocations (net of frees) and
moves those that survive to the older generations, whose collections walk them again; the
oldest generation's collections walk the whole heap. A reconcile of an Experiment with a long
history builds and drops copies of its large objects (a Suggestion with every assignment, the
Experiment's lists of every Trial name: tens of thousands of dicts and lists at 10,000
Trials), none of them cyclic garbage. At 700 allocations a collection runs in the middle of
building each copy, walks the copy, and promotes it, so it is walked again by the older
generations and counts towards the next full collection, though reference counting frees it
a moment later. At 10,000 trials that was 0.74 ms a trial of 8.4 (by ``gc.callbacks``).

``fewer_passes`` raises the young generation's threshold for a block (the older generations'
stay as they were), so a copy is made, read and freed by reference counting between two
collections. What is cyclic garbage is still collected, only later; the thresholds are put
back as they were found after the block, whatever happens inside.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 100_000
"""Allocations between two collections of the young generation inside ``fewer_passes``
(CPython's default is 700): more than a reconcile of a 10,000-trial Experiment allocates."""


@contextmanager
def fewer_passes(young: int = YOUNG) -> Iterator[None]:
    """The young generation collected every ``young`` allocations inside the block (never
    less often than it was)."""
    before = gc.get_threshold()
    if before[0] != 0:  # a threshold of 0 means the collector was switched off: leave it
        gc.set_threshold(max(young, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
