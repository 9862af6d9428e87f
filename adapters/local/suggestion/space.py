"""The search space: an Experiment's ``spec.parameters``, parsed once and checked.

Katib writes every bound as a string (``min: "0.01"``), so parsing is where a bad space is
caught, and a bad space must be a clear ``SpaceError`` (it becomes the ``Validation failed: ...``
message a user reads), never a ``ValueError`` from deep inside a draw.

Bounds are parsed as ``Decimal`` so that a grid over ``min + i * step`` lands on the values a
user expects (``0.03``, not ``0.030000000000000002``); ``int`` bounds become exact Python ints.
Values are rendered as Katib renders them, as strings: integers as integers, doubles as
``repr(float)`` (the shortest text that reads back as the same float), and ``discrete`` /
``categorical`` entries exactly as the user wrote them, so that a value is always literally one
of the list's entries.

Every parameter but a ``double`` without ``step`` is a finite *axis* (``count`` values, the
``i``-th given by ``value(i)``); grid search enumerates the Cartesian product of the axes by
index, without materialising it, and random search draws an index uniformly (on another of
Katib's distributions, the index nearest to its draw: ``scaled``). A ``double`` without ``step``
is continuous and only random search can sample it (unless its ``min`` is its ``max``: one value,
so a space's ``size``, its count of distinct points, counts it as one).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, fields
from decimal import Decimal, InvalidOperation
from typing import Any

TYPES = ("double", "int", "discrete", "categorical")
UNIFORM = ("", "uniform", "unknown")
"""The uniform distribution's spellings: ``""`` is the unset distribution and ``unknown``
Katib's CRD spelling of the API's unspecified one, both read as uniform as Katib's services
read them (and as the gRPC wire carries them: ``adapters/grpc/codec.py``)."""
ALL_DISTRIBUTIONS = (*UNIFORM, "logUniform", "normal", "logNormal")
"""Katib's CRD spellings: every algorithm reads them and says which it samples."""
LOG_SCALES = ("logUniform", "logNormal")

Point = tuple[tuple[str, str], ...]
"""One assignment's values: ``(parameter name, rendered value)`` pairs in parameter order."""


class SpaceError(ValueError):
    """The Experiment's ``spec.parameters`` cannot be searched; the message says why."""


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter; ``low``/``high``/``step`` are set for numbers, ``choices`` for lists."""

    name: str
    type: str
    low: Decimal = Decimal(0)
    high: Decimal = Decimal(0)
    step: Decimal | None = None
    choices: tuple[str, ...] = ()

    @property
    def count(self) -> int | None:
        """How many values the parameter takes; ``None`` for a continuous double."""
        if self.choices:
            return len(self.choices)
        if self.step is None:
            return None
        if self.type == "int":
            return (int(self.high) - int(self.low)) // int(self.step) + 1
        return int((self.high - self.low) // self.step) + 1

    @property
    def size(self) -> int | None:
        """How many values a search can give the parameter: ``count``, and one for a double
        without ``step`` whose ``min`` is its ``max``; ``None`` for a continuous double."""
        count = self.count
        if count is None and self.low == self.high:
            return 1
        return count

    def value(self, index: int) -> str:
        """The ``index``-th value of a finite parameter (``size`` values), rendered."""
        if self.choices:
            return self.choices[index]
        if self.step is None:
            assert self.low == self.high, "value() of a continuous double"
            return repr(float(self.low) + 0.0)  # as ``random.uniform(min, min)`` renders it
        if self.type == "int":
            return str(int(self.low) + index * int(self.step))
        return repr(float(min(self.low + index * self.step, self.high)))

    def sample(self, rng: random.Random) -> str:
        """One uniform draw: an index of a finite axis, or a float between the bounds."""
        count = self.count
        if count is not None:
            return self.value(rng.randrange(count))
        return repr(rng.uniform(float(self.low), float(self.high)))


@dataclass(frozen=True, slots=True)
class SearchSpace:
    """The parameters, and each one's distribution (``""``: uniform; ``()``: all uniform)."""

    parameters: tuple[Parameter, ...]
    scales: tuple[str, ...] = ()

    def scale(self, index: int) -> str:
        """The distribution of the ``index``-th parameter: ``""`` (uniform), ``logUniform``..."""
        return self.scales[index] if self.scales else ""

    @property
    def grid_size(self) -> int | None:
        """Points in the Cartesian product; ``None`` if a parameter is continuous."""
        return _product(parameter.count for parameter in self.parameters)

    @property
    def size(self) -> int | None:
        """How many distinct points the space has (``Parameter.size``: a double whose ``min``
        is its ``max`` counts as one value); ``None`` if a parameter is continuous. The grid's
        ``grid_size`` where every parameter has a step."""
        return _product(parameter.size for parameter in self.parameters)

    def grid_point(self, index: int) -> Point:
        """The ``index``-th point of the product (of ``size`` points), the last parameter
        varying fastest."""
        values: list[tuple[str, str]] = []
        for parameter in reversed(self.parameters):
            index, digit = divmod(index, parameter.size or 1)
            values.append((parameter.name, parameter.value(digit)))
        return tuple(reversed(values))

    def sample(self, rng: random.Random) -> Point:
        """One random point: exactly one draw per parameter, in parameter order."""
        return tuple((p.name, p.sample(rng)) for p in self.parameters)

    def fingerprint(self) -> str:
        """A digest of the parsed space, so saved state is never resumed on another space."""
        # each field's text, as ``asdict`` would give it, without its deep copies (a server
        # computes this at every start); a test holds the two spellings together
        names = [f.name for f in fields(Parameter)]
        data: list[Any] = [{k: str(getattr(p, k)) for k in names} for p in self.parameters]
        if any(self.scales):  # an all-uniform space keeps the digest it had before scales
            data.append(list(self.scales))
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _product(counts: Iterable[int | None]) -> int | None:
    """The product of ``counts``, or ``None`` as soon as one is ``None`` (a continuous one)."""
    size = 1
    for count in counts:
        if count is None:
            return None
        size *= count
    return size


