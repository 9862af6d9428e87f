"""``pbt``: Katib's settings and messages, the selection and perturbation rules, the lineage.

The messages are Katib's PBT service's, word for word (``resample_probability``'s is the one
Katib meant to give: its check crashed). The rules are checked on hand-made pools: the worst
fraction exploits a top member (values and checkpoint), the rest explore their own; a
perturbation stays a valid value of its parameter, on its grid, and moves.
"""

from __future__ import annotations

import math
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import SuggestionServer, parse_space, validate
from katib_resume.adapters.local.suggestion.pbt_record import GENERATION, PARENT, sound
from katib_resume.adapters.local.suggestion.pbt_rules import Member, breed, perturb, quantile
from katib_resume.adapters.local.suggestion.pbt_volume import PARTIAL, prepare
from katib_resume.adapters.local.suggestion.space import Parameter
from katib_resume.app.cli.runnable import refuse_unrunnable
from katib_resume.core.denied import Denied
from katib_resume.core.model import Experiment
from katib_resume.core.observed import Outcome

DIR = {"name": "suggestion_trial_dir", "value": "/var/log/katib/checkpoints/"}
POPULATION = {"name": "n_population", "value": "5"}
THRESHOLD = {"name": "truncation_threshold", "value": "0.2"}
LR = {
    "name": "lr",
    "parameterType": "double",
    "feasibleSpace": {"min": "0.0001", "max": "0.02", "step": "0.0001"},
}


def experiment(settings: list[dict[str, str]], parameters: Any = (LR,)) -> Experiment:
    spec = {
        "algorithm": {"algorithmName": "pbt", "algorithmSettings": settings},
        "objective": {"type": "maximize", "objectiveMetricName": "Validation-accuracy"},
        "parameters": list(parameters),
    }
    return Experiment.model_validate({"metadata": {"name": "pbt", "namespace": "ns"}, "spec": spec})


RESAMPLE = (
    "Param(resample_probability) should be null to perturb at 0.8 or 1.2, or be between 0 and 1,"
    " inclusive, to resample"
)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ([], "Required params missing: suggestion_trial_dir, n_population, truncation_threshold"),
        ([DIR, THRESHOLD], "Required params missing: n_population"),
        (
            [DIR, {"name": "n_population", "value": "4"}, THRESHOLD],
            "Param(n_population) should be >= 5",
        ),
        (
            [DIR, {"name": "n_population", "value": "many"}, THRESHOLD],
            "failed to validate n_population(many): invalid literal for int() with base 10: 'many'",
        ),
        *(
            (
                [DIR, POPULATION, {"name": "truncation_threshold", "value": value}],
                "Param(truncation_threshold) should be between 0 and 1, inclusive",
            )
            for value in ("1.5", "-0.1", "nan")
        ),
        *(
            ([DIR, POPULATION, THRESHOLD, {"name": "resample_probability", "value": v}], RESAMPLE)
            for v in ("2", "-1", "often", "nan")
        ),
    ],
)
def test_bad_settings_get_katibs_message(settings: list[dict[str, str]], message: str) -> None:
    verdict = validate(experiment(settings))
    assert (verdict.outcome, verdict.message) == (Outcome.INVALID, message)


@pytest.mark.parametrize("probability", ["0", "0.25", "1"])
def test_good_settings_pass_and_unknown_names_are_ignored(probability: str) -> None:
    resample = {"name": "resample_probability", "value": probability}
    other = {"name": "anything", "value": "at all"}
    assert validate(experiment([DIR, POPULATION, THRESHOLD, resample, other])).outcome is (
        Outcome.VALID
    )


def test_a_double_without_step_is_searched_where_katib_crashed() -> None:
    free = {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "0", "max": "1"}}
    assert validate(experiment([DIR, POPULATION, THRESHOLD], [free])).outcome is Outcome.VALID


