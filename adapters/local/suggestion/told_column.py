"""A cursor's told results as a rebuild reads them: by trial number, in few C-level passes.

A restart rebuilds the study from the cursor's ``told`` (assignment index, as text -> the
result kept: ``nonfinite.stored``), and every pass over it is a pass over the whole history,
of which a sampler such as Sobol's reads almost nothing. So the passes that only serve a case
are taken in that case: the infinities' texts are read back only if the cursor holds one, and
the best trial is found among ``told``'s own values (no running trial there to skip) when
``told`` holds exactly the trials' results. Which types ``told`` holds is found once, by the
search's ``check`` of the cursor read back (``types``), not again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from itertools import compress, repeat
from operator import is_not
from typing import Any

from katib_resume.adapters.local.suggestion.live_study import UNTOLD, Result, best_of
from katib_resume.adapters.local.suggestion.nonfinite import values_of

NONE = type(None)


def types_of(told: Mapping[str, Any]) -> set[type]:
    """The types of ``told``'s values (one C-level pass)."""
    return set(map(type, told.values()))


def results_of(told: Mapping[str, Any], keys: Sequence[str], types: Set[type]) -> list[Result]:
    """The result of each of ``keys`` (``UNTOLD``: none told), the infinities' texts read
    back as numbers if ``told`` holds any text."""
    results: list[Any] = list(map(told.get, keys, repeat(UNTOLD)))
    return values_of(results) if str in types else results


def complete_of(results: Sequence[Result], untold: int, types: Set[type]) -> int:
    """How many of ``results`` are complete, ``untold`` of them being ``UNTOLD``: the
    failures are counted only if ``told`` holds one."""
    return len(results) - untold - (results.count(None) if NONE in types else 0)


def best(
    told: Mapping[str, Any],
    results: Sequence[Result],
    untold: int,
    types: Set[type],
    maximize: bool,
) -> int | None:
    """``best_of(results, maximize)``, ``untold`` of ``results`` being ``UNTOLD``: when the
    others are every one of ``told``'s values (so ``told`` holds no other key), the best value
    is that of ``told``'s values, the failures left out, and its trial the first that has it."""
    if len(told) + untold != len(results):
        return best_of(results, maximize)
    values: list[Any] = list(told.values())
    if str in types:
        values = values_of(values)
    if NONE in types:
        values = list(compress(values, map(is_not, values, repeat(None))))
    if not values:
        return None
    return list(results).index(max(values) if maximize else min(values))


def numbers_of(kept: Sequence[int], count: int) -> list[int | None]:
    """Each of ``count`` assignments' trial number (``None``: not a trial), of the ``kept``."""
    numbers: list[int | None] = [None] * count
    for number, index in enumerate(kept):
        numbers[index] = number
    return numbers
