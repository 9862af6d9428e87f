"""The Events a Trial's reconcile tells (``core/plan/trial_effects.py``), in Katib's trial
controller's words (docs/katib-contract.md#trial-controller): a failure with the Job's own
message and reason, a success alone, a refused run kind, and the ``Push``-only placeholder row."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.actions import Delete, ObjectRef
from katib_resume.core.conditions import ConditionSpec, Status
from katib_resume.core.lifecycle.trial import TrialSignals, TrialState, condition_for
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.plan.result import Step
from katib_resume.core.plan.trial import TrialContext
from katib_resume.core.plan.trial_draft import DeleteObservations, ReportObservation, TrialPlan
from tests.support.trial_player import TrialPlayer
from tests.support.trials import batch_job, job_status, new_trial

UNAVAILABLE_ROW = MetricRow("0001-01-01T00:00:00Z", "accuracy", "unavailable")


def _told(player: TrialPlayer) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in player.events]


def _failed(reason: str = "", message: str = "") -> tuple[str, str, str]:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.set_run_status(job_status(("Failed", "True"), reason=reason, message=message))
    player.reconcile()
    return _told(player)[-1]


def test_a_failure_is_told_with_the_jobs_message_then_reason() -> None:
    detail = "Job has reached the specified backoff limit"
    assert _failed("BackoffLimitExceeded", detail) == (
        "Normal",
        "JobFailed",
        f"Job t has failed. {detail} BackoffLimitExceeded",
    )
    assert _failed() == ("Normal", "JobFailed", "Job t has failed")
    assert _failed(message="out of memory")[2] == "Job t has failed. out of memory "
    assert _failed(reason="Evicted")[2] == "Job t has failed.  Evicted"


def test_a_success_is_told_once_as_a_success() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.log.report(
        TrialKey("default", "t"), [MetricRow("2020-01-01T00:00:00Z", "accuracy", "1")]
    )
    player.set_run_status(job_status(("Complete", "True")))
    player.reconcile()
    assert [e[1] for e in _told(player)] == ["JobCreated", "JobRunning", "JobSucceeded"]
    assert _told(player)[-1] == ("Normal", "JobSucceeded", "Job t has succeeded")


def test_a_refused_run_kind_is_a_warning_with_the_refusal() -> None:
    raw = {"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "metadata": {"name": "e"}}
    player = TrialPlayer(raw)
    player.settle()
    assert _told(player) == [
        (
            "Warning",
            "RunKindNotWatched",
            "Trial has failed: spec.runSpec has no apiVersion and kind, so nothing can run it",
        )
    ]


def test_only_a_push_trial_gets_the_unavailable_placeholder_row() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.log.report(
        TrialKey("default", "t"), [MetricRow("0001-01-01T00:00:00Z", "accuracy", "unavailable")]
    )
    player.set_run_status(job_status(("Complete", "True")))
    plan = player.reconcile()
    assert player.model.status.conditions[-1].type == "MetricsUnavailable"
    assert not [a for a in plan.actions if isinstance(a, ReportObservation)]
    assert _told(player)[-1] == (
        "Warning",
        "MetricsUnavailable",
        "Metrics are not available for Job t",
    )


def test_a_running_job_is_told_as_normal() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    assert _told(player)[-1] == ("Normal", "JobRunning", "Job t is running")


def test_an_expired_wait_keeps_the_jobs_reason() -> None:
    player = TrialPlayer(new_trial("t"), context=TrialContext(metrics_wait=60))
    player.settle()
    player.set_run_status(job_status(("Complete", "True"), reason="JobDone"))
    player.reconcile()
    player.clock.advance(60)
    player.reconcile()
    unavailable = player.model.status.conditions[-1]
    assert (unavailable.type, unavailable.reason) == (
        "MetricsUnavailable",
        "MetricsUnavailable. Job reason: JobDone",
    )
    assert _told(player)[-1][:2] == ("Warning", "MetricsUnavailable")


def test_the_events_are_about_the_trial() -> None:
    player = TrialPlayer(new_trial("t", namespace="team"))
    player.settle()
    refs = {(e.ref.api_version, e.ref.kind, e.ref.namespace, e.ref.name) for e in player.events}
    assert refs == {("kubeflow.org/v1beta1", "Trial", "team", "t")}


def test_the_trial_planners_actions_and_context_are_values() -> None:
    key = TrialKey("default", "t")
    row = MetricRow("2020-01-01T00:00:00Z", "accuracy", "1")
    values = (ReportObservation(key, (row,)), DeleteObservations(key), TrialContext())
    for value in (*values, TrialPlan(Step(TrialState.Pending, TrialState.Pending))):
        hash(value)  # a mutable dataclass is unhashable
        field = dataclasses.fields(value)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, None)


def test_a_completed_trials_job_is_deleted_by_kind_namespace_name_and_uid() -> None:
    player = TrialPlayer(new_trial("t", namespace="team"))
    player.settle()
    player.set_run_status(job_status(("Failed", "True")))
    player.reconcile()
    deletes = [a for a in player.reconcile().actions if isinstance(a, Delete)]
    assert deletes == [Delete(ObjectRef("batch/v1", "Job", "team", "t"), "run-1")]


def test_a_moving_pass_names_its_trigger_and_a_run_without_uid_is_deleted_unconditioned() -> None:
    player = TrialPlayer(new_trial("t"))
    player.reconcile()
    assert player.reconcile().step == Step(TrialState.Pending, TrialState.Created, "created")
    player.runs["t"] = {**batch_job("t"), "status": job_status(("Failed", "True"))}
    assert player.reconcile().step.trigger == "run_failed"
    deletes = [a for a in player.reconcile().actions if isinstance(a, Delete)]
    assert deletes == [Delete(ObjectRef("batch/v1", "Job", "default", "t"), "")]


def test_only_a_completed_trial_has_a_completion_time() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    assert player.model.status.conditions[-1].type == "Running"
    assert player.model.status.completion_time is None
    player.set_run_status(job_status(("Failed", "True")))
    player.reconcile()
    assert player.model.status.completion_time == player.clock.now()


def test_a_state_is_written_as_katibs_condition_with_the_jobs_words_only_when_given() -> None:
    assert condition_for(TrialState.Failed) == ConditionSpec(
        "Failed", Status.TRUE, "TrialFailed", "Trial has failed"
    )
    assert condition_for(TrialState.Failed, "Evicted") == ConditionSpec(
        "Failed", Status.TRUE, "TrialFailed. Job reason: Evicted", "Trial has failed"
    )


def test_success_and_unavailable_metrics_stamp_the_completion_time() -> None:
    for rows in ([MetricRow("2020-01-01T00:00:00Z", "accuracy", "1")], [UNAVAILABLE_ROW]):
        player = TrialPlayer(new_trial("t"))
        player.settle()
        player.log.report(TrialKey("default", "t"), rows)
        player.set_run_status(job_status(("Complete", "True")))
        player.reconcile()
        assert player.model.status.conditions[-1].type in ("Succeeded", "MetricsUnavailable")
        assert player.model.status.completion_time == player.clock.now()


def test_pending_is_written_as_no_condition_and_signals_are_values() -> None:
    with pytest.raises(ValueError) as error:
        condition_for(TrialState.Pending)
    assert str(error.value) == "Pending is written as no condition"
    signals = TrialSignals(failed=True)
    assert hash(signals) == hash(TrialSignals(failed=True))
    with pytest.raises(dataclasses.FrozenInstanceError):
        signals.failed = False  # type: ignore[misc]
