"""Objective values that are not finite: the one meaning the service gives them, and how a
cursor keeps one (docs/algorithms.md#objective-values-that-are-not-finite).

Katib's services read a Trial's objective with Python's ``float()``, so ``"nan"``, ``"inf"``,
``"-inf"`` and ``"1e999"`` all arrive as numbers. Optuna's ``Study.tell`` says what they mean, and
so does this service, for every algorithm:

- **NaN** is a failed Trial (``None``): ``tell`` marks a Trial told NaN ``FAIL``. It is neither
  better nor worse than anything, so no algorithm can rank it; as a failure, every algorithm
  knows what to do with it (hyperband ranks it last, PBT's pool lets it exploit).
- **±inf** is a value, the best or the worst there can be: ``tell`` completes the Trial with it.
  The samplers rank it as Optuna's do; a model that fits the values themselves clips it to the
  finite extremes, as Optuna's ``GPSampler`` does (``bayesian.py``).

The meaning is applied where results enter the algorithms: ``Known``, the results by index
every search reads (``admitted``), and the medianstop rule's averages.

A cursor is a JSON value (the state file is canonical JSON, which has no NaN nor infinities, and
is read back by ``orjson``, which refuses them), so a search that keeps a value in its cursor
keeps ±inf as the text ``"inf"`` or ``"-inf"`` (``stored``) and reads it back with
``value_of``: exact, distinct from every number, and ``float()`` reads it too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

Stored = float | str | None
"""A result as a cursor keeps it: a finite number, ``"inf"``/``"-inf"``, ``None`` (failed)."""
INFINITIES = frozenset(("inf", "-inf"))
"""The texts of the infinities in a cursor."""
_TEXT: dict[Any, str] = {math.inf: "inf", -math.inf: "-inf"}
_VALUE: dict[Any, float] = {"inf": math.inf, "-inf": -math.inf}


def admitted(value: float | None) -> float | None:
    """The result as the algorithms take it: NaN is a failure (``None``); any other as it is
    (what is no number is left to the algorithm, as before)."""
    try:
        return None if value is not None and math.isnan(value) else value
    except TypeError:
        return value


def has_nan(values: Iterable[float | None]) -> bool:
    """Whether ``values`` may hold a NaN (never false when one does), in one C-level pass: the
    sum of the numbers is NaN if one is (or if ``inf`` meets ``-inf``: a false alarm, which
    the caller settles value by value)."""
    try:
        return math.isnan(sum(filter(None, values)))
    except (OverflowError, TypeError):
        return True


def stored(value: float | None) -> Stored:
    """``value`` as a cursor keeps it (JSON has no infinities): ±inf as text."""
    return _TEXT.get(value, value)


def value_of(kept: Any) -> Any:
    """The value a cursor keeps as ``kept`` (``stored``'s inverse); anything else as it is."""
    return _VALUE.get(kept, kept) if type(kept) is str else kept


def values_of(kept: list[Any]) -> list[Any]:
    """``value_of`` of each of ``kept``, in one C-level pass (unhashable items: none here, a
    cursor's results are numbers, texts and ``None``)."""
    return list(map(_VALUE.get, kept, kept))