def parse_space(raw: Any, distributions: tuple[str, ...] = ALL_DISTRIBUTIONS) -> SearchSpace:
    """``spec.parameters`` as Katib's JSON, checked; raises ``SpaceError``.

    ``distributions`` are those admitted (by default Katib's); what an algorithm cannot sample
    of them, it refuses in its own words (``algorithms``, ``optuna_space``).
    """
    if not isinstance(raw, list) or not raw:
        raise SpaceError("spec.parameters must be a non-empty list of parameters")
    parsed = [_parameter(i, item, distributions) for i, item in enumerate(raw)]
    parameters = tuple(parameter for parameter, _ in parsed)
    scales = tuple(scale for _, scale in parsed)
    names = [p.name for p in parameters]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SpaceError(f"parameter names must be unique, repeated: {', '.join(duplicates)}")
    return SearchSpace(parameters, scales if any(scales) else ())


def _parameter(position: int, item: Any, distributions: tuple[str, ...]) -> tuple[Parameter, str]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
        raise SpaceError(f"spec.parameters[{position}] must be a mapping with a non-empty name")
    name, type_ = item["name"], item.get("parameterType")
    space = item.get("feasibleSpace") or {}
    if type_ not in TYPES:
        raise SpaceError(f"parameter {name!r}: parameterType must be one of {', '.join(TYPES)}")
    if not isinstance(space, dict):
        raise SpaceError(f"parameter {name!r}: feasibleSpace must be a mapping")
    distribution = space.get("distribution", "")
    if distribution not in distributions:
        raise SpaceError(f"parameter {name!r}: distribution {distribution!r} is not supported")
    scale = "" if distribution in UNIFORM else str(distribution)
    if type_ in ("discrete", "categorical"):
        return Parameter(name, type_, choices=_choices(name, type_, space.get("list"))), scale
    return _numeric(name, type_, space), scale


def needs_positive_min(parameter: Parameter, scale: str) -> None:
    """Raise ``SpaceError`` for a log ``scale`` whose ``min`` is not > 0: Katib admitted it and
    then its services failed or silently moved ``min`` (#2678). A ``min`` too small for a float
    (``1e-400``) is refused too: its logarithm is no number."""
    if scale in LOG_SCALES and (parameter.low <= 0 or float(parameter.low) <= 0.0):
        raise SpaceError(
            f"parameter {parameter.name!r}: a {scale} distribution needs min > 0,"
            f" got {parameter.low}"
        )


def _choices(name: str, type_: str, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise SpaceError(f"parameter {name!r}: a {type_} parameter needs a non-empty list")
    choices = tuple(_text(name, "list entry", entry) for entry in raw)
    if type_ == "discrete":
        for choice in choices:
            _number(name, "list entry", choice)
    if len(set(choices)) < len(choices):
        raise SpaceError(f"parameter {name!r}: the list has a repeated value")
    return choices


def _numeric(name: str, type_: str, space: dict[str, Any]) -> Parameter:
    integer = type_ == "int"
    low = _number(name, "min", _text(name, "min", space.get("min")), integer=integer)
    high = _number(name, "max", _text(name, "max", space.get("max")), integer=integer)
    if high < low:
        raise SpaceError(f"parameter {name!r}: max ({high}) is less than min ({low})")
    if not math.isfinite(float(high) - float(low)):
        raise SpaceError(f"parameter {name!r}: the range from min to max is too wide")
    step: Decimal | None = Decimal(1) if integer else None
    if space.get("step") not in (None, ""):
        step = _number(name, "step", _text(name, "step", space["step"]), integer=integer)
        if step <= 0:
            raise SpaceError(f"parameter {name!r}: step must be positive, got {step}")
    if step is not None and not integer and not _distinct(low, high, step):
        raise SpaceError(f"parameter {name!r}: step {step} is too small to tell values apart")
    return Parameter(name, type_, low=low, high=high, step=step)


def _distinct(low: Decimal, high: Decimal, step: Decimal) -> bool:
    """Whether neighbouring grid values stay different floats (two ulps apart at the widest).

    Without this, ``min + i * step`` and ``min + (i + 1) * step`` could render as the same text
    and a grid would issue one point twice.
    """
    return float(step) >= 2 * math.ulp(max(abs(float(low)), abs(float(high))))


def _text(name: str, field: str, raw: Any) -> str:
    """Katib stores strings; a plain YAML number is accepted and read as its text."""
    if isinstance(raw, str) and raw.strip():
        return raw
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return str(raw)
    raise SpaceError(f"parameter {name!r}: {field} is missing or not a number, got {raw!r}")


def _number(name: str, field: str, text: str, *, integer: bool = False) -> Decimal:
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        raise SpaceError(f"parameter {name!r}: {field} {text!r} is not a number") from None
    if not number.is_finite() or not math.isfinite(float(number)):
        raise SpaceError(f"parameter {name!r}: {field} {text!r} is not a finite number")
    if integer and number != number.to_integral_value():
        raise SpaceError(f"parameter {name!r}: {field} {text!r} is not an integer")
    return number
