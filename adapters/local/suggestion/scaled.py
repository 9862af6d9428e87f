"""Random search's draws on Katib's distributions: ``logUniform``, ``normal``, ``logNormal``.

Katib's ``random`` (its hyperopt service, ``pkg/suggestion/v1beta1/hyperopt/base_service.py``)
samples ``hp.loguniform(ln min, ln max)``, ``hp.normal(mu, sigma)`` and ``hp.lognormal``, with
``mu = (min + max) / 2`` and ``sigma = (max - min) / 6`` (for ``logNormal`` on ``ln min`` and
``ln max``), and their q-variants with a step. Ours samples the same shapes, with two choices of
its own (``docs/algorithms.md#search-space``):

- The normals are truncated to ``[min, max]``: hyperopt's are not, so a Trial could receive a
  value outside its ``feasibleSpace``. ``min`` and ``max`` are always ``mu - 3 sigma`` and
  ``mu + 3 sigma``, so the draw is an inverse-CDF one on the standard normal between -3 and 3:
  one generator draw, the same cost at every seed and exactly the truncated law (a draw again
  until inside would cost an unbounded number of draws).
- A stepped parameter (every ``int``: step 1 by default) takes the value of its grid
  ``min + i * step`` nearest to the continuous draw, as the q-variants round to the step, but
  on our grid (``space.Parameter.value``: ``0.3``, not ``0.30000000000000004``), so the
  value is always one of the values a grid of the same parameter issues.

A uniform parameter, and a list, are drawn by ``Parameter.sample`` as before, so an all-uniform
space gives exactly the points (and the state digest) it gave before these distributions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from statistics import NormalDist

from katib_resume.adapters.local.suggestion.space import (
    Parameter,
    Point,
    SearchSpace,
    needs_positive_min,
)

_Z = NormalDist()
_TAILS = (_Z.cdf(-3.0), _Z.cdf(3.0))
"""The standard normal's CDF at -3 and 3: where ``min`` and ``max`` stand."""


def check(space: SearchSpace) -> None:
    """Raise ``SpaceError`` for a log scale on a numeric parameter whose ``min`` is not > 0."""
    for index, parameter in enumerate(space.parameters):
        if not parameter.choices:
            needs_positive_min(parameter, space.scale(index))


def point(space: SearchSpace, rng: random.Random) -> Point:
    """One random point: exactly one draw per parameter, in parameter order, on its scale."""
    if not space.scales:
        return space.sample(rng)
    return tuple((p.name, draw(p, space.scale(i), rng)) for i, p in enumerate(space.parameters))


def draw(parameter: Parameter, scale: str, rng: random.Random) -> str:
    """One value of ``parameter`` on ``scale``, rendered; uniform and lists as ``sample``."""
    if not scale or parameter.choices:
        return parameter.sample(rng)
    value = continuous(parameter, scale, rng.random())
    if parameter.step is None:
        return repr(value)
    return parameter.value(nearest(parameter, value))


def continuous(parameter: Parameter, scale: str, u: float) -> float:
    """The value at quantile ``u`` (in ``[0, 1)``) of the scale's law on ``[min, max]``."""
    low, high = float(parameter.low), float(parameter.high)
    return _clamp(_LAWS[scale](low, high, u), low, high)


def nearest(parameter: Parameter, value: float) -> int:
    """The index of the grid value ``min + i * step`` nearest to ``value`` (ties upwards)."""
    assert parameter.step is not None and parameter.count is not None
    offset = (value - float(parameter.low)) / float(parameter.step)
    return min(max(math.floor(offset + 0.5), 0), parameter.count - 1)


def _log_uniform(low: float, high: float, u: float) -> float:
    ln_low, ln_high = math.log(low), math.log(high)
    return math.exp(_clamp(ln_low + u * (ln_high - ln_low), ln_low, ln_high))


def _normal(low: float, high: float, u: float) -> float:
    """The normal of mean ``(low + high) / 2`` and deviation ``(high - low) / 6``, truncated
    to ``[low, high]``, at quantile ``u`` (halves first: ``low + high`` may overflow)."""
    mu, sigma = low / 2 + high / 2, (high - low) / 6
    p = _TAILS[0] + u * (_TAILS[1] - _TAILS[0])
    return _clamp(mu + sigma * _Z.inv_cdf(p), low, high)


def _log_normal(low: float, high: float, u: float) -> float:
    return math.exp(_normal(math.log(low), math.log(high), u))


def _clamp(value: float, low: float, high: float) -> float:
    """``value`` within ``[low, high]``: the last rounding of ``exp`` or of ``mu + sigma * z``
    may land one ulp beyond a bound."""
    return min(max(value, low), high)


_LAWS: dict[str, Callable[[float, float, float], float]] = {
    "logUniform": _log_uniform,
    "normal": _normal,
    "logNormal": _log_normal,
}
"""Each scale's value at a quantile, on ``[min, max]`` as floats."""
