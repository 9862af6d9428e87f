"""The suggestion service resumes exactly: a stop, a lost volume or a lost response change nothing.

For any space, seed and budgets ``N < M``, a run to ``M`` that was interrupted at ``N`` (the
server stopped and restarted from its volume, or its state file deleted or damaged so that it is
rebuilt from the trial history, or never given a volume at all) hands out exactly the assignments
of a run that was never interrupted; so does a run whose responses are sometimes lost and asked
for again, in batches of any size. No name is issued twice, a grid point never repeats, and every
value lies in the space.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import FILE_NAME, SuggestionServer, parse_space
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
def experiments(draw: st.DrawFn) -> Experiment:
    algorithm = draw(st.sampled_from(["random", "grid"]))
    kinds = FINITE if algorithm == "grid" else st.one_of(FINITE, doubles(stepped=False))
    parameters = [
        {"name": f"p{i}", **kind}
        for i, kind in enumerate(draw(st.lists(kinds, min_size=1, max_size=3)))
    ]
    algorithm_settings = []
    if algorithm == "random" and draw(st.booleans()):
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
    if subject.spec.algorithm.algorithm_name == "grid":
        assert len(set(points)) == len(points)
    space = parse_space((subject.spec.model_extra or {})["parameters"])
    for point in points:
        for parameter, (name, value) in zip(space.parameters, point, strict=True):
            assert name == parameter.name
            if parameter.count is None:
                assert parameter.low <= Decimal(value) <= parameter.high
            else:
                assert value in {parameter.value(i) for i in range(min(parameter.count, 5000))}


def flip_checksum(path: Path, _: Any) -> None:
    document = json.loads(path.read_text())
    digest = document["sha256"]
    document["sha256"] = ("1" if digest[0] == "0" else "0") + digest[1:]
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
