"""Random search on Katib's distributions: bounds, the step grid, ints, and each law's shape.

The shapes are checked over many draws with fixed seeds (so each check is deterministic), with
margins wide enough for the sample and narrow enough that the uniform law fails every one.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
from decimal import Decimal
from typing import Any

import pytest

from katib_resume.adapters.local.suggestion import parse_space, validate
from katib_resume.adapters.local.suggestion.algorithms import RandomSearch
from katib_resume.adapters.local.suggestion.scaled import continuous, draw, nearest, point
from katib_resume.adapters.local.suggestion.space import Parameter, SearchSpace
from katib_resume.core.model import Experiment
from katib_resume.core.observed import Outcome

SCALES = ("logUniform", "normal", "logNormal")
DRAWS = 4000


def param(name: str, type_: str, **space: Any) -> dict[str, Any]:
    return {"name": name, "parameterType": type_, "feasibleSpace": space}


def one(type_: str = "double", **space: Any) -> tuple[Parameter, str]:
    parsed = parse_space([param("x", type_, **space)])
    return parsed.parameters[0], parsed.scale(0)


def values(type_: str = "double", **space: Any) -> list[str]:
    parameter, scale = one(type_, **space)
    rng = random.Random(11)
    return [draw(parameter, scale, rng) for _ in range(DRAWS)]


def experiment(algorithm: str, *parameters: dict[str, Any]) -> Experiment:
    spec = {"algorithm": {"algorithmName": algorithm}, "parameters": list(parameters)}
    return Experiment.model_validate({"metadata": {"name": "e", "namespace": "ns"}, "spec": spec})


# Bounds, the grid, ints


@pytest.mark.parametrize("scale", SCALES)
def test_a_continuous_double_stays_within_its_bounds(scale: str) -> None:
    drawn = values(min="0.001", max="0.9", distribution=scale)
    assert all(Decimal("0.001") <= Decimal(v) <= Decimal("0.9") for v in drawn)
    assert all(repr(float(v)) == v for v in drawn)  # rendered as every double is
    assert len(set(drawn)) == len(drawn)  # continuous: no value twice


@pytest.mark.parametrize("scale", SCALES)
def test_a_stepped_double_takes_the_values_of_its_grid(scale: str) -> None:
    drawn = values(min="0.1", max="0.95", step="0.1", distribution=scale)
    grid = {"0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"}
    assert set(drawn) <= grid  # 0.3, not 0.30000000000000004; never past max
    assert len(set(drawn)) >= 7  # and not stuck on a few of them


@pytest.mark.parametrize("scale", SCALES)
def test_an_int_is_an_int_of_its_range_and_step(scale: str) -> None:
    drawn = values("int", min="2", max="200", step="3", distribution=scale)
    numbers = [int(v) for v in drawn]  # each an integer's text
    assert all(str(n) == v for n, v in zip(numbers, drawn, strict=True))
    assert all(2 <= n <= 200 and (n - 2) % 3 == 0 for n in numbers)


@pytest.mark.parametrize("scale", SCALES)
def test_a_range_of_one_value_always_gives_it(scale: str) -> None:
    assert set(values(min="0.25", max="0.25", distribution=scale)) == {"0.25"}
    assert set(values("int", min="7", max="7", distribution=scale)) == {"7"}


@pytest.mark.parametrize("scale", SCALES)
def test_the_quantiles_end_at_the_bounds(scale: str) -> None:
    parameter, _ = one(min="0.01", max="100", distribution=scale)
    assert continuous(parameter, scale, 0.0) == pytest.approx(0.01, rel=1e-12)
    assert continuous(parameter, scale, 0.0) >= 0.01
    top = continuous(parameter, scale, math.nextafter(1.0, 0.0))
    assert top == pytest.approx(100, rel=1e-12)
    assert top <= 100
    middle = continuous(parameter, scale, 0.5)
    assert middle == pytest.approx(50.005 if scale == "normal" else 1.0, rel=1e-9)


def test_the_nearest_grid_value_rounds_half_up_and_stays_on_the_grid() -> None:
    parameter, _ = one(min="1", max="2", step="0.5")
    assert [nearest(parameter, x) for x in (1.0, 1.24, 1.25, 1.74, 1.75, 2.0)] == [0, 0, 1, 1, 2, 2]
    assert nearest(parameter, 0.0) == 0 and nearest(parameter, 9.0) == 2


# The laws' shapes


def test_log_uniform_spreads_evenly_over_the_decades() -> None:
    drawn = [float(v) for v in values(min="0.0001", max="1", distribution="logUniform")]
    assert statistics.median(drawn) == pytest.approx(0.01, rel=0.15)  # the geometric mean
    decades = [sum(10.0**-k <= x < 10.0 ** (1 - k) for x in drawn) for k in (4, 3, 2, 1)]
    assert all(abs(n - DRAWS / 4) < DRAWS / 20 for n in decades), decades


def test_normal_is_centred_with_a_sixth_of_the_range_as_deviation() -> None:
    drawn = [float(v) for v in values(min="-2", max="10", distribution="normal")]
    mu, sigma = 4.0, 2.0
    assert statistics.fmean(drawn) == pytest.approx(mu, abs=0.1)
    assert statistics.stdev(drawn) == pytest.approx(0.9866 * sigma, rel=0.05)  # cut at 3 sigma
    within = sum(abs(x - mu) < sigma for x in drawn) / DRAWS
    assert within == pytest.approx(0.6845, abs=0.03)  # 68.3 % of the 99.7 % kept


def test_log_normal_is_normal_on_the_logarithms() -> None:
    drawn = [float(v) for v in values(min="0.001", max="1000", distribution="logNormal")]
    logs = [math.log10(x) for x in drawn]
    assert statistics.median(drawn) == pytest.approx(1.0, rel=0.15)  # the geometric mean
    assert statistics.fmean(logs) == pytest.approx(0.0, abs=0.05)
    assert statistics.stdev(logs) == pytest.approx(0.9866, rel=0.05)  # a sixth of 6 decades


def test_a_stepped_int_on_log_uniform_favours_its_small_values() -> None:
    counts = {n: 0 for n in range(1, 11)}
    for v in values("int", min="1", max="10", distribution="logUniform"):
        counts[int(v)] += 1
    # each value's share: ln of its cell's ends (half cells at the bounds) over ln 10
    for n, count in counts.items():
        share = math.log(min(n + 0.5, 10) / max(n - 0.5, 1)) / math.log(10)
        assert count / DRAWS == pytest.approx(share, abs=0.025), (n, count)


# Seeds and the uniform points of before


def space_of(*parameters: dict[str, Any]) -> SearchSpace:
    return parse_space(list(parameters))


MIXED = (
    param("lr", "double", min="0.0001", max="0.1", distribution="logUniform"),
    param("m", "double", min="0.5", max="0.9", step="0.05", distribution="normal"),
    param("batch", "int", min="8", max="512", distribution="logNormal"),
    param("opt", "categorical", list=["sgd", "adam"], distribution="logUniform"),
)


def test_one_seed_gives_one_sequence_and_another_seed_another() -> None:
    search = RandomSearch(space_of(*MIXED), 5)
    first = [search.point(k) for k in range(50)]
    assert first == [RandomSearch(space_of(*MIXED), 5).point(k) for k in range(50)]
    assert first != [RandomSearch(space_of(*MIXED), 6).point(k) for k in range(50)]
    assert search.replay(first) == (50, None)


def test_a_list_labelled_with_a_distribution_is_drawn_uniformly() -> None:
    """As Katib's ``hp.choice``: the label means nothing for a list."""
    labelled = space_of(param("c", "categorical", list=["a", "b", "c"], distribution="normal"))
    plain = space_of(param("c", "categorical", list=["a", "b", "c"]))
    assert [point(labelled, random.Random(k)) for k in range(30)] == [
        point(plain, random.Random(k)) for k in range(30)
    ]


