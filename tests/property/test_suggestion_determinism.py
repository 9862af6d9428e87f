"""The suggestion service resumes exactly: a stop, a lost volume or a lost response change nothing.

For any space, seed and budgets ``N < M``, a run to ``M`` that was interrupted at ``N`` (the
server stopped and restarted from its volume, or its state file deleted or damaged so that it is
rebuilt from the trial history, or never given a volume at all) hands out exactly the assignments
of a run that was never interrupted; so does a run whose responses are sometimes lost and asked
for again, in batches of any size. No name is issued twice, a grid point never repeats, nor a
random one while its finite space has one left (then both are exhausted: ``few_points`` are
spaces small enough to run out), and every value lies in the space, on every distribution
random samples.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, parse_space
from katib_resume.adapters.local.suggestion.algorithms import RandomSearch, seed_of
from katib_resume.adapters.local.suggestion.assignments import point_of
from katib_resume.adapters.local.suggestion.checksum import CHECKSUMS
from katib_resume.adapters.local.suggestion.hyperband import schedule
from katib_resume.adapters.local.suggestion.space import ALL_DISTRIBUTIONS, SearchSpace
from katib_resume.core.model import Experiment, Manifest

Plan = list[tuple[int, bool]]
"""Batches the controller asks for: ``(size, response lost)``."""


def numbers(low: str, high: str) -> st.SearchStrategy[Decimal]:
    return st.decimals(Decimal(low), Decimal(high), places=2, allow_nan=False)


@st.composite
def doubles(draw: st.DrawFn, stepped: bool) -> dict[str, Any]:
    low, width = draw(numbers("-100", "100")), draw(numbers("0", "5"))
    space = {"min": str(low), "max": str(low + width)}
    if stepped:
        space["step"] = str(draw(numbers("0.01", "3")))
    return {"parameterType": "double", "feasibleSpace": space}


@st.composite
def ints(draw: st.DrawFn) -> dict[str, Any]:
    low, width = draw(st.integers(-50, 50)), draw(st.integers(0, 12))
    space = {"min": str(low), "max": str(low + width)}
    if draw(st.booleans()):
        space["step"] = str(draw(st.integers(1, 4)))
    return {"parameterType": "int", "feasibleSpace": space}


def lists(kind: str, entries: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    choices = st.lists(entries, min_size=1, max_size=4, unique=True)
    return choices.map(lambda c: {"parameterType": kind, "feasibleSpace": {"list": c}})


FINITE = st.one_of(
    doubles(stepped=True),
    ints(),
    lists("discrete", numbers("-10", "10").map(str)),
    lists("categorical", st.text("abcxyz-", min_size=1, max_size=4)),
)


@st.composite
def scaled(draw: st.DrawFn) -> dict[str, Any]:
    """An ``int`` or a ``double``, stepped or not, on a distribution random alone samples (a
    log scale with ``min > 0``)."""
    scale = draw(st.sampled_from(["logUniform", "normal", "logNormal"]))
    kind = draw(st.sampled_from([ints(), doubles(stepped=True), doubles(stepped=False)]))
    parameter: dict[str, Any] = draw(kind)
    space = parameter["feasibleSpace"]
    if scale != "normal":  # moved above zero, the width kept
        floor = Decimal(1) if parameter["parameterType"] == "int" else Decimal("0.01")
        shift = floor - min(Decimal(space["min"]), Decimal(0))
        space["min"], space["max"] = (str(Decimal(space[k]) + shift) for k in ("min", "max"))
    space["distribution"] = scale
    return parameter


@st.composite
def few(draw: st.DrawFn) -> dict[str, Any]:
    """A parameter of 1 to 3 values, on any distribution random samples (an ``int`` drawn on
    a normal piles up at its middle value): with one or two others, a space that runs out."""
    kind = draw(st.sampled_from(["int", "stepped", "list", "one double"]))
    if kind == "list":
        return draw(lists("categorical", st.text("abc", min_size=1, max_size=2)))
    low = draw(st.integers(1, 9))
    width = 0 if kind == "one double" else draw(st.integers(0, 2))
    space: dict[str, Any] = {"min": str(low), "max": str(low + width)}
    if kind == "stepped":
        space["step"] = "1"
    space["distribution"] = draw(st.sampled_from(["", "logUniform", "normal", "logNormal"]))
    return {"parameterType": "int" if kind == "int" else "double", "feasibleSpace": space}


@st.composite
def experiments(draw: st.DrawFn) -> Experiment:
    algorithm = draw(st.sampled_from(["random", "grid", "few_points"]))
    kinds = FINITE if algorithm == "grid" else st.one_of(FINITE, doubles(stepped=False), scaled())
    if algorithm == "few_points":
        algorithm, kinds = "random", few()
    parameters = [
        {"name": f"p{i}", **kind}
        for i, kind in enumerate(draw(st.lists(kinds, min_size=1, max_size=3)))
    ]
    algorithm_settings = []
    if draw(st.booleans()):  # both take Katib's seed setting
        algorithm_settings = [{"name": "random_state", "value": str(draw(st.integers(0, 99)))}]
    spec = {
        "algorithm": {"algorithmName": algorithm, "algorithmSettings": algorithm_settings},
        "parameters": parameters,
    }
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


plans = st.lists(st.tuples(st.integers(1, 6), st.booleans()), max_size=12)
seeds = st.integers(0, 2**32)


def run(
    server: SuggestionServer, have: Sequence[Manifest], upto: int, plan: Plan
) -> list[Manifest]:
    """The controller: ask in batches until ``upto`` are held or the search is exhausted."""
    held, steps = list(have), iter(plan)
    while len(held) < upto:
        size, lost = next(steps, (upto, False))
        total = min(len(held) + size, upto)
        batch = server.get_suggestions(held, total)
        assert len(batch) <= total - len(held)
        if not lost and not batch:
            break
        if not lost:
            held += batch
    return held


def uninterrupted(subject: Experiment, seed: int, upto: int) -> list[Manifest]:
    server = SuggestionServer(subject, seed, None)
    server.start([])
    return run(server, [], upto, [])


def check_sound(subject: Experiment, assignments: list[Manifest]) -> None:
    names = [item["name"] for item in assignments]
    assert len(set(names)) == len(names)
    points = [
        tuple((v["name"], v["value"]) for v in a["parameterAssignments"]) for a in assignments
    ]
    space = parse_space((subject.spec.model_extra or {})["parameters"], ALL_DISTRIBUTIONS)
    if subject.spec.algorithm.algorithm_name in ("grid", "random") and space.size is not None:
        assert len(set(points)) == len(points)
        assert len(points) <= space.size
    resource = "p0" if subject.spec.algorithm.algorithm_name == "hyperband" else None
    for point in points:
        for parameter, (name, value) in zip(space.parameters, point, strict=True):
            assert name == parameter.name
            if name == resource:
                assert int(value) >= 1  # the rung's resource, whatever the parameter's range
            elif parameter.count is None:
                assert parameter.low <= Decimal(value) <= parameter.high
            else:
                assert value in {parameter.value(i) for i in range(min(parameter.count, 5000))}


def flip_checksum(path: Path, _: Any) -> None:
    document = json.loads(path.read_text())
    key = CHECKSUMS[document["version"]].key  # the digest of the file's version
    digest = document[key]
    document[key] = ("1" if digest[0] == "0" else "0") + digest[1:]
    path.write_text(json.dumps(document))


def edit_payload(path: Path, _: Any) -> None:
    document = json.loads(path.read_text())
    document["payload"]["seed"] += 1
    path.write_text(json.dumps(document))


def truncate(path: Path, data: st.DataObject) -> None:
    content = path.read_bytes()
    path.write_bytes(content[: data.draw(st.integers(0, len(content) - 2), label="cut")])


def scribble(path: Path, data: st.DataObject) -> None:
    path.write_bytes(data.draw(st.binary(max_size=64), label="bytes"))


DAMAGE: dict[str, Callable[[Path, st.DataObject], None]] = {
    "random bytes": scribble,
    "truncated": truncate,
    "checksum flipped": flip_checksum,
    "payload edited": edit_payload,
    "deleted": lambda path, _: path.unlink(),
}
MODES = ["kept", "no volume", *DAMAGE]


@settings(deadline=None)
@given(
    subject=experiments(),
    seed=seeds,
    budgets=st.tuples(st.integers(0, 12), st.integers(1, 12)),
    ahead=st.integers(0, 3),
    before=plans,
    after=plans,
    mode=st.sampled_from(MODES),
    data=st.data(),
)
def test_a_resumed_search_continues_exactly(
    *,
    subject: Experiment,
    seed: int,
    budgets: tuple[int, int],
    ahead: int,
    before: Plan,
    after: Plan,
    mode: str,
    data: st.DataObject,
) -> None:
    n, m = budgets[0], budgets[0] + budgets[1]
    reference = uninterrupted(subject, seed, m)
    with TemporaryDirectory() as directory:
        volume = None if mode == "no volume" else Path(directory)
        server = SuggestionServer(subject, seed, volume)
        server.start([])
        history = run(server, [], n, before)
        server.get_suggestions(history, len(history) + ahead)  # a response lost at the end
        server.stop()
        if mode in DAMAGE:
            DAMAGE[mode](Path(directory) / FILE_NAME, data)
        restarted = SuggestionServer(subject, seed, volume)
        report = restarted.start(history)
        resumed = run(restarted, history, m, after)
    expected = "restored" if mode == "kept" else "rebuilt"
    if mode in ("no volume", "deleted") and not history:
        expected = "new"
    assert report.source == expected, report.reason
    assert resumed == reference
    check_sound(subject, resumed)


@settings(deadline=None)
@given(subject=experiments(), seed=seeds, upto=st.integers(1, 25), plan=plans)
def test_lost_responses_are_served_again_and_nothing_is_skipped(
    subject: Experiment, seed: int, upto: int, plan: Plan
) -> None:
    reference = uninterrupted(subject, seed, upto)
    server = SuggestionServer(subject, seed, None)
    server.start([])
    held: list[Manifest] = []
    for size, lost in plan:
        total = min(len(held) + size, upto)
        batch = server.get_suggestions(held, total)
        assert batch == reference[len(held) : total]
        if not lost:
            held += batch
    assert run(server, held, upto, []) == reference
    check_sound(subject, reference)


@settings(deadline=None)
@given(subject=experiments(), seed=seeds, upto=st.integers(1, 30))
def test_random_changes_only_the_draws_that_would_repeat(
    subject: Experiment, seed: int, upto: int
) -> None:
    """Point ``k`` of a random search is its ``k``-th draw (the search before the never-repeat
    rule) wherever that draw was not issued before it, in every space (a continuous one: all
    of them); a finite space gives every one of its points before it is exhausted."""
    if subject.spec.algorithm.algorithm_name != "random":
        return
    issued = [point_of(a) for a in uninterrupted(subject, seed, upto)]
    space = parse_space((subject.spec.model_extra or {})["parameters"], ALL_DISTRIBUTIONS)
    search = RandomSearch(space, seed_of(subject, seed))
    for k, point in enumerate(issued):
        drawn = search.point(k)
        assert point == drawn or drawn in issued[:k]
    assert len(issued) == (upto if space.size is None else min(upto, space.size))


# The model-based algorithms (Optuna samplers): the answer also depends on the results known at
# each ask, so a run is a controller plan: batch sizes, and after each batch how many of the
# newest assignments are still running. The interrupted run follows the same plan.

MODEL_BASED = ["tpe", "multivariate-tpe", "cmaes", "sobol", "hyperband"]
Steps = list[tuple[int, int]]
"""``(batch size, assignments still running after it)`` per controller step."""


@st.composite
def numeric_parameters(draw: st.DrawFn) -> dict[str, Any]:
    """A numeric parameter with room to search (a model has nothing to learn on one point)."""
    kind = draw(st.sampled_from(["double", "stepped", "log", "int", "log int"]))
    whole = kind.startswith("log") or kind == "int"
    low: int | Decimal = draw(st.integers(1, 20)) if whole else draw(numbers("-10", "10"))
    width = draw(st.integers(4, 50))
    space: dict[str, Any] = {"min": str(low), "max": str(low + width)}
    if kind.startswith("log"):
        space["distribution"] = "logUniform"
    if kind == "stepped":
        space["step"] = str(draw(numbers("0.5", "3")))
    return {"parameterType": "int" if kind.endswith("int") else "double", "feasibleSpace": space}


@st.composite
def model_experiments(draw: st.DrawFn, algorithm: str) -> Experiment:
    kinds = [draw(numeric_parameters()) for _ in range(2)]
    kinds += draw(st.lists(st.one_of(numeric_parameters(), FINITE), max_size=2))
    parameters = [{"name": f"p{i}", **kind} for i, kind in enumerate(kinds)]
    algorithm_settings = []
    if algorithm == "multivariate-tpe":
        startup = str(draw(st.integers(0, 4)))
        algorithm_settings = [{"name": "n_startup_trials", "value": startup}]
    if algorithm == "bayesianoptimization":
        startup = str(draw(st.integers(1, 4)))
        estimator = draw(st.sampled_from(["GP", "RF", "ET", "GBRT"]))
        acquisition = draw(st.sampled_from(["gp_hedge", "EI", "PI", "LCB", "EIps"]))
        algorithm_settings = [
            {"name": "n_initial_points", "value": startup},
            {"name": "base_estimator", "value": estimator},
            {"name": "acq_func", "value": acquisition},
        ]
    if draw(st.booleans()):
        algorithm_settings.append({"name": "random_state", "value": str(draw(st.integers(0, 99)))})
    extra: dict[str, Any] = {}
    if algorithm == "hyperband":
        r_l, eta = draw(st.sampled_from([("4", "2"), ("9", "3"), ("2", "2")]))
        algorithm_settings = [
            {"name": "r_l", "value": r_l},
            {"name": "eta", "value": eta},
            {"name": "resource_name", "value": "p0"},
        ]
        extra["parallelTrialCount"] = 9
    spec = {
        **extra,
        "algorithm": {"algorithmName": algorithm, "algorithmSettings": algorithm_settings},
        "objective": {
            "type": draw(st.sampled_from(["minimize", "maximize"])),
            "objectiveMetricName": "m",
        },
        "parameters": parameters,
    }
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


def objective(assignment: Manifest) -> float | None:
    """A smooth function of the values (a categorical counts by its length); some Trials fail,
    and some report NaN or an infinity (``nonfinite``: a failure, a value)."""
    values = [v["value"] for v in assignment["parameterAssignments"]]
    numbers = [float(v) if _is_number(v) else float(len(v)) for v in values]
    total = sum((x - 0.3) ** 2 for x in numbers)
    return NOT_FINITE.get(int(total * 7) % 23, total)


NOT_FINITE = {0: None, 1: None, 2: math.nan, 3: math.inf, 4: -math.inf}
"""The reports of one Trial in 23, by its objective's bucket (more of them fail)."""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def follow(server: SuggestionServer, held: list[Manifest], steps: Steps) -> list[Manifest]:
    """The controller: each step reports every result but the newest ``running``, then asks."""
    for size, running in steps:
        finished = held[: max(0, len(held) - running)]
        results = {a["name"]: objective(a) for a in finished}
        held = held + server.get_suggestions(held, len(held) + size, results)
    return held


