"""The median wall-clock time of a call, repeated: the timing loop the benchmarks share."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(call: Callable[[], object], repeat: int) -> float:
    """The median of ``repeat`` timed calls of ``call``, in seconds of the clock."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)
