"""Python's cycle collector kept off work it cannot help with: decoding, then holding, a state.

CPython's cycle collector runs a full collection whenever the objects that survived since the
last one grow by a quarter of those it already tracks, and each full collection walks every
tracked object. Opening a state directory decodes every live object (thousands of Trials, each a
few hundred dicts and lists); decoded JSON holds no reference cycles, so every collection during
the decode walks the whole heap and frees nothing, and the collections after it walk the opened
state again and again for as long as the command runs. Measured on a 1,000-trial restart, the
collector was about half of the time to the first new assignment.

``paused`` switches the collector off for a block that only builds acyclic data (it is switched
back on as it was found, whatever happens); ``frozen`` moves everything alive at its start to
the collector's permanent generation for the block (``gc.freeze``: still freed by reference
counting when dropped, never walked by a collection), and back to the oldest generation after it
(``gc.unfreeze``), so that what the block leaves behind is collected as usual afterwards.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block (for decoding acyclic data)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """What is alive now is not walked by cycle collections inside the block."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
