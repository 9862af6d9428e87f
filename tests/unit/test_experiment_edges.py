"""Edges of the Experiment's lifecycle that only its Events and its completed states show.

Pinned here because nothing else held them (``python -m tools.mutate --module
core/lifecycle/experiment.py``): each transition's Event names both states by their values and
a failure is a Warning; a completed Experiment provisions nothing, even with budget left.
"""

from __future__ import annotations

from katib_resume.core.katib import API_VERSION
from katib_resume.core.kube import Manifest
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