def monotone(steps: Steps) -> Steps:
    """The plan with no result taken back: each step's running count at most the one before
    plus the batch before, so that an assignment reported finished stays finished (Katib's
    controller reports every finished Trial in every call; a result that is not reported
    again is lost to a search rebuilt from the history, where a running one kept it)."""
    kept: Steps = []
    for size, asked in steps:
        kept.append((size, min(asked, kept[-1][0] + kept[-1][1]) if kept else asked))
    return kept


model_steps = st.lists(st.tuples(st.integers(1, 6), st.integers(0, 3)), min_size=2, max_size=8).map(
    monotone
)


modes = st.just("kept") | st.sampled_from(MODES)


@pytest.mark.parametrize("algorithm", MODEL_BASED)
@settings(deadline=None, max_examples=30)
@given(seed=seeds, steps=model_steps, mode=modes, data=st.data())
def test_a_resumed_model_based_search_continues_exactly(
    *, algorithm: str, seed: int, steps: Steps, mode: str, data: st.DataObject
) -> None:
    """Restored, rebuilt or without a volume, the search goes on as if never stopped, except
    a CMA-ES that lost its state: it starts a new evolution, still never repeating itself (and
    a Sobol search that lost it after asking with every Trial failed: ``asked_after_failures``)."""
    resume_and_compare(algorithm, seed, steps, mode, data)


