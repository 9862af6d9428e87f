"""Random search never issues a point twice while a finite space has one left, and then is
exhausted, as the grid; a continuous space, and any draw not issued before, is what it was.

The search before this rule drew the ``k``-th point from its own generator whatever had been
issued (``point(k)``): on two ``int`` parameters of 3 values, 9 draws hold 6 points. Those draws
are the reference the tests compare with: ``old``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from katib_resume.adapters.local.suggestion import (
    FILE_NAME,
    SuggestionServer,
    algorithms,
    parse_space,
)
from katib_resume.adapters.local.suggestion import points as points_module
from katib_resume.adapters.local.suggestion.algorithms import RandomSearch
from katib_resume.adapters.local.suggestion.assignments import assignment, name_for, point_of
from katib_resume.adapters.local.suggestion.server import EXHAUSTED
from katib_resume.adapters.local.suggestion.space import Point
from katib_resume.core.model import Experiment, Manifest

SEED = 1
INTS = [
    {"name": "a", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "3"}},
    {"name": "b", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "3"}},
]
CONTINUOUS = [
    {"name": "lr", "parameterType": "double", "feasibleSpace": {"min": "0.01", "max": "0.05"}},
    {"name": "b", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "3"}},
]


def experiment(parameters: list[dict[str, Any]]) -> Experiment:
    spec = {"algorithm": {"algorithmName": "random"}, "parameters": parameters}
    return Experiment.model_validate({"metadata": {"name": "exp", "namespace": "ns"}, "spec": spec})


def started(volume: Path | None, parameters: list[dict[str, Any]] = INTS) -> SuggestionServer:
    server = SuggestionServer(experiment(parameters), SEED, volume)
    server.start([])
    return server


def values(items: list[Manifest]) -> list[Point]:
    return [point_of(item) for item in items]


def old(parameters: list[dict[str, Any]], count: int, seed: int = SEED) -> list[Point]:
    """What the search drew before the rule: the ``k``-th draw, whatever was issued."""
    search = RandomSearch(parse_space(parameters), seed)
    return [search.point(k) for k in range(count)]


def test_the_old_draws_repeat_in_this_space() -> None:
    """The space of these tests is one the old search repeated itself in (else they prove
    nothing)."""
    assert len(set(old(INTS, 9))) < 9


def test_nine_points_one_at_a_time_then_exhausted() -> None:
    server = started(None)
    held: list[Manifest] = []
    for _ in range(9):
        held += server.get_suggestions(held, len(held) + 1)
        assert server.exhausted(len(held)) == ""
    assert len(set(values(held))) == 9
    assert server.get_suggestions(held, 10) == []
    assert server.exhausted(10) == EXHAUSTED.format(count="9 assignments")


def test_a_batch_of_nine_is_nine_points_and_a_larger_one_stops_at_nine() -> None:
    nine = started(None).get_suggestions([], 9)
    assert len(set(values(nine))) == 9
    server = started(None)
    twelve = server.get_suggestions([], 12)
    assert twelve == nine  # the same points, whatever the batch
    assert server.exhausted(12) and not server.exhausted(9)


def test_only_the_draws_that_would_repeat_change() -> None:
    """The ``k``-th point is the old ``k``-th draw wherever that was not issued before it."""
    ours = values(started(None).get_suggestions([], 9))
    before = old(INTS, 9)
    changed = [k for k in range(9) if ours[k] != before[k]]
    assert changed  # some draw repeated, and was replaced
    assert all(before[k] in ours[:k] for k in changed)


def test_a_continuous_space_gives_the_old_points_and_is_never_exhausted(tmp_path: Path) -> None:
    server = started(tmp_path, CONTINUOUS)
    items = server.get_suggestions([], 40)
    assert values(items) == old(CONTINUOUS, 40)
    assert not server.exhausted(41)
    assert not RandomSearch(parse_space(CONTINUOUS), SEED).finished(40, values(items))


@pytest.mark.parametrize("mode", ["kept", "deleted", "no volume"])
@pytest.mark.parametrize("cut", range(10))
def test_a_resume_at_every_cut_equals_the_uninterrupted_run(
    tmp_path: Path, mode: str, cut: int
) -> None:
    reference = started(None).get_suggestions([], 9)
    volume = None if mode == "no volume" else tmp_path
    server = started(volume)
    held: list[Manifest] = []
    while len(held) < cut:  # in batches of 2
        held += server.get_suggestions(held, min(len(held) + 2, cut))
    server.stop()
    if mode == "deleted" and cut:
        (tmp_path / FILE_NAME).unlink()
    again = SuggestionServer(experiment(INTS), SEED, volume)
    report = again.start(held)
    assert report.source == ("restored" if mode == "kept" and cut else "rebuilt" if cut else "new")
    assert "differs" not in report.reason  # the replay knows its own sequence
    resumed = held + again.get_suggestions(held, 12)
    assert resumed == reference
    assert again.exhausted(12)


def old_history(count: int) -> list[Manifest]:
    """The assignments the search made before the rule: names by index, repeated points."""
    names: dict[str, int] = {}
    items = []
    for index, point in enumerate(old(INTS, count)):
        name = name_for("exp", SEED, index, names)
        names[name] = index
        items.append(assignment(name, point))
    return items


@pytest.mark.parametrize("count", [4, 9, 20])
def test_a_history_the_old_search_repeated_itself_in_goes_on_to_every_point(
    tmp_path: Path, count: int
) -> None:
    """Rebuilt from it (the Trials are kept, none issued again), the search issues the points
    the history lacks, then is exhausted; restored from the state that rebuild saved, the same."""
    history = old_history(count)
    first = SuggestionServer(experiment(INTS), SEED, tmp_path)
    report = first.start(history)
    assert report.source == "rebuilt"
    repeat = next(k for k, p in enumerate(values(history)) if p in values(history)[:k])
    assert f"differs from the history from assignment {repeat + 1} on" in report.reason
    missing = 9 - len(set(values(history)))
    new = first.get_suggestions(history, count + 12)
    assert len(new) == missing
    assert set(values(history + new)) == set(values(started(None).get_suggestions([], 9)))
    assert first.exhausted(count + 12)
    first.stop()
    if missing:  # the rebuild was saved: a restart now restores it, repeats and all
        restored = SuggestionServer(experiment(INTS), SEED, tmp_path)
        assert restored.start(history + new[:1]).source == "restored"
        assert restored.get_suggestions(history + new[:1], count + 12) == new[1:]
        assert restored.exhausted(count + 12)


def test_the_index_order_finds_the_last_point_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without draws again, a point issued before is replaced by the next one not issued in
    index order from the seeded position: every point of the space comes, none twice."""
    monkeypatch.setattr(algorithms, "REDRAWS", 0)
    space = parse_space([{**INTS[0], "feasibleSpace": {"min": "0", "max": "999"}}])
    search = RandomSearch(space, SEED)
    points, cursor = search.draw(0, 1001, [], None)  # type: ignore[arg-type]
    assert len(points) == len(set(points)) == 1000 and cursor == 1000
    assert search.finished(cursor, points)
    assert points == search.draw(0, 1001, [], None)[0]  # type: ignore[arg-type]


