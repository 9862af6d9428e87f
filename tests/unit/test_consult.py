"""Asking the suggestion service: assignments it could not give are asked for again soon.

Nothing in the cluster changes when a ``GetSuggestions`` call fails, so no watch event would
wake the Experiment again; the reconcile itself asks to be requeued.
"""

from __future__ import annotations

from katib_resume.app.loop.reconcile import (
    ASSIGNMENT_RETRY_SECONDS,
    apply,
    decide,
    gather,
    reconcile,
)
from katib_resume.core.actions import Requeue
from katib_resume.core.desired import desired_trial
from katib_resume.core.model import Experiment, Suggestion
from katib_resume.core.observed import Assignments
from katib_resume.core.plan import NeedAssignments, NeedValidation, plan
from katib_resume.core.ports import Unavailable
from tests.support.harness import Bench, load


class Unreachable(Bench):
    def get_suggestions(self, suggestion: Suggestion, count: int) -> Assignments:
        raise Unavailable("GetSuggestions at exp-random.kubeflow:6789: UNAVAILABLE: refused")


def running(bench: Bench) -> Bench:
    bench.settle()
    bench.bind_pvc()
    bench.set_available()
    bench.settle()
    return bench


def test_an_unanswered_get_suggestions_is_retried_after_a_short_delay() -> None:
    bench = running(Unreachable(load("from-volume-resume.yaml")))
    decided, requeue = reconcile(bench.cluster, bench.key, bench.config, bench.clock.now(), bench)
    assert not decided.writes
    assert requeue == ASSIGNMENT_RETRY_SECONDS
    suggestion = bench.suggestion()
    assert suggestion is not None and suggestion["spec"]["requests"] == 3
    assert not suggestion["status"].get("suggestions")


def test_once_the_assignments_are_recorded_nothing_is_retried() -> None:
    bench = Bench(load("from-volume-resume.yaml"))
    bench.serves_assignments = True
    running(bench)
    decided, requeue = reconcile(bench.cluster, bench.key, bench.config, bench.clock.now(), bench)
    assert not decided.writes and requeue is None
    suggestion = bench.suggestion()
    assert suggestion is not None and len(suggestion["status"]["suggestions"]) == 3


def test_settings_returned_with_assignments_are_merged_into_the_status() -> None:
    """Katib records the settings a service returns (Hyperband keeps its state in them): a
    known name takes the new value in place, a new name is appended."""
    bench = Bench(load("from-volume-resume.yaml"))
    bench.serves_assignments = True
    bench.algorithm_settings = ({"name": "random_state", "value": "7"},)
    running(bench)
    suggestion = bench.suggestion()
    assert suggestion is not None
    assert suggestion["status"]["algorithmSettings"] == [{"name": "random_state", "value": "7"}]
    bench.algorithm_settings = (
        {"name": "bracket", "value": "2"},
        {"name": "random_state", "value": "8"},
    )
    bench.edit(parallelTrialCount=4)  # one more assignment is asked for
    bench.settle()
    suggestion = bench.suggestion()
    assert suggestion is not None and len(suggestion["status"]["suggestions"]) == 4
    assert suggestion["status"]["algorithmSettings"] == [
        {"name": "random_state", "value": "8"},
        {"name": "bracket", "value": "2"},
    ]


def test_an_assignments_early_stopping_rules_go_into_its_trial() -> None:
    raw = load("from-volume-resume.yaml")
    experiment = Experiment.model_validate(raw)
    rule = {"name": "loss", "value": "0.5", "comparison": "greater", "startStep": 4}
    assignment = {
        "name": "t-1",
        "parameterAssignments": [{"name": "lr", "value": "0.02"}],
        "earlyStoppingRules": [rule],
    }
    assert desired_trial(experiment, assignment)["spec"]["earlyStoppingRules"] == [rule]
    del assignment["earlyStoppingRules"]
    assert "earlyStoppingRules" not in desired_trial(experiment, assignment)["spec"]


def test_without_a_service_the_settings_count_as_valid_and_assignments_are_retried() -> None:
    """An embedder with no suggestion service: the verdict is Katib's Unimplemented (valid), and
    the assignments that cannot come make the plan ask to be looked at again."""
    bench = Bench(load("from-volume-resume.yaml"))
    bench.settle()
    bench.bind_pvc()
    bench.set_available()
    observed = gather(bench.cluster, bench.key)
    asked = plan(observed, bench.config, bench.clock.now())
    assert isinstance(asked, NeedValidation)
    decided = decide(observed, bench.config, bench.clock.now(), None)
    assert decided.suggestion is not None and decided.suggestion.after.name == "Running"
    apply(bench.cluster, decided)
    observed = gather(bench.cluster, bench.key)
    asked = plan(observed, bench.config, bench.clock.now())
    assert isinstance(asked, NeedAssignments) and asked.count == 3
    retried = decide(observed, bench.config, bench.clock.now(), None)
    assert not retried.writes
    assert Requeue(ASSIGNMENT_RETRY_SECONDS, "the suggestion service gave no assignments") in (
        retried.actions
    )