def test_run_refuses_bad_pbt_settings_before_anything_is_written() -> None:
    with pytest.raises(Denied) as denied:
        refuse_unrunnable(experiment([DIR, {"name": "n_population", "value": "3"}, THRESHOLD]))
    assert str(denied.value) == (
        "Validation failed: ValidateAlgorithmSettings Error: Param(n_population) should be >= 5"
    )


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), st.floats(0, 1))
def test_quantile_is_numpys(values: list[float], q: float) -> None:
    assert quantile(values, q) == pytest.approx(
        float(numpy.quantile(values, q)), rel=1e-9, abs=1e-6
    )


SPACE = parse_space([LR])


def pool(values: list[float | None]) -> list[Member]:
    return [Member(i, SPACE.sample(random.Random(i)), value) for i, value in enumerate(values)]


def test_the_worst_fraction_exploits_a_top_member_values_and_checkpoint() -> None:
    members = pool([float(v) for v in range(10)])  # member i has value i: 9 is the best
    children = breed(members, SPACE, 0.2, None, random.Random(0))
    exploit, explore = children[:2], children[2:]  # int(10 * 0.2) = 2 exploit, first
    top = {8, 9}  # at or above the 0.8 quantile, 7.2
    for child in exploit:
        assert child.parent in top
        assert child.point == members[child.parent].point  # the checkpoint goes with the values
    assert sorted(c.parent for c in explore if c.parent is not None) == list(range(2, 10))


def test_failed_members_are_exploited_and_a_failed_pool_starts_afresh() -> None:
    children = breed(pool([None, 5.0, None, 1.0, None, 3.0]), SPACE, 0.2, None, random.Random(1))
    parents = [c.parent for c in children]
    assert not {0, 2, 4} & set(parents)  # a failed member has no checkpoint worth keeping
    assert len(children) == 6
    fresh = breed(pool([None] * 5), SPACE, 0.2, None, random.Random(2))
    assert [c.parent for c in fresh] == [None] * 5


@pytest.mark.parametrize(
    ("threshold", "top", "strong"),
    [(0.0, set(), [0, 1, 2, 3, 4]), (0.5, {1, 2, 3}, [1, 2, 3]), (1.0, {1}, [1])],
)
def test_the_threshold_sets_who_exploits_and_whom(
    threshold: float, top: set[int], strong: list[int]
) -> None:
    members = pool([1.0, 4.0, 2.0, 3.0, 0.0])  # best first: 1, 3, 2, 0, 4
    children = breed(members, SPACE, threshold, None, random.Random(3))
    exploiting = len(members) - len(strong)
    for child in children[:exploiting]:
        assert child.parent in top and child.point == members[child.parent].point
    assert sorted(c.parent for c in children[exploiting:] if c.parent is not None) == strong


def test_resample_probability_zero_keeps_the_values() -> None:
    members = pool([1.0, 4.0, 2.0, 3.0, 0.0])
    children = breed(members, SPACE, 0.2, 0.0, random.Random(4))
    assert all(c.parent is not None and c.point == members[c.parent].point for c in children)


numeric = st.tuples(st.integers(-50, 50), st.integers(0, 40), st.integers(1, 4))


@given(numeric, st.data())
def test_an_int_stays_an_int_on_its_grid_and_moves(bounds: tuple[int, int, int], data: Any) -> None:
    low, width, step = bounds
    parameter = Parameter("n", "int", Decimal(low), Decimal(low + width), Decimal(step))
    values = [parameter.value(i) for i in range(parameter.count or 0)]
    value = data.draw(st.sampled_from(values))
    moved = perturb(parameter, value, random.Random(data.draw(st.integers(0, 99))))
    assert moved in values  # an integer ("1", never "1.0"), within bounds, on the grid
    if values[0] != value != values[-1]:
        assert moved != value


@given(st.decimals(-10, 10, places=2), st.integers(1, 30), st.data())
def test_a_stepped_double_stays_on_its_grid(low: Decimal, count: int, data: Any) -> None:
    step = Decimal("0.25")
    parameter = Parameter("x", "double", low, low + step * (count - 1), step)
    values = [parameter.value(i) for i in range(parameter.count or 0)]
    value = data.draw(st.sampled_from(values))
    assert perturb(parameter, value, random.Random(data.draw(st.integers(0, 99)))) in values


