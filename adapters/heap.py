"""Python's cycle collector kept off work it cannot help with: decoding, then holding, a state,
and the short-lived copies of a long history while the embedded runtime steps.

CPython's cycle collector runs a full collection whenever the objects that survived since the
last one grow by a quarter of those it already tracks, and each full collection walks every
tracked object. Opening a state directory decodes every live object (thousands of Trials, each a
few hundred dicts and lists); decoded JSON holds no reference cycles, so every collection during
the decode walks the whole heap and frees nothing, and the collections after it walk the opened
state again and again for as long as the command runs. Measured on a 1,000-trial restart, the
collector was about half of the time to the first new assignment.

The suggestion service's restore is the same kind of work (its state file parsed, one Optuna
trial built per assignment: at 5,000 assignments the collector's passes tripled the rebuild's
time, 0.065 s against 0.018 s).

``paused`` switches the collector off for a block that only builds acyclic data (it is switched
back on as it was found, whatever happens). What the block built is still in the young
generation when the collector comes back, and the count of allocations that triggers its next
collection is long past: the first allocation after the block would walk all of it (measured:
50 ms of CPU, a sixth of a restart at 5,000 Trials, freeing nothing). So the block's objects are
first moved to the oldest generation, or, inside a ``frozen`` block, to the permanent one it
holds, without a walk (``gc.freeze``, and ``gc.unfreeze`` when no ``frozen`` block is open: both
move whole generations at once). Inside a ``frozen`` block, a cycle that was already garbage
when a paused block ended is so collected only when the frozen block ends (the runtime pauses
at its start only, the suggestion service for a rebuild). ``frozen`` moves everything alive at
its start to the collector's permanent generation for the block (``gc.freeze``: still freed by
reference counting when dropped, never walked by a collection), and back to the oldest
generation after it (``gc.unfreeze``), so that what the block leaves behind is collected as
usual afterwards.

While the runtime steps, CPython's cycle collector looks at the young objects every 700
allocations (net of frees) and moves those that survive to the older generations, whose
collections walk them again; the oldest generation's collections walk the whole heap. A
reconcile of an Experiment with a long history builds and drops copies of its large objects (a
Suggestion with every assignment, the Experiment's lists of every Trial name: tens of thousands
of dicts and lists at 10,000 Trials), none of them cyclic garbage. At 700 allocations a
collection runs in the middle of building each copy, walks the copy, and promotes it, so it is
walked again by the older generations and counts towards the next full collection, though
reference counting frees it a moment later. At 10,000 trials that was 0.74 ms a trial of 8.4 (by
``gc.callbacks``).

``fewer_passes`` raises the young generation's threshold for a block (the older generations'
stay as they were), so a copy is made, read and freed by reference counting between two
collections. What is cyclic garbage is still collected, only later; the thresholds are put
back as they were found after the block, whatever happens inside.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_open_frozen = [0]
"""How many ``frozen`` blocks are open (the permanent generation is theirs until they end)."""


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block (for decoding acyclic data); what it built is not
    walked when the collector comes back (module docstring)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()  # every generation into the permanent one, without a walk
            if not _open_frozen[0]:
                gc.unfreeze()  # and from there into the oldest one
            gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """What is alive now is not walked by cycle collections inside the block."""
    gc.freeze()
    _open_frozen[0] += 1
    try:
        yield
    finally:
        _open_frozen[0] -= 1
        if not _open_frozen[0]:
            gc.unfreeze()


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