UNIFORM = [
    param("lr", "double", min="0.01", max="0.05", distribution="uniform"),
    param("rate", "double", min="0.1", max="0.9", step="0.1"),
    param("n", "int", min="-3", max="40", step="3"),
    param("c", "categorical", list=["sgd", "adam", "ftrl"]),
]


def test_an_all_uniform_space_keeps_its_points_and_its_digest() -> None:
    """Figures taken before the other distributions were sampled: a saved state on a user's
    volume resumes on the same sequence, under the same space digest."""
    space = parse_space(UNIFORM)
    points = [RandomSearch(space, 42).point(k) for k in range(200)]
    assert points[0] == (
        ("lr", "0.020670024276607264"),
        ("rate", "0.2"),
        ("n", "15"),
        ("c", "adam"),
    )
    digest = hashlib.sha256(json.dumps(points).encode()).hexdigest()
    assert digest == "bb2ad0d15b8d191edde39a62aeac7fb968a500c80e88bf974abad690a43a0a03"
    assert space.fingerprint() == (
        "319ddd7782719b00a0573da4fb42a5913ac985a1aab85f3633726bdf8d77f3bd"
    )


def test_a_distribution_is_part_of_the_space_digest() -> None:
    plain = space_of(param("x", "double", min="1", max="2"))
    assert space_of(param("x", "double", min="1", max="2", distribution="uniform")) == plain
    digests = {
        space_of(param("x", "double", min="1", max="2", distribution=s)).fingerprint()
        for s in SCALES
    }
    assert len(digests | {plain.fingerprint()}) == 4