def test_a_space_nearly_used_up_gives_its_last_point() -> None:
    space = parse_space([{**INTS[0], "feasibleSpace": {"min": "0", "max": "9999"}}])
    search = RandomSearch(space, SEED)
    issued = [space.grid_point(i) for i in range(10_000) if i != 4321]
    random.Random(0).shuffle(issued)
    assert search.unissued(len(issued), set(issued)) == space.grid_point(4321)
    assert not search.finished(len(issued), issued)
    assert search.unissued(10_000, {*issued, space.grid_point(4321)}) is None


def test_points_not_of_the_space_do_not_make_it_exhausted() -> None:
    """A history may hold points another search made: counted, they would end the space early."""
    space = parse_space(INTS)
    search = RandomSearch(space, SEED)
    foreign = [(("a", str(v)), ("b", "1")) for v in range(10, 20)]
    issued = foreign + [space.grid_point(i) for i in range(8)]
    assert not search.finished(len(issued), issued)
    assert search.draw(len(issued), 3, issued, None)[0] == [space.grid_point(8)]  # type: ignore[arg-type]


def test_a_double_whose_min_is_its_max_is_one_value() -> None:
    parameters = [
        {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "0.5", "max": "0.5"}},
        INTS[0],
    ]
    server = started(None, parameters)
    items = server.get_suggestions([], 5)
    assert len(items) == len(set(values(items))) == 3
    assert {dict(p)["x"] for p in values(items)} == {"0.5"}
    assert server.exhausted(5)


def test_a_restored_draw_reads_no_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a draw was issued is found in the saved bytes (``points.Seen``): a restart's
    call of a few points reads none of the history's points."""
    parameters = [{**INTS[0], "feasibleSpace": {"min": "0", "max": "999999"}}, INTS[1]]
    server = started(tmp_path, parameters)
    held = server.get_suggestions([], 300)
    server.stop()
    reads: list[int] = []
    real = points_module._points

    def counted(items: Any) -> list[Point]:
        reads.append(len(items))
        return real(items)

    monkeypatch.setattr(points_module, "_points", counted)
    again = SuggestionServer(experiment(parameters), SEED, tmp_path)
    assert again.start(held).source == "restored"
    assert len(again.get_suggestions(held, 303)) == 3
    assert reads == []


def test_a_call_does_not_build_the_set_of_every_point_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set built by one call moves to the next call's points (``Points.extended``): a
    server that appends to its journal (no bytes kept to search) builds it once, not per call."""
    parameters = [{**INTS[0], "feasibleSpace": {"min": "0", "max": "999999"}}, INTS[1]]
    server = started(tmp_path, parameters)
    held = server.get_suggestions([], 300)
    builds: list[int] = []
    real = points_module.Seen._whole

    def counted(self: points_module.Seen) -> set[Point]:
        if not self.built:
            builds.append(1)
        return real(self)

    monkeypatch.setattr(points_module.Seen, "_whole", counted)
    for _ in range(20):
        held += server.get_suggestions(held, len(held) + 2)
    assert len(builds) <= 1
    assert len(set(values(held))) == len(held) == 340
    assert (
        server.get_suggestions(held, len(held) + 20)
        == started(None, parameters).get_suggestions([], len(held) + 20)[len(held) :]
    )
