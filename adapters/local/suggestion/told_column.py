"""The results an Optuna search was told, as its cursor keeps them: a column by assignment index.

A restart rebuilds the study from the cursor's ``told``, and every pass over it is a pass over
the whole history, of which a sampler such as Sobol's reads almost nothing. Since state
format 4 ``told`` is a list: entry ``i`` is the result kept for assignment ``i``
(``nonfinite.stored``: a number, ``"inf"`` or ``"-inf"``, ``None`` for a failure) or
``UNTOLD_TEXT`` (none told yet: its trial is running); the list ends at the last assignment
told, so those after it are untold too. Read back, that is one JSON array of numbers (no key
per result to parse, hash and look up: format 3's dict by index text took 1 ms of a restart
at 5,000 results to parse and 0.6 ms to turn into this column), and a journal record
sets the entries a call told (``cursor_delta``'s ``set``).

Every pass is a C-level one, and those that only serve a case are taken in that case: the texts
(infinities, ``UNTOLD_TEXT``) are read back only if the column holds one, the failures counted
only if it holds one. Which types it holds is found once, by the search's ``check`` of the
cursor read back (``types``), not again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from itertools import compress, repeat
from operator import is_, is_not
from typing import Any

from katib_resume.adapters.local.suggestion import cursor_delta
from katib_resume.adapters.local.suggestion.live_study import UNTOLD, Result

NONE = type(None)
UNTOLD_TEXT = "untold"
"""An entry of an assignment not told a result yet (a text, as the infinities are: JSON has
no other value that no result can be, and ``False`` would equal ``0``)."""
TEXTS = frozenset(("inf", "-inf", UNTOLD_TEXT))
"""The texts a column may hold."""
_READ: dict[Any, Any] = {"inf": math.inf, "-inf": -math.inf, UNTOLD_TEXT: UNTOLD}


def types_of(told: Sequence[Any]) -> set[type]:
    """The types of ``told``'s entries (one C-level pass)."""
    return set(map(type, told))


def told_with(told: list[Any], fresh: Mapping[int, Any]) -> list[Any]:
    """A new column: ``told`` with the results ``fresh`` (by assignment index) set, the
    entries between its end and theirs untold (``told`` is not changed). The journal's
    record of the change then compares only those entries (``cursor_delta.noted``)."""
    column = list(told)
    end = max(fresh) + 1
    if end > len(column):
        column.extend(repeat(UNTOLD_TEXT, end - len(column)))
    for index, value in fresh.items():
        column[index] = value
    cursor_delta.noted(told, column, fresh)
    return column


def results_of(
    told: Sequence[Any], kept: Sequence[int], count: int, types: Set[type]
) -> list[Result]:
    """The result of each of the ``kept`` of ``count`` assignments (``UNTOLD``: none told),
    the texts read back as numbers and ``UNTOLD``; entries past ``count`` are no
    assignment's."""
    results: list[Any] = list(told[:count])
    if str in types:
        results = list(map(_READ.get, results, results))
    if len(results) < count:
        results.extend(repeat(UNTOLD, count - len(results)))
    if isinstance(kept, range) and len(kept) == count:
        return results
    return list(map(results.__getitem__, kept))


def untold_of(
    told: Sequence[Any],
    kept: Sequence[int],
    count: int,
    types: Set[type],
    results: Sequence[Result],
) -> set[int]:
    """The ``kept`` assignments whose result (``results``, as ``results_of`` reads them) is
    ``UNTOLD``. One is only where the column holds a text (``UNTOLD_TEXT``) or ends before the
    last of the ``count`` assignments: else none is, and no pass over the results is taken."""
    if str not in types and len(told) >= count:
        return set()
    return set(compress(kept, map(is_, results, repeat(UNTOLD))))


def complete_of(results: Sequence[Result], untold: int, types: Set[type]) -> int:
    """How many of ``results`` are complete, ``untold`` of them being ``UNTOLD``: the
    failures are counted only if the column holds one."""
    return len(results) - untold - (results.count(None) if NONE in types else 0)


def best(results: Sequence[Result], untold: int, types: Set[type], maximize: bool) -> int | None:
    """``live_study.best_of(results, maximize)``, ``untold`` of ``results`` being ``UNTOLD``:
    the best of the values, failures and untold left out (each in a C-level pass, and only if
    there are any), and the first trial that has it."""
    values: Sequence[Any] = results
    if untold:
        values = list(compress(values, map(is_not, values, repeat(UNTOLD))))
    if NONE in types:
        values = list(compress(values, map(is_not, values, repeat(None))))
    if not values:
        return None
    found = max(values) if maximize else min(values)
    return (results if isinstance(results, list) else list(results)).index(found)


def from_version_3(told: Any, count: int) -> list[Any]:
    """The column of a format 3 cursor's ``told`` (assignment index as text -> result) of
    ``count`` assignments, read as format 3 read it: only the keys that are the text of an
    assignment's index (``str(i)``) were ever looked up; a result ``true`` or ``false`` (a
    number to Optuna) becomes that number. Raises ``ValueError`` if ``told`` is no dict."""
    if not isinstance(told, dict):
        raise ValueError("not a version 3 search position")
    column: list[Any] = [UNTOLD_TEXT] * count
    for key, value in told.items():
        index = type(key) is str and key.isascii() and key.isdigit() and str(int(key)) == key
        if index and int(key) < count:
            column[int(key)] = float(value) if type(value) is bool else value
    while column and column[-1] == UNTOLD_TEXT:
        column.pop()
    return column


def numbers_of(kept: Sequence[int], count: int) -> list[int | None]:
    """Each of ``count`` assignments' trial number (``None``: not a trial), of the ``kept``."""
    numbers: list[int | None] = [None] * count
    for number, index in enumerate(kept):
        numbers[index] = number
    return numbers
