"""The PBT population record (the search's cursor), and how a trial history rebuilds it.

The record is ``{"starts", "parents", "pools"}``: ``starts[G]`` is the index of generation
``G``'s first assignment, ``parents[k]`` the index of the assignment whose checkpoint the
``k``-th starts from (-1: none), ``pools[G - 1]`` the values (scaled so that bigger is better;
``None``: failed; ``"inf"``, ``"-inf"``: the infinities, ``nonfinite.stored``) of the
``n_population`` members generation ``G`` was bred from, as they were when it was bred. With
it a restored search needs nothing but its file.

A search rebuilt from a trial history (its file lost or damaged) has only the assignments and
their labels, Katib's ``pbt.suggestion.katib.kubeflow.org/generation`` and ``.../parent``: values
alone cannot tell a lineage, since an exploiting child has exactly its source's values. Its
cursor is ``{"replayed": n, "labels": [[generation, parent index], ...]}`` until the next call,
which brings the results the pools are made of (a pool's results never change once known).
An assignment without a readable generation label counts in the generation of the one before.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from katib_resume.adapters.local.suggestion import cursor_delta
from katib_resume.adapters.local.suggestion.nonfinite import INFINITIES, Stored
from katib_resume.core.manifest import Manifest

GENERATION = "pbt.suggestion.katib.kubeflow.org/generation"
PARENT = "pbt.suggestion.katib.kubeflow.org/parent"
Lineage = tuple[list[int], list[int], list[list[Stored]]]
"""``(starts, parents, pools)``."""


def start() -> dict[str, Any]:
    return {"starts": [0], "parents": [], "pools": []}


def complete(cursor: Any, issued: int) -> bool:
    """Whether ``cursor`` is a whole record of ``issued`` assignments (no walk needed)."""
    return "replayed" not in cursor and len(cursor["parents"]) == issued


def copy(cursor: Any) -> Lineage:
    """The record's lists, copied to be extended (a pool, once bred from, never changes, so
    the pools themselves are shared); the copies are noted as extensions of the record's own
    (``cursor_delta.noted``), so the save's record of the call is found from what was
    appended, not by a pass over every parent and pool."""
    parents, pools = list(cursor["parents"]), list(cursor["pools"])
    cursor_delta.noted(cursor["parents"], parents, ())
    cursor_delta.noted(cursor["pools"], pools, ())
    return list(cursor["starts"]), parents, pools


def labels_of(history: Sequence[Manifest]) -> list[list[int]]:
    """``[generation, parent index]`` per assignment, from its labels (-1: none readable)."""
    index: dict[str, int] = {}
    read: list[list[int]] = []
    for k, item in enumerate(history):
        labels = item.get("labels") or {}
        generation = str(labels.get(GENERATION, ""))
        parent = index.get(str(labels.get(PARENT, "")), -1)
        read.append([int(generation) if generation.isdigit() else -1, parent])
        index.setdefault(str(item.get("name", "")), k)
    return read


def from_labels(
    labels: Sequence[Sequence[int]], size: int, pool: Callable[[int], list[Stored]]
) -> Lineage:
    """The record the labels give; ``pool(first)`` is the pool starting at ``first``. A
    generation begins where the label rises past the current one and the current generation
    already has its ``size`` members."""
    starts, parents, pools = [0], [], []
    for k, (generation, parent) in enumerate(labels):
        if generation > len(starts) - 1 and k >= starts[-1] + size:
            pools.append(pool(starts[-1]))
            starts.append(k)
        parents.append(parent if 0 <= parent < k else -1)
    return starts, parents, pools


def sound(cursor: Any, size: int) -> bool:
    """Whether ``cursor`` has a shape this module writes (the file's checksum vouches for the
    rest)."""
    if not isinstance(cursor, dict):
        return False
    if "replayed" in cursor:
        return _sound_replay(cursor)
    if set(cursor) != {"starts", "parents", "pools"}:
        return False
    starts, parents, pools = cursor["starts"], cursor["parents"], cursor["pools"]
    if not _ints(starts) or not _ints(parents) or not isinstance(pools, list):
        return False
    gaps = map(operator.sub, starts[1:], starts[:-1])
    rising = all(map(operator.ge, gaps, itertools.repeat(size)))  # (in C, as below)
    if not starts or starts[0] != 0 or not rising or starts[-1] > len(parents):
        return False
    below = all(map(operator.lt, parents, itertools.count()))  # each before its child, in C
    if not below or min(parents, default=-1) < -1 or len(pools) != len(starts) - 1:
        return False
    if not set(map(type, pools)) <= {list} or not set(map(len, pools)) <= {size}:
        return False
    return _values(list(itertools.chain.from_iterable(pools)))


def _sound_replay(cursor: dict[str, Any]) -> bool:
    count, labels = cursor.get("replayed"), cursor.get("labels", [])
    if set(cursor) - {"replayed", "labels"} or type(count) is not int or count < 0:
        return False
    pairs = isinstance(labels, list) and all(_ints(pair) and len(pair) == 2 for pair in labels)
    return pairs and len(labels) in (0, count)


def _ints(values: Any) -> bool:
    """Whether ``values`` is a list of integers (checked in C: a parent per assignment)."""
    return isinstance(values, list) and set(map(type, values)) <= {int}


def _values(values: list[Any]) -> bool:
    """Whether each of ``values`` is a value a pool stores (``None``, a finite number, or
    one of ``INFINITIES``), checked in C-level passes, not a Python call a value: the pools
    hold a value for nearly every assignment, and a restart checks them all."""
    kinds = list(map(type, values))
    if not set(kinds) <= _STORED:
        return False
    if kinds.count(str) != sum(map(values.count, INFINITIES)):  # (only a str equals one)
        return False
    numbers = itertools.compress(values, map(isinstance, values, itertools.repeat(_NUMBER)))
    return all(map(math.isfinite, numbers))


_STORED = frozenset((type(None), int, float, str))
_NUMBER = (int, float)
