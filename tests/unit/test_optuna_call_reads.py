"""A call of an Optuna search reads what changed, not the history Katib sends with it.

Katib sends every finished Trial's result in every call. The search tells its study the few
results that are new, found among the trials still running; a call with several new results
maps no other result (which would map every name: 0.7 ms a call at 5,000 assignments), before
a restart as after one, and tells them in the order of their assignments whatever the order of
the call's results, so the resumed run still hands out the uninterrupted run's assignments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from katib_resume.adapters.local.suggestion import SuggestionServer
from katib_resume.adapters.local.suggestion.known import Known
from tests.unit.test_suggestion_service import experiment, param

SPACE = [param("x", "double", min="-2", max="3"), param("y", "double", min="0", max="1")]


def value(item: dict[str, Any]) -> float:
    x, y = (float(v["value"]) for v in item["parameterAssignments"])
    return (x - 0.5) ** 2 + y


def run(server: SuggestionServer, held: list[Any], reversed_results: bool) -> list[Any]:
    """Batches of four, each reported once the next batch is asked for: every call but the
    first has four new results."""
    for _ in range(6):
        results = {item["name"]: value(item) for item in held}
        if reversed_results:
            results = dict(reversed(results.items()))
        with mock.patch.object(Known, "_whole", _mapped):
            held = held + server.get_suggestions(held, len(held) + 4, results)
    return held


def _mapped(_: Known) -> dict[int, Any]:
    raise AssertionError("a call mapped every result")


@pytest.mark.parametrize("algorithm", ["tpe", "multivariate-tpe", "cmaes", "sobol"])
def test_a_call_maps_no_result_but_the_new_ones(algorithm: str, tmp_path: Path) -> None:
    subject = experiment(SPACE, algorithm)
    reference = SuggestionServer(subject, 3, None)
    reference.start([])
    expected = run(reference, run(reference, [], False), False)
    server = SuggestionServer(subject, 3, tmp_path)
    server.start([])
    held = run(server, [], True)
    restarted = SuggestionServer(subject, 3, tmp_path)
    assert restarted.start(held).source == "restored"
    assert run(restarted, held, True) == expected