@settings(deadline=None, max_examples=8)
@given(seed=seeds, steps=model_steps.map(lambda s: s[:3]), mode=modes, data=st.data())
def test_a_resumed_bayesian_optimization_continues_exactly(
    *, seed: int, steps: Steps, mode: str, data: st.DataObject
) -> None:
    """The same for ``bayesianoptimization``, on fewer and smaller runs (every ask fits a
    regressor)."""
    resume_and_compare("bayesianoptimization", seed, steps, mode, data)


def resume_and_compare(
    algorithm: str, seed: int, steps: Steps, mode: str, data: st.DataObject
) -> None:
    subject = data.draw(model_experiments(algorithm), label="subject")
    cut = data.draw(st.integers(1, len(steps) - 1), label="cut")
    reference = SuggestionServer(subject, seed, None)
    reference.start([])
    expected = follow(reference, [], steps)
    with TemporaryDirectory() as directory:
        volume = None if mode == "no volume" else Path(directory)
        server = SuggestionServer(subject, seed, volume)
        server.start([])
        history = follow(server, [], steps[:cut])
        server.stop()
        if mode in DAMAGE and (Path(directory) / FILE_NAME).exists():
            DAMAGE[mode](Path(directory) / FILE_NAME, data)
        restarted = SuggestionServer(subject, seed, volume)
        restarted.start(history)
        resumed = follow(restarted, history, steps[cut:])
    reports = [objective(a) for a in expected]
    lost = mode != "kept" and (
        algorithm == "cmaes" or (algorithm == "sobol" and asked_after_failures(reports, steps))
    )
    if not lost:
        assert resumed == expected
    assert len(resumed) == len(expected)
    check_sound(subject, resumed)
    if algorithm == "hyperband":
        check_rounds_varied(subject, resumed)
    else:
        check_varied(subject, resumed)


