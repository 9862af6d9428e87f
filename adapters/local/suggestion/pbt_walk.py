"""The lineage of a PBT history that carries no labels, found by replaying the search.

Over gRPC a rebuilt service has no labels to read: Katib's controller copies an assignment's
labels onto the Trial's ``metadata.labels``, but the Trial message it sends holds the Trial's
``spec.labels`` (``ConvertTrials``), which nothing fills. What the request does carry is the
assignments, in issue order, and their results, and each member of a generation is a function
of the seed, its generation, its place in it and the pool it was bred from (``pbt``). So the
lineage can be found again: walk the history, and at every assignment ask which member it is,
the current generation's next one, or (once that generation's pool has every result) the first
of the next generation. A value both could be (an exploiting child copies its source's values)
is tried both ways, the current generation first; a history that no lineage explains (another
service's, another seed's, a Trial missing) gives ``None``, and the caller falls back to the
labels' reading (every assignment in generation 0). The walk is bounded (``BUDGET``), and runs
once per rebuild, at its first call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from katib_resume.adapters.local.suggestion.pbt_record import Lineage
from katib_resume.adapters.local.suggestion.results import Results
from katib_resume.adapters.local.suggestion.space import Point

if TYPE_CHECKING:
    from katib_resume.adapters.local.suggestion.pbt import PbtSearch

BUDGET = 4
"""Members tried per assignment, at most, over the whole walk (backtracking included)."""


def walk(search: PbtSearch, points: Sequence[Point], results: Results) -> Lineage | None:
    """The record ``search`` had when it issued ``points`` knowing ``results``, or ``None``."""
    budget = BUDGET * len(points) + 16
    branches: list[tuple[int, Lineage]] = [(0, ([0], [], []))]
    while branches:
        k, (starts, parents, pools) = branches.pop()
        while k < len(points):
            budget -= 1
            if budget < 0:
                return None
            child = search._member(k - starts[-1], starts, pools, points)
            fits = child.point == points[k]
            if search._ready(starts, k, results):
                nexts, next_pools = [*starts, k], [*pools, search._pool_values(starts[-1], results)]
                first = search._member(0, nexts, next_pools, points)
                if first.point == points[k]:
                    other = (nexts, [*parents, _parent(first.parent)], next_pools)
                    if not fits:
                        starts, parents, pools = other
                        k += 1
                        continue
                    branches.append((k + 1, other))
            if not fits:
                break
            parents.append(_parent(child.parent))
            k += 1
        else:
            return starts, parents, pools
    return None


def _parent(parent: int | None) -> int:
    return -1 if parent is None else parent
