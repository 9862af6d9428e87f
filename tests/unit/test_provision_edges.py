"""The edges of ``core.plan.provision``, called directly: when it does nothing, exactly which
Trials a lowered parallelism deletes (with their UIDs), and which assignments become Trials.

Mutation testing (``docs/testing.md``) found these free to change under the planner-level tests
of ``test_provision.py``.
"""

from __future__ import annotations

from katib_resume.core.actions import Create, Delete, UpdateSpec
from katib_resume.core.model import Suggestion, Trial
from katib_resume.core.plan.provision import provision
from katib_resume.core.trials import count_trials
from tests.unit.test_provision import assignment, experiment, suggestion, trial


def _run(
    sug: Suggestion, trials: list[Trial], parallel: int = 3
) -> tuple[list[str], list[tuple[str, str]], list[int]]:
    exp = experiment(parallelTrialCount=parallel)
    actions = provision(exp, sug, tuple(trials), count_trials(trials))
    created = [a.manifest["metadata"]["name"] for a in actions if isinstance(a, Create)]
    deleted = [(a.ref.name, a.uid) for a in actions if isinstance(a, Delete)]
    requests = [a.spec["requests"] for a in actions if isinstance(a, UpdateSpec)]
    return created, deleted, requests


def _with(sug: Suggestion, **metadata: object) -> Suggestion:
    raw = sug.to_dict()
    raw["metadata"].update(metadata)
    return Suggestion.model_validate(raw)


def test_a_failed_or_deleted_suggestion_provisions_nothing() -> None:
    assert _run(_with(suggestion(3, 3), deletionTimestamp="2026-01-01T00:00:00Z"), []) == (
        [],
        [],
        [],
    )
    raw = suggestion(3, 3).to_dict()
    raw["status"]["conditions"] = [{"type": "Failed", "status": "True", "reason": "x"}]
    assert _run(Suggestion.model_validate(raw), []) == ([], [], [])
    assert _run(suggestion(3, 3), [])[0] == [assignment(i)["name"] for i in range(3)]


def test_a_full_experiment_asks_for_nothing_more() -> None:
    running = [trial(i, "Running") for i in range(3)]
    assert _run(suggestion(3, 3), running) == ([], [], [])


def test_exactly_the_surplus_goes_newest_first_and_undated_first_of_all() -> None:
    running = [trial(i, "Running", f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    raw = trial(3, "Running").to_dict()
    raw["metadata"].pop("creationTimestamp")
    undated = Trial.model_validate(raw)
    _, deleted, _ = _run(suggestion(4, 4), [*running, undated], parallel=2)
    assert deleted == [(assignment(3)["name"], "t3"), (assignment(2)["name"], "t2")]
    _, none, _ = _run(suggestion(3, 3), running, parallel=3)
    assert none == []


def test_a_trial_already_being_deleted_is_not_deleted_again() -> None:
    raw = trial(2, "Running", "2026-01-01T00:00:02Z").to_dict()
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z"
    going = Trial.model_validate(raw)
    running = [trial(i, "Running", f"2026-01-01T00:00:0{i}Z") for i in range(2)]
    _, deleted, _ = _run(suggestion(3, 3), [*running, going], parallel=1)
    assert deleted == [(assignment(1)["name"], "t1"), (assignment(0)["name"], "t0")]


def test_only_assignments_without_a_trial_become_trials() -> None:
    created, _, requests = _run(suggestion(4, 4), [trial(0), trial(2)], parallel=2)
    assert created == [assignment(1)["name"], assignment(3)["name"]]
    assert requests == []


def test_a_full_experiment_never_lowers_the_requests() -> None:
    running = [trial(i, "Running") for i in range(3)]
    assert _run(suggestion(4, 4), running) == ([], [], [])


def test_one_trial_too_many_is_deleted_as_a_trial() -> None:
    running = [trial(i, "Running", f"2026-01-01T00:00:0{i}Z") for i in range(3)]
    exp = experiment(parallelTrialCount=2)
    actions = provision(exp, suggestion(3, 3), tuple(running), count_trials(running))
    (delete,) = [a for a in actions if isinstance(a, Delete)]
    assert (delete.ref.kind, delete.ref.namespace, delete.ref.name, delete.uid) == (
        "Trial",
        "kubeflow",
        assignment(2)["name"],
        "t2",
    )