@given(st.floats(-100, 100), st.floats(0, 50), st.data())
def test_a_free_double_stays_within_its_bounds(low: float, width: float, data: Any) -> None:
    parameter = Parameter("x", "double", Decimal(low), Decimal(low + width))
    value = data.draw(st.floats(low, low + width))
    moved = float(perturb(parameter, repr(value), random.Random(data.draw(st.integers(0, 99)))))
    assert float(parameter.low) <= moved <= float(parameter.high)


@given(st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=5, unique=True))
def test_a_list_value_moves_to_a_neighbour_wrapping_around(choices: list[str]) -> None:
    parameter = Parameter("c", "categorical", choices=tuple(choices))
    for i, value in enumerate(choices):
        moved = perturb(parameter, value, random.Random(i))
        assert choices.index(moved) in {(i - 1) % len(choices), (i + 1) % len(choices)}


def test_the_labels_tell_each_trial_its_generation_and_parent(tmp_path: Path) -> None:
    server = SuggestionServer(experiment([DIR, POPULATION, THRESHOLD]), 7, tmp_path)
    server.start([])
    first = server.get_suggestions([], 5)
    assert [a["labels"] for a in first] == [{GENERATION: "0"}] * 5
    results = {a["name"]: float(i) for i, a in enumerate(first)}
    second = server.get_suggestions(first, 10, results)
    names = {a["name"] for a in first}
    assert {a["labels"][GENERATION] for a in second} == {"1"}
    assert {a["labels"][PARENT] for a in second} <= names
    for item in [*first, *second]:
        assert (tmp_path / item["name"]).is_dir()  # its checkpoint directory, on the volume
    assert server.get_suggestions(first, 10, results) == second  # a lost reply, served again


def test_a_checkpoint_directory_copies_its_parent_once(tmp_path: Path) -> None:
    (tmp_path / "parent").mkdir()
    (tmp_path / "parent" / "ckpt").write_text("weights")
    (tmp_path / f"{PARTIAL}child").mkdir()  # a copy a crash interrupted
    prepare(tmp_path, "child", "parent")
    assert (tmp_path / "child" / "ckpt").read_text() == "weights"
    (tmp_path / "child" / "ckpt").write_text("trained further")
    prepare(tmp_path, "child", "parent")  # served again: what the Trial wrote stays
    assert (tmp_path / "child" / "ckpt").read_text() == "trained further"
    prepare(tmp_path, "orphan", "gone")
    assert list((tmp_path / "orphan").iterdir()) == []
    assert not (tmp_path / f"{PARTIAL}child").exists()


@pytest.mark.parametrize(
    "cursor",
    [
        [],
        {"starts": [1], "parents": [], "pools": []},
        {"starts": [0, 2], "parents": [-1, -1, -1], "pools": [[1.0] * 5]},  # too short a gap
        {"starts": [0], "parents": [0], "pools": []},  # its own parent
        {"starts": [0, 5], "parents": [-1] * 6, "pools": [[1.0] * 4]},  # pool of the wrong size
        *(  # a pool value that is none a pool stores
            {"starts": [0, 5], "parents": [-1] * 6, "pools": [[1.0, None, "inf", 2, bad]]}
            for bad in (math.nan, math.inf, "nan", "x", True, [1.0], {"v": 1.0})
        ),
        {"starts": [0, 5], "parents": [-1] * 6, "pools": ((1.0,) * 5,)},  # not lists
        {"replayed": -1},
        {"replayed": 2, "labels": [[0, -1]]},
    ],
)
def test_a_malformed_record_is_not_resumed(cursor: Any) -> None:
    assert not sound(cursor, 5)


def test_a_record_of_every_value_a_pool_stores_is_resumed() -> None:
    pools = [[1.0, None, "inf", "-inf", 2], [-(2**70), 0.5, None, None, "inf"]]
    assert sound({"starts": [0, 5, 10], "parents": [-1] * 11, "pools": pools}, 5)
