"""The Optuna params of many assignments at once, read parameter by parameter.

A restart turns every issued assignment back into the params of its Optuna trial. Read one
value at a time (``optuna_space.parse``, by a Python call per value) that was two fifths of a
rebuild at 5,000 assignments. Here each parameter's texts are read as one column: a C-level
pass maps the texts our own service writes (a float strictly inside the bounds, an integer's
``str``, one of a finite parameter's values), and only the others, which another service may
have written (``"3.0"`` for an int, a value outside the space), are read exactly, one by one.
Every value reads as ``parse`` reads it (a property test holds the two to each other)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

from katib_resume.adapters.local.suggestion.optuna_space import parse, reader
from katib_resume.adapters.local.suggestion.space import Parameter, Point, SearchSpace

TABLE_SLACK = 1024
"""A finite parameter's values are tabled when there are at most this many more of them than
texts to read (a table costs one entry per value; reading without one, a call per text)."""


def params_of(space: SearchSpace, points: Sequence[Point]) -> list[dict[str, Any] | None] | None:
    """Each point's Optuna params (``None``: not a point of the space), as ``OptunaSearch``
    reads them one by one; ``None`` when the points do not all name the space's parameters
    in order (a foreign history: the caller reads them one by one)."""
    names = tuple(p.name for p in space.parameters)
    if not points:
        return []
    if not names or set(map(len, points)) != {len(names)}:
        return None
    columns = list(zip(*points, strict=True))
    if any(set(map(_NAME, column)) != {name} for name, column in zip(names, columns, strict=True)):
        return None
    values = [
        read_column(p, space.scale(i), list(map(_TEXT, column)))
        for i, (p, column) in enumerate(zip(space.parameters, columns, strict=True))
    ]
    rows: list[dict[str, Any] | None] = list(
        map(dict, map(zip, repeat(names), zip(*values, strict=True)))
    )
    for column in values:
        if None in column:
            rows = [None if v is None else row for row, v in zip(rows, column, strict=True)]
    return rows


def read_column(parameter: Parameter, scale: str, texts: list[str]) -> list[Any]:
    """``parse(parameter, scale, t)`` for every text ``t``."""
    quick = _quick(parameter, scale, texts)
    if quick is None:
        read = reader(parameter, scale)
        return list(map(read, texts))
    if None in quick:
        pairs = zip(quick, texts, strict=True)
        return [parse(parameter, scale, t) if v is None else v for v, t in pairs]
    return quick


def _quick(parameter: Parameter, scale: str, texts: list[str]) -> list[Any] | None:
    """The values of the texts in our own spellings (``None`` where a text is not), or
    ``None`` when this parameter has no quick reading."""
    count = parameter.count
    table: dict[str, Any]
    if parameter.choices:
        table = {c: c for c in parameter.choices}
        return list(map(table.get, texts))
    if parameter.type == "int":
        return _ints(parameter, scale, texts)
    if count is None or scale:
        return _floats(parameter, texts)
    if count > len(texts) + TABLE_SLACK:
        return None
    table = {parameter.value(i): i for i in range(count)}  # a stepped double: its index
    return list(map(table.get, texts))


def _ints(parameter: Parameter, scale: str, texts: list[str]) -> list[Any] | None:
    """All texts as integers when each is an integer's ``str`` in the space, else ``None``."""
    try:
        values = list(map(int, texts))
    except ValueError:
        return None
    low, high = int(parameter.low), int(parameter.high)
    step = 1 if scale else int(parameter.step or 1)
    if not values or min(values) < low or max(values) > high or list(map(str, values)) != texts:
        return None
    if step != 1 and set(map(step.__rmod__, map(low.__rsub__, values))) != {0}:
        return None
    return values


def _floats(parameter: Parameter, texts: list[str]) -> list[Any] | None:
    """All texts as floats when each is a number strictly inside the bounds as a float, else
    ``None``. Such a text reads as ``parse`` reads it: ``float`` and ``Decimal`` accept the
    same spellings of a finite number and both round it correctly, and a float strictly
    inside the bounds' floats is a number inside the bounds (rounding is monotonic). (No
    ``repr`` check, which the one-value reader makes: it was most of the column's cost.)"""
    try:
        values = list(map(float, texts))
    except ValueError:
        return None
    low, high = float(parameter.low), float(parameter.high)
    if not values or not math.isfinite(sum(values)):  # a NaN compares as inside any bounds
        return None
    return values if low < min(values) and max(values) < high else None


_NAME, _TEXT = itemgetter(0), itemgetter(1)
