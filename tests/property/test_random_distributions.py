"""Random search's draws on every distribution, for any numeric parameter and seed.

Every value is one a Trial may receive (inside ``[min, max]``; a stepped one on its grid
``min + i * step``, an ``int`` an integer's text), a draw is a monotone function of its one
quantile (so the law is the one named, truncated, not clipped), spelling ``uniform`` out
changes neither a point nor the space's digest, and on a few values, where every law's draws
repeat, each value comes once and then the search is exhausted.
"""

from __future__ import annotations

import math
import random
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import parse_space
from katib_resume.adapters.local.suggestion.algorithms import RandomSearch
from katib_resume.adapters.local.suggestion.scaled import continuous, draw

SCALES = ("uniform", "logUniform", "normal", "logNormal")


@st.composite
def numeric(draw_: st.DrawFn, scale: str) -> dict[str, Any]:
    """An ``int`` or ``double`` feasible space, stepped or not, with ``min > 0`` on a log
    scale; bounds of a few significant digits over several decades."""
    positive = scale.startswith("log")
    integer = draw_(st.booleans())
    if integer:
        low = draw_(st.integers(1 if positive else -(10**6), 10**6))
        space = {"min": str(low), "max": str(low + draw_(st.integers(0, 10**6)))}
        if draw_(st.booleans()):
            space["step"] = str(draw_(st.integers(1, 1000)))
    else:
        low_d = Decimal(draw_(st.integers(1, 999))).scaleb(draw_(st.integers(-8, 4)))
        if not positive and draw_(st.booleans()):
            low_d = -low_d
        high_d = low_d + Decimal(draw_(st.integers(0, 999))).scaleb(draw_(st.integers(-8, 4)))
        space = {"min": str(low_d), "max": str(high_d)}
        if draw_(st.booleans()):
            space["step"] = str(
                Decimal(draw_(st.integers(1, 99))).scaleb(draw_(st.integers(-3, 2)))
            )
    return {"name": "x", "parameterType": "int" if integer else "double", "feasibleSpace": space}


@st.composite
def spaces(draw_: st.DrawFn) -> tuple[dict[str, Any], str]:
    scale = draw_(st.sampled_from(SCALES))
    parameter = draw_(numeric(scale))
    parameter["feasibleSpace"]["distribution"] = scale
    return parameter, scale


@given(case=spaces(), seed=st.integers(0, 2**32))
def test_every_draw_is_a_value_of_the_feasible_space(case: tuple[Any, str], seed: int) -> None:
    raw, _ = case
    space = parse_space([raw])
    (parameter,), scale = space.parameters, space.scale(0)
    rng = random.Random(seed)
    for _ in range(20):
        value = draw(parameter, scale, rng)
        assert parameter.low <= Decimal(value) <= parameter.high, value
        if parameter.type == "int":
            assert str(int(value)) == value
        if parameter.step is not None:
            index = int((Decimal(value) - parameter.low) / parameter.step)
            assert value in {parameter.value(i) for i in (index - 1, index, index + 1) if i >= 0}
        else:
            assert repr(float(value)) == value


@given(case=spaces(), quantiles=st.lists(st.floats(0, 1, exclude_max=True), min_size=2))
@example(  # a bound near 0 of a wide law: min + 1.5e-11 at the quantile 0, from 3e4 wide
    case=(
        {
            "name": "x",
            "parameterType": "double",
            "feasibleSpace": {"min": "0.01", "max": "30000.01", "distribution": "normal"},
        },
        "normal",
    ),
    quantiles=[0.0, 0.0],
)
def test_a_draw_is_monotone_in_its_quantile(case: tuple[Any, str], quantiles: list[float]) -> None:
    """An inverse CDF of the law truncated to ``[min, max]``: monotone, from ``min`` at the
    quantile 0 to ``max`` at the top (a law wrapped into the bounds would break the order, and
    one drawn again until inside would be no function of one quantile at all)."""
    raw, scale = case
    if scale == "uniform":
        return  # drawn by index or ``random.uniform``, as before these distributions
    parameter = parse_space([raw]).parameters[0]
    drawn = [continuous(parameter, scale, u) for u in sorted(quantiles)]
    assert drawn == sorted(drawn)
    low, high = float(parameter.low), float(parameter.high)
    assert low <= drawn[0] and drawn[-1] <= high
    near = 1e-12 * (high - low)  # an inverse CDF's rounding is the law's width's, not the bound's
    assert continuous(parameter, scale, 0.0) == pytest.approx(low, rel=1e-9, abs=near)
    top = continuous(parameter, scale, math.nextafter(1.0, 0.0))
    assert top == pytest.approx(high, rel=1e-9, abs=near)


@given(
    raws=st.lists(numeric("uniform"), min_size=1, max_size=3),
    spelled=st.lists(st.booleans(), min_size=3, max_size=3),
    seed=st.integers(0, 2**32),
)
def test_uniform_spelled_out_changes_nothing(
    raws: list[dict[str, Any]], spelled: list[bool], seed: int
) -> None:
    """The defaulting webhook writes ``uniform`` on every parameter: the points and the digest
    of a saved state are those of the unset distribution."""
    plain = [{**raw, "name": f"p{i}"} for i, raw in enumerate(raws)]
    labelled = [
        {**raw, "feasibleSpace": {**raw["feasibleSpace"], "distribution": "uniform"}}
        if say
        else raw
        for raw, say in zip(plain, spelled, strict=False)
    ]
    ours, theirs = parse_space(plain), parse_space(labelled)
    assert ours.fingerprint() == theirs.fingerprint()
    assert [RandomSearch(ours, seed).point(k) for k in range(10)] == [
        RandomSearch(theirs, seed).point(k) for k in range(10)
    ]


@given(
    scale=st.sampled_from(SCALES),
    low=st.integers(1, 50),
    count=st.integers(1, 12),
    stepped=st.booleans(),
    seed=st.integers(0, 2**32),
    batches=st.lists(st.integers(1, 5), min_size=1, max_size=10),
)
def test_a_few_values_on_any_scale_each_come_once_then_none(
    *, scale: str, low: int, count: int, stepped: bool, seed: int, batches: list[int]
) -> None:
    """On a finite axis a normal piles its draws on the middle values and a log scale on the
    low ones, where they repeat: each value is issued once, in any batches, then the search is
    exhausted; the first draw of each index is kept wherever it was new."""
    space = {"min": str(low), "max": str(low + count - 1), "distribution": scale}
    if stepped:  # a double on the same values
        space = {**space, "step": "1"}
    kind = "double" if stepped else "int"
    search = RandomSearch(
        parse_space([{"name": "x", "parameterType": kind, "feasibleSpace": space}]), seed
    )
    issued: list[Any] = []
    for size in [*batches, count + 1]:
        points, cursor = search.draw(len(issued), size, issued, None)  # type: ignore[arg-type]
        assert cursor == len(issued) + len(points)
        issued += points
    assert len(issued) == len(set(issued)) == count
    assert search.finished(len(issued), issued)
    for k, point in enumerate(issued):
        assert point == search.point(k) or search.point(k) in issued[:k]
