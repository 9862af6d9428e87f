"""The trials a restart builds for CMA-ES, and an assignment past the replayed prefix that is not
a point of the space (``sampler_reads``, ``OptunaSearch._rebuild``)."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.adapters.local.suggestion.algorithms import build
from katib_resume.adapters.local.suggestion.column import Column
from katib_resume.adapters.local.suggestion.live_study import UNTOLD, WITHHELD, Result
from katib_resume.adapters.local.suggestion.optuna_search import OptunaSearch
from katib_resume.adapters.local.suggestion.sampler_reads import Past, cma_generation, cma_keys
from katib_resume.core.model import Experiment
from tests.unit.test_optuna_equivalence import experiment

OPTIMIZER = {"cma:optimizer:0": "80"}


def cma_past(results: list[Result], attrs: list[dict[str, Any]], best: int) -> Past:
    return Past(results, attrs.__getitem__, range(len(results)), best)


@pytest.mark.parametrize("strategy", ["none", "ipop", "bipop"])
@pytest.mark.parametrize("sigma", ["0", "0.3"])
def test_the_attribute_names_read_once_are_the_searchs_samplers(strategy: str, sigma: str) -> None:
    manifest = experiment("cmaes").model_dump(by_alias=True, exclude_none=True)
    manifest["spec"]["algorithm"]["algorithmSettings"] = [
        {"name": "restart_strategy", "value": strategy},
        {"name": "sigma", "value": sigma},
    ]
    search = build(Experiment.model_validate(manifest), 0)
    assert isinstance(search, OptunaSearch)
    sampler: Any = search.make(3)
    assert cma_keys() == (sampler._attr_key_generation, sampler._attr_key_optimizer)


def generation(number: int, optimizer: bool = False) -> dict[str, Any]:
    return {"cma:generation": number, **(OPTIMIZER if optimizer else {})}


HISTORY = [
    generation(0),
    generation(0),
    generation(1, optimizer=True),  # told generation 0
    generation(1),
    generation(2, optimizer=True),  # told generation 1
    generation(1),  # asked while 4 was running: restored from 2
    generation(1),
    generation(1),
    generation(1),
]


def test_the_running_optimizer_leaves_its_generation_to_be_told() -> None:
    """Trial 4 (generation 2's optimizer) is still running: an ask restores 2's optimizer and
    reads generation 1, of which 2, 3, 5 and 8 are complete; 0 and 1 only as the best."""
    results: list[Result] = [1.0, 2.0, 3.0, 4.0, UNTOLD, 5.0, None, UNTOLD, 6.0]
    assert cma_generation(cma_past(results, HISTORY, best=0)) == [0, 2, 3, 4, 5, 7, 8]


def test_a_complete_optimizer_leaves_the_generations_before_it_unread() -> None:
    """Trial 4 complete: generation 2 is read, and the scan stops at 2, the newest optimizer of
    a lower generation; 5 and 8 (generation 1, asked after 4) are withheld too."""
    results: list[Result] = [1.0, 2.0, 3.0, 4.0, 0.5, 5.0, None, UNTOLD, 6.0]
    assert cma_generation(cma_past(results, HISTORY, best=4)) == [4, 7]


def test_without_an_optimizer_every_complete_trial_of_a_generation_is_read() -> None:
    results: list[Result] = [1.0, 2.0, UNTOLD, 0.5]
    attrs = [{}, generation(0), generation(1, optimizer=True), generation(0)]
    assert cma_generation(cma_past(results, attrs, best=3)) == [1, 2, 3]


def test_a_foreign_point_past_the_replayed_prefix_is_no_trial() -> None:
    """A state whose later assignments hold one that is not a point of the space: every
    assignment is read after all, and that one is left out of the study, as before."""
    search = build(experiment("sobol"), 0)
    assert isinstance(search, OptunaSearch)
    points = [(("x", str(x)), ("y", "1.5")) for x in (1.5, 2.5, 99.0, 3.5)]
    cursor = {**search.start(), "told": Column.of([1.0, 2.0, 0.1, None])}
    live = search._rebuild(cursor, tuple(points))
    assert live.numbers == [0, 1, None, 2]
    trials = live.storage.get_all_trials(live.study_id, deepcopy=False)
    assert [t is WITHHELD for t in trials] == [False, True, True]
    assert trials[0].params == {"x": 1.5, "y": 1.5}


def test_a_draw_that_tells_nothing_new_keeps_what_it_did_not_change() -> None:
    """A call told no new result keeps the cursor's ``told`` (and, no sampler attribute added,
    ``trial_attrs``) as they are, so that the save's change of the cursor need not compare them
    entry by entry; a new result makes a new ``told``, the old one unchanged."""
    search = build(experiment("sobol"), 0)
    assert isinstance(search, OptunaSearch)
    points = [(("x", str(x)), ("y", "1.5")) for x in (1.5, 2.5)]
    cursor = {**search.start(), "told": Column.of([1.0])}
    _, after = search.draw(cursor, 1, tuple(points), {0: 1.0})
    assert after["told"] is cursor["told"] and after["trial_attrs"] is cursor["trial_attrs"]
    _, later = search.draw(after, 1, (*points, (("x", "3.5"), ("y", "1.5"))), {1: 2.0})
    assert later["told"] == Column.of([1.0, 2.0]) and cursor["told"] == Column.of([1.0])
