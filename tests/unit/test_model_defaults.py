"""The object models' defaults and small readings (``core/model/``): what a field Katib's
objects may omit reads as, and the one-line tests the planners rely on (Katib's
``hasCondition``, a Deployment's readiness, a bound claim, the controlling owner)."""

from __future__ import annotations

from typing import Any

from katib_resume.core.model import (
    Deployment,
    Experiment,
    ObjectMeta,
    PersistentVolumeClaim,
    Suggestion,
    Trial,
)
from katib_resume.core.model.children import TypeStatus
from katib_resume.core.model.experiment import AlgorithmSetting
from katib_resume.core.model.meta import OwnerReference

ALGORITHM = {"algorithm": {"algorithmName": "random"}}
COUNTERS = (
    "trials",
    "trials_succeeded",
    "trials_failed",
    "trials_killed",
    "trials_pending",
    "trials_running",
    "trials_early_stopped",
    "trial_metrics_unavailable",
)


def _conditions(*pairs: tuple[str, str], reason: str = "") -> dict[str, Any]:
    return {"conditions": [{"type": t, "status": s, "reason": reason} for t, s in pairs]}


def _experiment(**status: Any) -> Experiment:
    raw = {"metadata": {"name": "e"}, "spec": ALGORITHM, "status": status}
    return Experiment.model_validate(raw)


def test_an_experiment_without_a_status_counts_nothing_in_the_default_namespace() -> None:
    bare = Experiment.model_validate({"metadata": {"name": "e"}, "spec": ALGORITHM})
    assert [getattr(bare.status, name) for name in COUNTERS] == [0] * len(COUNTERS)
    assert (bare.kind, bare.namespace) == ("Experiment", "default")
    assert AlgorithmSetting.model_validate({"name": "lr"}).value == ""


def test_an_experiment_is_completed_by_either_end_and_says_why_it_succeeded() -> None:
    succeeded = _experiment(
        **_conditions(("Succeeded", "True"), reason="ExperimentMaxTrialsReached")
    )
    failed = _experiment(**_conditions(("Failed", "True")))
    running = _experiment(**_conditions(("Running", "True"), ("Succeeded", "False")))
    assert succeeded.is_completed() and failed.is_completed() and not running.is_completed()
    assert succeeded.succeeded_reason() == "ExperimentMaxTrialsReached"
    assert succeeded.completed_by_max_trials() and not failed.completed_by_max_trials()
    stopped = _experiment(
        **_conditions(("Succeeded", "False"), reason="ExperimentMaxTrialsReached")
    )
    assert stopped.succeeded_reason() is None and not stopped.completed_by_max_trials()
    other = _experiment(**_conditions(("Succeeded", "True"), reason="ExperimentGoalReached"))
    assert not other.completed_by_max_trials()


def test_a_trial_reads_the_webhooks_defaults() -> None:
    bare = Trial.model_validate({"metadata": {"name": "t"}})
    spec = bare.spec
    assert (bare.kind, bare.namespace, spec.collector_kind) == ("Trial", "default", "StdOut")
    assert (spec.retain_run, spec.success_condition, spec.failure_condition) == (False, "", "")
    collectors: list[dict[str, Any]] = [{}, {"collector": {}}, {"collector": {"kind": ""}}]
    for collector in collectors:
        trial = Trial.model_validate(
            {"metadata": {"name": "t"}, "spec": {"metricsCollector": collector}}
        )
        assert trial.spec.collector_kind == "StdOut"
    pushed = {
        "metadata": {"name": "t"},
        "spec": {"metricsCollector": {"collector": {"kind": "Push"}}},
    }
    assert Trial.model_validate(pushed).spec.collector_kind == "Push"


def test_a_suggestion_reads_its_defaults_and_is_completed_by_either_end() -> None:
    raw = {"metadata": {"name": "s"}, "spec": ALGORITHM}
    bare = Suggestion.model_validate(raw)
    assert (bare.kind, bare.namespace, bare.spec.requests, bare.status.suggestion_count) == (
        "Suggestion",
        "default",
        0,
        0,
    )
    for end in ("Succeeded", "Failed"):
        done = Suggestion.model_validate({**raw, "status": _conditions((end, "True"))})
        assert done.is_completed()
    running = Suggestion.model_validate({**raw, "status": _conditions(("Running", "True"))})
    assert not running.is_completed()


def test_readiness_binding_and_the_controlling_owner() -> None:
    def deployment(*conditions: dict[str, str]) -> Deployment:
        return Deployment.model_validate(
            {"metadata": {"name": "d"}, "status": {"conditions": list(conditions)}}
        )

    assert deployment({"type": "Available", "status": "True"}).is_available()
    assert not deployment({"type": "Available", "status": "False"}).is_available()
    assert not deployment({"type": "Progressing", "status": "True"}).is_available()
    assert not deployment({"type": "Available"}).is_available()
    assert TypeStatus(type="Available").status == "Unknown"
    claim = {"metadata": {"name": "c"}}
    assert PersistentVolumeClaim.model_validate({**claim, "status": {"phase": "Bound"}}).is_bound()
    assert not PersistentVolumeClaim.model_validate(
        {**claim, "status": {"phase": "Pending"}}
    ).is_bound()
    owner = {"apiVersion": "v1", "kind": "Trial", "name": "t"}
    meta = ObjectMeta.model_validate(
        {"name": "x", "ownerReferences": [owner, {**owner, "uid": "u", "controller": True}]}
    )
    assert meta.controller_uid() == "u"
    assert (
        ObjectMeta.model_validate({"name": "x", "ownerReferences": [owner]}).controller_uid()
        is None
    )
    assert OwnerReference.model_validate(owner).uid == ""
    assert not meta.is_deleting
    assert ObjectMeta.model_validate(
        {"name": "x", "deletionTimestamp": "2020-01-01T00:00:00Z"}
    ).is_deleting
