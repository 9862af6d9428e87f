"""The search space as Optuna distributions, and values both ways between Optuna and Katib.

The mapping is Katib's Optuna service's (docs/katib-contract.md#optuna-search-space), with two of
its bugs fixed:

- ``int``: ``IntDistribution(min, max, step)`` (step 1 by default); with ``logUniform``,
  ``IntDistribution(min, max, log=True)`` (Optuna's log scale has no step).
- ``double``: ``FloatDistribution(min, max)``; with ``logUniform``,
  ``FloatDistribution(min, max, log=True)`` (the step is ignored, as in Katib). A stepped uniform
  double is sampled as the index of its value on the grid ``min + i * step``
  (``IntDistribution(0, count - 1)``, the same line scaled), so that a Trial receives the value
  a user expects (``0.3``, not ``0.30000000000000004``) and a value read back from the history
  is exactly the one the sampler saw.
- ``categorical`` and ``discrete``: ``CategoricalDistribution(list)``, the entries as written.
- ``normal`` and ``logNormal``: rejected with Katib's message, but at validation, before any
  Trial (Katib fails at the first ``GetSuggestions``).
- a log scale needs ``min > 0``: rejected at validation (Katib silently raised a ``double``'s
  ``0`` to ``1e-10`` and an ``int``'s to 1, and hyperopt crashed: #2678).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import partial
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from katib_resume.adapters.local.suggestion.space import (
    Parameter,
    SearchSpace,
    SpaceError,
    needs_positive_min,
)

_PROTO_NAMES = {"normal": "NORMAL", "logNormal": "LOG_NORMAL"}


def distributions(space: SearchSpace) -> dict[str, BaseDistribution]:
    """Each parameter's Optuna distribution, in parameter order; raises ``SpaceError``."""
    return {p.name: distribution(p, space.scale(i)) for i, p in enumerate(space.parameters)}


def distribution(parameter: Parameter, scale: str) -> BaseDistribution:
    """The Optuna distribution of ``parameter`` on ``scale`` (``""``: uniform)."""
    if parameter.choices:
        return CategoricalDistribution(parameter.choices)
    if scale in _PROTO_NAMES:
        raise SpaceError(
            f"Unsupported distribution {_PROTO_NAMES[scale]} for parameter"
            f" {parameter.name}. The Optuna suggestion service supports only UNIFORM and"
            f" LOG_UNIFORM for {parameter.type} parameters."
        )
    low, high = parameter.low, parameter.high
    if scale == "logUniform":
        needs_positive_min(parameter, scale)
        if parameter.type == "int":
            return IntDistribution(int(low), int(high), log=True)
        return FloatDistribution(float(low), float(high), log=True)
    count = parameter.count
    if parameter.type == "int" and count is not None and parameter.step is not None:
        step = int(parameter.step)
        return IntDistribution(int(low), int(low) + (count - 1) * step, step=step)
    if count is not None:
        return IntDistribution(0, count - 1)  # a stepped double: the index of its value
    return FloatDistribution(float(low), float(high))


def render(parameter: Parameter, scale: str, value: Any) -> str:
    """An Optuna value as the Trial receives it (see ``space``: Katib's spellings)."""
    if parameter.choices:
        return str(value)
    if parameter.type == "double" and _indexed(parameter, scale):
        return parameter.value(int(value))
    if parameter.type == "int":
        return str(int(value))
    return repr(float(value))


def parse(parameter: Parameter, scale: str, text: str) -> Any:
    """The Optuna value of a Trial's value, or ``None`` if it is not one of the space's.

    A history may hold assignments another service made; those outside the space are skipped.
    """
    if parameter.choices:
        return text if text in parameter.choices else None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite() or not parameter.low <= number <= parameter.high:
        return None
    if parameter.type == "double" and _indexed(parameter, scale):
        assert parameter.step is not None
        index = int(((number - parameter.low) / parameter.step).to_integral_value())
        inside = 0 <= index < (parameter.count or 0)
        return index if inside and parameter.value(index) == text else None
    if parameter.type == "int":
        whole = int(number)
        step = 1 if scale else int(parameter.step or 1)
        return whole if whole == number and (whole - int(parameter.low)) % step == 0 else None
    return float(number)


def reader(parameter: Parameter, scale: str) -> Callable[[str], Any]:
    """``parse`` for one parameter, quicker for a continuous double (a restart reads every
    assignment): a text that is a float's ``repr`` strictly inside the bounds is that float
    (rounding is monotonic, so it is a number strictly inside them), anything else is left to
    ``parse``'s exact reading."""
    exact = partial(parse, parameter, scale)
    if parameter.type != "double" or parameter.choices or _indexed(parameter, scale):
        return exact
    low, high = float(parameter.low), float(parameter.high)

    def quick(text: str) -> Any:
        try:
            value = float(text)
        except ValueError:
            return exact(text)
        return value if low < value < high and repr(value) == text else exact(text)

    return quick


def _indexed(parameter: Parameter, scale: str) -> bool:
    """Whether a double is sampled by the index of its grid value (uniform with a step)."""
    return parameter.step is not None and not scale