def asked_after_failures(reports: Sequence[float | None], steps: Steps) -> bool:
    """Whether a step asked (after the first assignment) when every Trial so far had failed
    (``reports``: each assignment's result; NaN is a failure). Optuna's Sobol sampler then
    draws at random without advancing its sequence, which the trial history does not record:
    rebuilt from it, the position counts every assignment but the first as an advance
    (docs/algorithms.md#state-on-the-volume-and-resuming)."""
    count = 0
    for size, running in steps:
        done = reports[:count]
        if count and running == 0 and all(r is None or math.isnan(r) for r in done):
            return True
        count = min(len(reports), count + size)
    return False


def check_rounds_varied(subject: Experiment, assignments: list[Manifest]) -> None:
    """Hyperband's first rungs hold no configuration (the values but the resource ``p0``'s)
    twice in a round of as many as a finite space has."""
    space = parse_space((subject.spec.model_extra or {})["parameters"], ALL_DISTRIBUTIONS)
    size = SearchSpace(tuple(p for p in space.parameters if p.name != "p0")).size
    given = {s.name: s.value for s in subject.spec.algorithm.algorithm_settings}
    keys = [
        tuple(v["value"] for v in a["parameterAssignments"] if v["name"] != "p0")
        for a in assignments
    ]
    for rung in schedule(Fraction(given["r_l"]), int(given["eta"])):
        if not rung.first:
            continue
        held = keys[rung.start : rung.start + rung.size]
        step = size or len(held) or 1
        for start in range(0, len(held), step):
            assert len(set(held[start : start + step])) == len(held[start : start + step])


def check_varied(subject: Experiment, assignments: list[Manifest]) -> None:
    """No two items of the space's points repeat while a finite space has points left."""
    space = parse_space((subject.spec.model_extra or {})["parameters"], ALL_DISTRIBUTIONS)
    points = [tuple(v["value"] for v in a["parameterAssignments"]) for a in assignments]
    size = space.size
    if size is None or len(points) <= size:
        assert len(set(points)) == len(points)
