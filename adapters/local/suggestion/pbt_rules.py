"""Katib's PBT rules, by hand: truncation selection (exploit) and perturbation (explore).

A generation is bred from the ``n`` members of the one before (its *pool*), each with its
objective value scaled so that bigger is better (``None``: the member failed). The pool is ranked
best first; the worst ``int(n * truncation_threshold)`` members (and every failed one) *exploit*:
each child copies the values of a *top* member, one whose value is at or above the pool's
``1 - truncation_threshold`` quantile (drawn with replacement), and starts from that member's
checkpoint. The other members *explore*: each child starts from its own member's checkpoint
with every value perturbed (``resample_probability`` unset) or, with that probability per value,
drawn again from the search space.

Perturbation multiplies a number by 0.8 or 1.2, as Katib does, and moves a list value to a
neighbour (wrapping around at both ends). Unlike Katib's it keeps every value valid: an ``int``
stays an integer on its step grid (Katib's clamp turned ``1`` into ``"1.0"``, which broke the
next perturbation), a stepped ``double`` stays on its grid, both move at least one step when the
factor would round back to the same value (Katib's ``int(1 * 1.2)`` never left 1), and all stay
within ``[min, max]``. Katib's exploit copied the strong member's values but kept the weak
member's checkpoint; here the checkpoint goes with the values, as in the PBT paper.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from katib_resume.adapters.local.suggestion.space import Parameter, Point, SearchSpace

FACTORS = (0.8, 1.2)


@dataclass(frozen=True, slots=True)
class Member:
    index: int  # the assignment's index in the issue order
    point: Point
    value: float | None  # scaled: bigger is better; None if the Trial failed


@dataclass(frozen=True, slots=True)
class Child:
    point: Point
    parent: int | None  # the index of the member whose checkpoint it starts from


def quantile(values: Sequence[float], q: float) -> float:
    """``numpy.quantile``'s default (linear interpolation between the closest ranks). Between
    an infinity and another value it is the upper rank's value (the lower one's at a rank
    exactly): with a finite value in the infinity's place the bound would lie between the two
    ranks, so the members at or above the bound are the same (``numpy`` gives NaN for
    ``-inf`` and ``inf``, and for two infinities of one sign)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    below, above, fraction = ordered[low], ordered[high], position - low
    if math.isinf(below) or math.isinf(above):
        return below if fraction == 0 or below == above else above
    return below + (above - below) * fraction


def breed(
    pool: Sequence[Member],
    space: SearchSpace,
    threshold: float,
    resample: float | None,
    rng: random.Random,
) -> list[Child]:
    """One child per pool member: the exploiting children first, then the exploring ones (each
    group shuffled, as Katib orders them). A pool with no value at all starts afresh."""
    valued = [m for m in pool if m.value is not None]
    if not valued:
        return [Child(space.sample(rng), None) for _ in pool]
    ranked = sorted(pool, key=_rank)
    cut = min(len(pool) - 1, max(len(pool) - len(valued), int(len(pool) * threshold)))
    weak, strong = ranked[len(pool) - cut :], ranked[: len(pool) - cut]
    bound = quantile([m.value for m in valued if m.value is not None], 1 - threshold)
    top = [m for m in strong if m.value is not None and m.value >= bound] or strong[:1]
    rng.shuffle(weak)
    rng.shuffle(strong)
    children = []
    for _ in weak:
        source = rng.choice(top)
        children.append(Child(source.point, source.index))
    for member in strong:
        children.append(Child(explore(member.point, space, resample, rng), member.index))
    return children


def _rank(member: Member) -> tuple[bool, float, int]:
    """Best first; failed last; ties by issue order."""
    return member.value is None, -(member.value or 0.0), member.index


def explore(point: Point, space: SearchSpace, resample: float | None, rng: random.Random) -> Point:
    values = []
    for parameter, (name, value) in zip(space.parameters, point, strict=False):
        if resample is None:
            values.append((name, perturb(parameter, value, rng)))
        elif rng.random() < resample:
            values.append((name, parameter.sample(rng)))
        else:
            values.append((name, value))
    return tuple(values)


def perturb(parameter: Parameter, value: str, rng: random.Random) -> str:
    """A neighbour of ``value`` (module docstring); a value the space cannot hold (a foreign
    history) is drawn again instead."""
    if parameter.choices:
        if value not in parameter.choices:
            return parameter.sample(rng)
        index = parameter.choices.index(value) + rng.choice((-1, 1))
        return parameter.choices[index % len(parameter.choices)]
    factor = rng.choice(FACTORS)
    try:
        number = float(value)
    except ValueError:
        return parameter.sample(rng)
    if not math.isfinite(number):
        return parameter.sample(rng)
    low, high = float(parameter.low), float(parameter.high)
    if parameter.step is None:
        return repr(min(high, max(low, number * factor)))
    return parameter.value(_stepped(parameter, number, factor))


def _stepped(parameter: Parameter, number: float, factor: float) -> int:
    """The grid index nearest ``number * factor``, at least one step away from ``number``'s
    own index when the bounds allow."""
    low, step, last = float(parameter.low), float(parameter.step or 1), (parameter.count or 1) - 1
    here = min(last, max(0, round((number - low) / step)))
    there = min(last, max(0, round((number * factor - low) / step)))
    if there == here:
        delta = number * factor - number
        direction = 1 if delta > 0 or (delta == 0 and factor > 1) else -1
        there = min(last, max(0, here + direction))
    return there
