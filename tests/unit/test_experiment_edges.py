"""Edges of the Experiment's lifecycle that only its Events and its completed states show.

Pinned here because nothing else held them (``python -m tools.mutate --module
core/lifecycle/experiment.py``): each transition's Event names both states by their values and
a failure is a Warning; a completed Experiment provisions nothing, even with budget left; an
edit is observed; a completion time exists only once completed; a lost optimum is removed
(``--module core/plan/experiment.py``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import UpdateStatus
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.lifecycle.experiment import ExperimentState
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model import Experiment, Trial
from katib_resume.core.plan.experiment import _status, _with_optimal, decide_experiment
from katib_resume.core.trial_ledger import ledger_of
from katib_resume.core.trials import TrialCounts, replace_status_counts
from tests.support.harness import Bench, load


def _bench(**spec: object) -> Bench:
    experiment: Manifest = load("from-volume-resume.yaml")
    experiment["spec"].update(spec)
    bench = Bench(experiment)
    bench.serves_assignments = True
    bench.settle()
    return bench


def _events(bench: Bench) -> list[tuple[str, str, str]]:
    return [
        (e.type, e.reason, e.message) for e in bench.cluster.events if e.ref.kind == "Experiment"
    ]


def test_each_transition_is_an_event_naming_both_states_and_a_failure_warns() -> None:
    bench = _bench(maxTrialCount=5, maxFailedTrialCount=1, parallelTrialCount=2)
    bench.add_trials(1)
    bench.settle()
    bench.add_trials(1, "Failed")
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr", "Ru-", "F"]
    assert _events(bench) == [
        ("Normal", "Created", "Experiment Pending -> Created"),
        ("Normal", "TrialsStarted", "Experiment Created -> Running"),
        ("Warning", "MaxFailedTrialsReached", "Experiment Running -> Failed"),
    ]


def test_a_run_that_completes_is_a_normal_event_into_succeeded() -> None:
    bench = _bench(maxTrialCount=2, parallelTrialCount=2)
    bench.add_trials(1)
    bench.settle()
    bench.add_trials(1)
    bench.settle()
    assert _events(bench)[-1] == (
        "Normal",
        "MaxTrialsReached",
        "Experiment Running -> Succeeded",
    )


def test_a_completed_experiment_with_budget_left_provisions_nothing() -> None:
    """Succeeded by its goal after one of five Trials: no more requests, no new Trial."""
    bench = _bench(maxTrialCount=5, parallelTrialCount=2)
    suggestion = bench.suggestion()
    assert suggestion is not None
    requests = suggestion["spec"]["requests"]
    bench.add_trials(1, loss=0.0001)
    bench.settle()
    assert bench.conditions("Experiment") == ["Cr", "SG"]
    bench.settle()
    suggestion = bench.suggestion()
    assert suggestion is not None and suggestion["spec"]["requests"] == requests
    assert not suggestion.get("status", {}).get("suggestions")
    assert len(bench.cluster.list(API_VERSION, "Trial", None, {})) == 1


def test_an_edit_that_changes_nothing_else_is_still_observed() -> None:
    """``observedGeneration`` follows every spec edit, even one no counter or condition shows
    (a client waits for it to know its edit was seen)."""
    bench = _bench(maxTrialCount=5, parallelTrialCount=1)
    bench.add_trials(1)
    bench.settle()
    before = bench.experiment()
    assert before["status"]["observedGeneration"] == before["metadata"]["generation"]
    bench.edit(maxFailedTrialCount=4)
    bench.settle()
    after = bench.experiment()
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    assert after["status"]["observedGeneration"] == after["metadata"]["generation"]
    assert {k: v for k, v in after["status"].items() if k != "observedGeneration"} == {
        k: v for k, v in before["status"].items() if k != "observedGeneration"
    }


X = ExperimentState
NOW = EPOCH + timedelta(minutes=5)
SUCCEEDED = [
    {"type": "Created", "status": "True", "reason": "ExperimentCreated"},
    {"type": "Running", "status": "False", "reason": "ExperimentRunning"},
    {"type": "Succeeded", "status": "True", "reason": "ExperimentMaxTrialsReached"},
]


def _experiment(status: dict[str, Any]) -> Experiment:
    raw: Manifest = load("from-volume-resume.yaml")
    raw["metadata"].update(uid="exp-uid", generation=1)
    raw["status"] = {"startTime": "2026-01-01T00:00:00Z", "observedGeneration": 1, **status}
    return Experiment.model_validate(raw)


def _written(exp: Experiment, before: ExperimentState, after: ExperimentState) -> Manifest:
    status = _status(
        exp,
        conditions=exp.status.conditions,
        counts=TrialCounts(succeeded_trials=("t1",)),
        before=before,
        after=after,
        now=NOW,
    )
    assert status is not None
    return status


def test_a_completion_time_is_stamped_at_completion_only_and_a_restart_drops_it() -> None:
    assert _written(_experiment({}), X.Running, X.Succeeded)["completionTime"] == format_time(NOW)
    assert "completionTime" not in _written(_experiment({}), X.Pending, X.Created)
    assert "completionTime" not in _written(_experiment({}), X.Created, X.Running)
    done = _experiment({"conditions": SUCCEEDED, "completionTime": "2026-01-01T00:01:00Z"})
    assert "completionTime" not in _written(done, X.Succeeded, X.Running)  # Katib bug 24


def test_an_optimum_that_is_gone_is_removed_from_the_status() -> None:
    """No Trial reports the objective any more (they were deleted): no stale optimum."""
    stored = {"bestTrialName": "t1", "observation": {"metrics": []}}
    exp = _experiment({"currentOptimalTrial": stored})
    status = _with_optimal(exp, None, None)
    assert status is not None and "currentOptimalTrial" not in status
    assert _with_optimal(exp, None, stored) is None  # unchanged: nothing to write


def _running_experiment(**status: Any) -> Experiment:
    running = [
        {"type": "Created", "status": "True", "reason": "ExperimentCreated"},
        {"type": "Running", "status": "True", "reason": "ExperimentRunning"},
    ]
    raw: Manifest = load("from-volume-resume.yaml")
    raw["metadata"].update(uid="exp-uid", generation=1)
    raw["spec"]["maxTrialCount"] = 5
    raw["status"] = {"conditions": running, **status}
    return Experiment.model_validate(raw)


def _succeeded_trial(exp: Experiment) -> Trial:
    return Trial.model_validate(
        {
            "metadata": {
                "name": "t1",
                "namespace": exp.namespace,
                "labels": {LABEL_EXPERIMENT: exp.metadata.name},
            },
            "status": {"conditions": [{"type": "Succeeded", "status": "True"}]},
        }
    )


def test_without_the_services_word_a_search_with_budget_left_is_not_over() -> None:
    """``decide_experiment``'s default: the suggestion service said nothing of exhaustion, so
    every Trial having finished (one of five) does not complete the Experiment."""
    exp = _running_experiment()
    decided = decide_experiment(exp, None, (_succeeded_trial(exp),), NOW)
    assert not decided.completed and decided.step.trigger is None


def test_a_ledger_folded_for_another_experiment_is_not_trusted() -> None:
    exp = _running_experiment()
    other = exp.model_copy(update={"metadata": exp.metadata.model_copy(update={"uid": "b"})})
    stale = ledger_of(other, ())
    decided = decide_experiment(exp, None, (_succeeded_trial(exp),), NOW, ledger=stale)
    [update] = [a for a in decided.actions if isinstance(a, UpdateStatus)]
    assert update.status["trials"] == 1 and update.status["trialsSucceeded"] == 1


def test_new_conditions_are_written_even_when_nothing_else_changed() -> None:
    """Counters, start time and generation already current: the new conditions alone are a
    write (``_status`` compares without them only when they are the observed ones)."""
    exp = _experiment(replace_status_counts({}, TrialCounts(succeeded_trials=("t1",))))
    created = ({"type": "Created", "status": "True", "reason": "ExperimentCreated"},)
    exp = exp.model_copy(update={"status": exp.status.model_copy(update={"conditions": ()})})
    conditions = Experiment.model_validate(
        {**exp.to_dict(), "status": {"conditions": list(created)}}
    ).status.conditions
    status = _status(
        exp,
        conditions=conditions,
        counts=TrialCounts(succeeded_trials=("t1",)),
        before=X.Pending,
        after=X.Created,
        now=NOW,
    )
    assert status is not None and [c["type"] for c in status["conditions"]] == ["Created"]
