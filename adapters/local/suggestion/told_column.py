"""The results an Optuna search was told, as its cursor keeps them: a column by assignment index.

A restart rebuilds the study from the cursor's ``told``, and every question the rebuild asks of
it (which trials failed, which are running, which is best, how many are complete) is a
question about the whole history, of which a sampler such as Sobol's reads almost nothing
else. So ``told`` is a ``column.Column`` (since state format 7): entry ``i`` is the result
kept for assignment ``i``, a double, or one of the two NaNs that mean a failure and no result
yet, and the column ends at the last assignment told. Each question is then one NumPy pass
over the doubles (a few microseconds at 5,000 results), and the study's trials read their
results one at a time, by number, from a view of them (``Results``) that makes a Python value
only for the trials built (``sampler_reads``: for Sobol and CMA-ES, a few). A journal record
sets the entries a call told (``cursor_delta``).

Format 4 to 6 kept the column as a JSON array of numbers, ``null``, ``"inf"``, ``"-inf"`` and
``"untold"``, and format 3 as a dict by index text: ``column_of`` and ``from_version_3`` read
them, and the next save writes the column.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from itertools import compress, repeat
from operator import is_
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from katib_resume.adapters.local.suggestion import cursor_delta
from katib_resume.adapters.local.suggestion.column import (
    FAILED_BITS,
    UNTOLD_BITS,
    UNTOLD_TEXT,
    Column,
)
from katib_resume.adapters.local.suggestion.live_study import UNTOLD, Result, best_of


def told_with(told: Column, fresh: Mapping[int, Any]) -> Column:
    """A new column: ``told`` with the results ``fresh`` (by assignment index, as a cursor
    names them) set, the entries between its end and theirs untold (``told`` is not
    changed). The journal's record of the change then compares only those entries
    (``cursor_delta.noted``)."""
    column = told.with_set(fresh)
    cursor_delta.noted(told, column, fresh)
    return column


def column_of(told: Any) -> Column:
    """The column of a format 4 to 6 cursor's ``told`` (a list of entries as a cursor names
    them); raises ``ValueError`` if it is no such list."""
    if type(told) is not list:
        raise ValueError("not a results column")
    return Column.of(told)


def sound(told: Column) -> bool:
    """Whether every entry of ``told`` is a result, a failure or untold (a column read back
    may hold any bits): one NumPy pass."""
    values = _doubles(told)
    nan = np.isnan(values)
    if not nan.any():
        return True
    bits = values.view(np.uint64)[nan]
    return bool(np.isin(bits, (FAILED_BITS, UNTOLD_BITS)).all())


class Results(Sequence[Result]):
    """The results of the first ``count`` assignments, by assignment index (``None``: failed;
    ``UNTOLD``: none told yet), read from a copy of a column's doubles: a Python value is made
    for an entry only when it is read, and the questions a rebuild asks of them all
    (``untold``, ``failed``, ``best``, and ``None``/``UNTOLD`` in or counted) are NumPy passes."""

    __slots__ = ("_bits", "_count", "_values", "_whole")

    def __init__(self, told: Column, count: int) -> None:
        self._values = _doubles(told)[:count].copy()  # (no export of the column held)
        self._bits = self._values.view(np.uint64)
        self._count = count
        self._whole: list[Result] | None = None

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Result: ...

    @overload
    def __getitem__(self, index: slice) -> list[Result]: ...

    def __getitem__(self, index: int | slice) -> Result | list[Result]:
        if isinstance(index, slice):
            return self.whole()[index]
        at = index + self._count if index < 0 else index
        if not 0 <= at < self._count:
            raise IndexError("results index out of range")
        if at >= len(self._values):
            return UNTOLD
        value = float(self._values[at])
        if not math.isnan(value):
            return value
        return None if int(self._bits[at]) == FAILED_BITS else UNTOLD

    def __iter__(self) -> Iterator[Result]:
        return iter(self.whole())

    def __contains__(self, value: object) -> bool:
        if value is None:
            return self.failed() > 0
        if value is UNTOLD:
            return self._count > len(self._values) or bool((self._bits == UNTOLD_BITS).any())
        return value in self.whole()

    def count(self, value: Any) -> int:
        if value is None:
            return self.failed()
        if value is UNTOLD:
            return len(self.untold())
        return self.whole().count(value)

    def whole(self) -> list[Result]:
        """Every result, as a list (a Python value each: for a reader of them all), made once
        (do not mutate)."""
        if self._whole is None:
            results: list[Any] = self._values.tolist()
            for at in np.flatnonzero(np.isnan(self._values)).tolist():
                results[at] = None if int(self._bits[at]) == FAILED_BITS else UNTOLD
            results.extend(repeat(UNTOLD, self._count - len(results)))
            self._whole = results
        return self._whole

    def untold(self) -> set[int]:
        """The indexes whose result is ``UNTOLD``."""
        found = np.flatnonzero(self._bits == UNTOLD_BITS).tolist()
        return {*found, *range(len(self._values), self._count)}

    def failed(self) -> int:
        """How many results are failures."""
        return int(np.count_nonzero(self._bits == FAILED_BITS))

    def best(self, maximize: bool) -> int | None:
        """The index of the best result, the first of equals (``None``: none told a value)."""
        told = np.flatnonzero(~np.isnan(self._values))
        if not told.size:
            return None
        values = self._values[told]
        return int(told[values.argmax() if maximize else values.argmin()])


def results_of(told: Column, kept: Sequence[int], count: int) -> Sequence[Result]:
    """The result of each of the ``kept`` of ``count`` assignments, by trial number: a view
    of the column (``Results``) where every assignment is a trial, else a list."""
    results = Results(told, count)
    if isinstance(kept, range) and len(kept) == count:
        return results
    return list(map(results.__getitem__, kept))


def untold_of(kept: Sequence[int], results: Sequence[Result]) -> set[int]:
    """The ``kept`` assignments whose result (``results``, by trial number) is ``UNTOLD``."""
    if isinstance(results, Results):  # (then the trial numbers are the indexes)
        return results.untold()
    return set(compress(kept, map(is_, results, repeat(UNTOLD))))


def complete_of(results: Sequence[Result], untold: int) -> int:
    """How many of ``results`` are complete, ``untold`` of them being ``UNTOLD``."""
    return len(results) - untold - results.count(None)


def best(results: Sequence[Result], maximize: bool) -> int | None:
    """``live_study.best_of(results, maximize)``: the first trial with the best value, failures
    and untold left out."""
    if isinstance(results, Results):
        return results.best(maximize)
    return best_of(results, maximize)


def from_version_3(told: Any, count: int) -> list[Any]:
    """The column of a format 3 cursor's ``told`` (assignment index as text -> result) of
    ``count`` assignments, as a format 4 to 6 cursor kept it (``column_of`` reads that), read
    as format 3 read it: only the keys that are the text of an assignment's index (``str(i)``)
    were ever looked up; a result ``true`` or ``false`` (a number to Optuna) becomes that
    number. Raises ``ValueError`` if ``told`` is no dict."""
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


def _doubles(told: Column) -> npt.NDArray[np.float64]:
    """The column's doubles, read in place (a view: not held past the caller's use)."""
    return np.frombuffer(told.doubles, dtype=np.float64)