@pytest.mark.parametrize("algorithm", ["random", "grid", "tpe"])
def test_unknown_is_read_as_uniform_as_katib_reads_it(algorithm: str) -> None:
    """Katib admits ``distribution: unknown`` (the API's unspecified) and its services sample it
    uniformly; the gRPC wire carries it as unspecified, so both paths read it alike."""
    spelled = param("x", "double", min="1", max="2", step="0.5", distribution="unknown")
    plain = param("x", "double", min="1", max="2", step="0.5", distribution="uniform")
    assert space_of(spelled) == space_of(plain)
    assert space_of(spelled).fingerprint() == space_of(plain).fingerprint()
    verdict = validate(experiment(algorithm, spelled))
    assert verdict.outcome is Outcome.VALID, verdict.message


# Validation: what random admits, what it and grid refuse


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("type_", ["int", "double"])
def test_random_admits_every_distribution(scale: str, type_: str) -> None:
    verdict = validate(
        experiment("random", param("x", type_, min="1", max="9", distribution=scale))
    )
    assert verdict.outcome is Outcome.VALID, verdict.message


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (
            {"min": "0", "max": "1", "distribution": "logUniform"},
            "parameter 'x': a logUniform distribution needs min > 0, got 0",
        ),
        (
            {"min": "-1", "max": "1", "distribution": "logNormal"},
            "parameter 'x': a logNormal distribution needs min > 0, got -1",
        ),
        (  # positive, but no float: its logarithm is no number
            {"min": "1e-400", "max": "1", "distribution": "logUniform"},
            "parameter 'x': a logUniform distribution needs min > 0, got 1E-400",
        ),
    ],
)
def test_random_refuses_a_log_scale_without_a_positive_min(
    space: dict[str, str], message: str
) -> None:
    verdict = validate(experiment("random", param("x", "double", **space)))
    assert (verdict.outcome, verdict.message) == (Outcome.INVALID, message)


def test_random_admits_a_normal_around_zero() -> None:
    verdict = validate(
        experiment("random", param("x", "double", min="-1", max="1", distribution="normal"))
    )
    assert verdict.outcome is Outcome.VALID


@pytest.mark.parametrize("scale", SCALES)
def test_grid_refuses_a_distribution_it_would_step_uniformly(scale: str) -> None:
    stepped = param("x", "double", min="1", max="9", step="1", distribution=scale)
    verdict = validate(experiment("grid", param("c", "categorical", list=["a"]), stepped))
    assert (verdict.outcome, verdict.message) == (
        Outcome.INVALID,
        f"parameter 'x': distribution {scale!r} is not supported by grid, whose values step"
        f" uniformly from min to max (random samples {scale})",
    )


def test_grid_admits_a_list_labelled_with_a_distribution() -> None:
    labelled = param("c", "categorical", list=["a", "b"], distribution="logUniform")
    assert validate(experiment("grid", labelled)).outcome is Outcome.VALID


def test_tpe_keeps_its_own_refusal_of_the_normals() -> None:
    verdict = validate(
        experiment("tpe", param("x", "double", min="1", max="9", distribution="normal"))
    )
    assert verdict.message == (
        "Unsupported distribution NORMAL for parameter x. The Optuna suggestion service supports"
        " only UNIFORM and LOG_UNIFORM for double parameters."
    )
