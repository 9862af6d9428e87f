"""A ``suggestion-server`` restarted on its volume, over Katib's requests (``SuggestionApi``).

Katib's request carries the Experiment's Trials in no useful order. The restarted service
sorts them by its saved state's issue order, so that it compares them with the saved
assignments as bytes and parses only those saved after them (as the embedded runtime does);
a saved state ahead of the Trials is kept, one that disagrees with them is moved aside and
rebuilt with a Warning.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.adapters.grpc.codec import experiment_wire, trial_wire
from katib_resume.adapters.local.suggestion import unparsed
from katib_resume.app.suggestion.service import SuggestionApi
from katib_resume.core.manifest import Manifest
from katib_resume.core.trial_phases import TrialPhase

NAME = "restored"
EXPERIMENT: Manifest = {
    "metadata": {"name": NAME, "namespace": "kubeflow"},
    "spec": {
        "objective": {"type": "minimize", "objectiveMetricName": "loss"},
        "algorithm": {"algorithmName": "random"},
        "parallelTrialCount": 3,
        "maxTrialCount": 10_000,
        "parameters": [
            {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "-5", "max": "10"}},
            {"name": "y", "parameterType": "int", "feasibleSpace": {"min": "0", "max": "15"}},
        ],
    },
}


def request(trials: list[Manifest], held: int, count: int) -> dict[str, Any]:
    """Katib's request: the Trials, ``held`` assignments the controller holds, ``count`` more."""
    wires = [
        trial_wire(
            {
                "metadata": {"name": item["name"]},
                "spec": {"parameterAssignments": item["parameterAssignments"]},
                "status": {"startTime": "2026-01-01T00:00:00Z"},  # one batch: a tie
            },
            TrialPhase.RUNNING,
        )
        for item in trials
    ]
    return {
        "experiment": experiment_wire(EXPERIMENT),
        "trials": wires,
        "total_request_number": held + count,
        "current_request_number": count,
    }


def issue(volume: Path, count: int) -> list[Manifest]:
    """``count`` assignments from a new service on ``volume``, as Katib's controller holds them."""
    reply = SuggestionApi(volume, 0).get_suggestions(request([], 0, count))
    items = reply["parameter_assignments"]
    return [{"name": i["trial_name"], "parameterAssignments": i["assignments"]} for i in items]


def issue_in_batches(volume: Path, batches: int, size: int) -> list[Manifest]:
    """``batches`` calls of ``size`` from one service (the later ones saved in the journal)."""
    api, held = SuggestionApi(volume, 0), list[Manifest]()
    for _ in range(batches):
        items = api.get_suggestions(request(held, len(held), size))["parameter_assignments"]
        held += [{"name": i["trial_name"], "parameterAssignments": i["assignments"]} for i in items]
    return held


def next_after(volume: Path, trials: list[Manifest], held: int) -> tuple[SuggestionApi, Any]:
    api = SuggestionApi(volume, 0)
    reply = api.get_suggestions(request(trials, held, 1))
    return api, reply["parameter_assignments"]


def uninterrupted(volume: Path, count: int) -> Any:
    """The assignment after ``count``, from a service that never stopped (its last one)."""
    return issue(volume, count + 1)[-1]


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many bytes of saved assignments each parse at restart read."""
    sizes: list[int] = []
    parse = unparsed.parse_items

    def spy(body: bytes) -> Any:
        sizes.append(len(body))
        return parse(body)

    monkeypatch.setattr(unparsed, "parse_items", spy)
    return sizes


def test_a_restart_over_shuffled_trials_compares_bytes_and_parses_nothing(
    tmp_path: Path, parsed: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    held = issue_in_batches(tmp_path / "volume", 8, 50)
    assert (tmp_path / "volume" / NAME / "suggestion-state.journal").exists()
    shuffled = random.Random(1).sample(held, len(held))
    assert shuffled != held
    parsed.clear()
    with caplog.at_level(logging.WARNING):
        api, fresh = next_after(tmp_path / "volume", shuffled, len(held))
    assert api.reports[NAME].source == "restored"
    assert parsed == []  # every saved assignment was one of the Trials', compared as bytes
    assert not caplog.records
    expected = uninterrupted(tmp_path / "other", len(held))
    assert [(i["trial_name"], i["assignments"]) for i in fresh] == [
        (expected["name"], expected["parameterAssignments"])
    ]


@given(st.data())
def test_a_state_ahead_of_the_trials_is_kept_whatever_their_order(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Assignments issued whose Trials were not created yet (a lost reply, a controller that
    crashed before creating them) stay the service's: the Trials are a prefix, in any order."""
    volume = tmp_path_factory.mktemp("volume")
    count = data.draw(st.integers(1, 30))
    held = issue(volume, count)
    made = data.draw(st.integers(0, count))
    trials = data.draw(st.permutations(held[:made]))
    api, fresh = next_after(volume, list(trials), count)
    assert api.reports[NAME].source == "restored"
    assert fresh[0]["trial_name"] not in {item["name"] for item in held}
    assert api.servers[NAME].held(count) == tuple(held)


def test_a_state_that_disagrees_with_the_trials_is_rebuilt_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    held = issue(tmp_path / "volume", 50)
    changed = [dict(item) for item in held]
    changed[17] = changed[17] | {"parameterAssignments": changed[3]["parameterAssignments"]}
    with caplog.at_level(logging.WARNING):
        api, fresh = next_after(tmp_path / "volume", random.Random(2).sample(changed, 50), 50)
    report = api.reports[NAME]
    assert report.source == "rebuilt"
    assert "disagrees with the history (50 assignments)" in report.reason
    assert [record.levelno for record in caplog.records] == [logging.WARNING]
    assert report.reason in caplog.records[0].getMessage()
    assert (tmp_path / "volume" / NAME / "suggestion-state.json.discarded").exists()
    assert api.servers[NAME].held(50) == tuple(changed)  # the Trials, back in issue order
    assert fresh[0]["trial_name"] not in {item["name"] for item in held}


def test_a_trial_the_state_never_issued_is_a_disagreement(tmp_path: Path) -> None:
    held = issue(tmp_path / "volume", 20)
    stranger = {"name": "stranger", "parameterAssignments": held[0]["parameterAssignments"]}
    api, _ = next_after(tmp_path / "volume", [*held[:5], stranger], 20)
    assert api.reports[NAME].source == "rebuilt"
    assert "disagrees with the history (6 assignments)" in api.reports[NAME].reason
