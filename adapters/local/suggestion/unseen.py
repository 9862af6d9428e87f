"""A seeded point that was not issued yet, as ``random`` and hyperband's first rungs find one.

Both searches draw point ``k`` from a generator seeded by the seed and ``k``; where that draw was
issued already they draw again (``REDRAWS`` times, each its own generator seeded by the seed,
``k`` and the attempt), then take the first point not issued in the space's index order from a
position seeded by the seed and ``k``. So the point is a function of the seed, ``k`` and what
was issued before it, whatever the batches, and costs a bounded number of draws.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Set

from katib_resume.adapters.local.suggestion.space import Point

REDRAWS = 32
"""Seeded draws again for a point already issued, before the index order (``in_order``)."""


def redrawn(
    seed: int,
    index: int,
    seen: Set[Point],
    sample: Callable[[random.Random], Point],
    *,
    key: Callable[[Point], Point] = lambda point: point,
    attempts: int = REDRAWS,
) -> Point | None:
    """The first of ``attempts`` seeded draws again whose ``key`` is not in ``seen``, if any."""
    for attempt in range(attempts):
        point = sample(random.Random(f"{seed}/{index}/{attempt}"))
        if key(point) not in seen:
            return point
    return None


def in_order(
    seed: int, index: int, seen: Set[Point], size: int, grid_point: Callable[[int], Point]
) -> Point | None:
    """The first of the ``size`` points ``grid_point`` gives that is not in ``seen``, from a
    position seeded by ``index``, wrapping round; ``None`` if every one is."""
    start = random.Random(f"{seed}/{index}/order").randrange(size)
    return next((p for i in range(size) if (p := grid_point((start + i) % size)) not in seen), None)
