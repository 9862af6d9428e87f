"""The trial planner through Katib's own trial tests (docs/katib-contract.md#trial-controller-tests
T2-T6) and the fixed bugs of docs/katib-contract.md#trial-bugs, played by a small shell
(``tests/support/trial_player.py``)."""

from __future__ import annotations

from typing import Any

from katib_resume.core.actions import Create, Delete, Requeue, UpdateStatus
from katib_resume.core.katib_trial import TRIAL_FINALIZER
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.plan.trial import TrialContext
from katib_resume.core.trial_run import watched_kinds
from tests.support.trial_player import TrialPlayer
from tests.support.trials import batch_job, job_status, new_trial

UNAVAILABLE_ROW = MetricRow("0001-01-01T00:00:00Z", "accuracy", "unavailable")


def _shape(player: TrialPlayer) -> list[tuple[str, str]]:
    return [(c.type, c.status.value) for c in player.model.status.conditions]


def _condition(player: TrialPlayer, type_: str) -> Any:
    return next(c for c in player.model.status.conditions if c.type == type_)


def _observation(player: TrialPlayer) -> list[dict[str, str]]:
    metrics: list[dict[str, str]] = (player.model.status.model_extra or {})["observation"][
        "metrics"
    ]
    return metrics


def _started(trial: dict[str, Any], **kwargs: Any) -> TrialPlayer:
    player = TrialPlayer(trial, **kwargs)
    player.settle()
    return player


def test_the_first_passes_add_the_finalizer_then_created_then_the_job() -> None:
    player = TrialPlayer(new_trial("t"))
    player.reconcile()
    assert player.model.metadata.finalizers == (TRIAL_FINALIZER,)
    assert player.model.status.conditions == ()
    player.reconcile()
    assert _shape(player) == [("Created", "True")] and not player.runs
    assert player.model.status.start_time == player.clock.now()
    player.reconcile()
    assert _shape(player) == [("Created", "True"), ("Running", "True")]
    job = player.runs["t"]
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Trial",
        "t",
        "uid-default-t",
        True,
    )
    assert job["metadata"]["labels"]["katib.kubeflow.org/trial"] == "t"
    assert [e.reason for e in player.events] == ["JobCreated", "JobRunning"]


def test_t2_failed_batch_job_then_deletion_cleans_the_log_once() -> None:
    player = _started(new_trial("test-failed-batch-job"))
    player.set_run_status(
        job_status(
            ("FailureTarget", "True"),
            ("Failed", "True"),
            reason="BatchJob completed test reason",
            message="BatchJob completed test message",
        )
    )
    player.reconcile()
    assert _shape(player) == [("Created", "True"), ("Running", "False"), ("Failed", "True")]
    failed = _condition(player, "Failed")
    assert failed.reason == "TrialFailed. Job reason: BatchJob completed test reason"
    assert failed.message == "Trial has failed. Job message: BatchJob completed test message"
    assert player.model.status.completion_time == player.clock.now()
    assert "observation" not in (player.model.status.model_extra or {}), "no fetch for failures"
    player.settle()
    assert not player.runs, "retainRun false: the Job is deleted once the Trial completed"
    player.delete_trial(player.clock.now())
    player.settle()
    assert player.trial is None
    assert player.log.calls.count(("delete", TrialKey("default", "test-failed-batch-job"))) == 1


def test_t3_complete_job_with_metrics_succeeds_with_the_observation() -> None:
    player = _started(new_trial("test-available-stdout"))
    key = TrialKey("default", "test-available-stdout")
    player.log.report(
        key,
        [
            MetricRow("2020-08-10T14:47:38+08:00", "accuracy", "0.99"),
            MetricRow("2020-08-10T14:50:38+08:00", "accuracy", "0.11"),
        ],
    )
    player.set_run_status(job_status(("SuccessCriteriaMet", "True"), ("Complete", "True")))
    player.reconcile()
    assert _shape(player) == [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    assert _observation(player) == [
        {"name": "accuracy", "min": "0.11", "max": "0.99", "latest": "0.11"}
    ]
    assert ("get", key) in player.log.calls
    assert _condition(player, "Succeeded").reason == "TrialSucceeded"


def test_t4_an_already_complete_job_with_unavailable_metrics() -> None:
    trial = new_trial("test-unavailable-stdout")
    player = TrialPlayer(trial)
    player.runs["test-unavailable-stdout"] = {
        **batch_job("test-unavailable-stdout"),
        "status": job_status(("Complete", "True")),
    }
    player.log.report(TrialKey("default", "test-unavailable-stdout"), [UNAVAILABLE_ROW])
    player.settle()
    assert _shape(player) == [("Created", "True"), ("MetricsUnavailable", "True")]
    assert _observation(player) == [
        {"name": "accuracy", "min": "unavailable", "max": "unavailable", "latest": "unavailable"}
    ]
    assert any(e.reason == "MetricsUnavailable" and e.type == "Warning" for e in player.events)


def test_t5_push_reports_unavailable_and_retries_a_failed_report() -> None:
    name = "test-unavailable-push-failed-once"
    player = _started(new_trial(name, collector="Push"))
    player.set_run_status(job_status(("Complete", "True")))
    player.log.report(TrialKey("default", name), [UNAVAILABLE_ROW])
    player.log.failing_reports = 1
    player.reconcile()
    assert _shape(player) == [("Created", "True"), ("Running", "True")], "no status change"
    player.reconcile()
    assert _shape(player)[-1] == ("MetricsUnavailable", "True")
    assert _observation(player) == [
        {"name": "accuracy", "min": "unavailable", "max": "unavailable", "latest": "unavailable"}
    ]
    reports = [call for call in player.log.calls if call[0] == "report"]
    assert len(reports) == 3, "the test's own row, the failed report, the retried one"


def test_push_with_nothing_reported_is_not_awaited() -> None:
    player = _started(new_trial("p", collector="Push"))
    player.set_run_status(job_status(("Complete", "True")))
    player.reconcile()
    assert _shape(player)[-1] == ("MetricsUnavailable", "True")
    rows = player.log.get(TrialKey("default", "p"), ["accuracy"])
    assert [row.value for row in rows] == ["unavailable"]


def test_t6_an_empty_trial_is_refused_with_a_clear_condition() -> None:
    player = _started(
        {"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "metadata": {"name": "e"}}
    )
    failed = _condition(player, "Failed")
    assert failed.reason == "RunKindNotWatched"
    assert "spec.runSpec has no apiVersion and kind" in failed.message
    assert not player.runs


def test_metrics_that_never_arrive_end_metrics_unavailable_after_the_bounded_wait() -> None:
    """docs/katib-contract.md#trial-bugs #1795: Katib requeues such a Trial every second forever."""
    player = _started(new_trial("silent"), context=TrialContext(metrics_wait=60))
    player.set_run_status(job_status(("Complete", "True")))
    plan = player.reconcile()
    assert _shape(player)[-1] == ("Running", "True")
    assert "awaiting metrics" in _condition(player, "Running").message
    assert plan.actions[-1] == Requeue(1.0, "metrics are not reported yet")
    player.clock.advance(30)
    assert not any(isinstance(a, UpdateStatus) for a in player.reconcile().actions), (
        "no no-op write"
    )
    player.clock.advance(30)
    player.reconcile()
    assert _shape(player) == [
        ("Created", "True"),
        ("Running", "False"),
        ("MetricsUnavailable", "True"),
    ]
    message = _condition(player, "MetricsUnavailable").message
    assert "none were reported within 60s" in message and "metrics-collector-injection" in message


def test_metrics_that_arrive_during_the_wait_succeed() -> None:
    player = _started(new_trial("late"), context=TrialContext(metrics_wait=60))
    player.set_run_status(job_status(("Complete", "True")))
    player.reconcile()
    player.clock.advance(10)
    player.log.report(
        TrialKey("default", "late"), [MetricRow("2020-01-01T00:00:00Z", "accuracy", "0.5")]
    )
    player.reconcile()
    assert _shape(player)[-1] == ("Succeeded", "True")


def test_early_stopped_gets_its_completion_time_and_observation_before_the_job_goes() -> None:
    """docs/katib-contract.md#trial-bugs: Katib never sets completionTime here, and (#1377) deletes
    the job first."""
    player = _started(new_trial("es"))
    status = player.model.status.to_dict()
    status["conditions"].append(
        {
            "type": "EarlyStopped",
            "status": "True",
            "reason": "TrialEarlyStopped",
            "message": "Trial is early stopped",
        }
    )
    assert player.trial is not None
    player.trial["status"] = status
    player.log.report(
        TrialKey("default", "es"), [MetricRow("2020-01-01T00:00:00Z", "accuracy", "0.4")]
    )
    plan = player.reconcile()
    kinds = [type(a) for a in plan.actions if isinstance(a, UpdateStatus | Delete)]
    assert kinds == [UpdateStatus, Delete], "the observation is written before the Job is deleted"
    assert player.model.status.completion_time == player.clock.now()
    assert _observation(player)[0]["latest"] == "0.4"
    assert _shape(player)[-1] == ("EarlyStopped", "True")


def test_a_run_kind_that_is_not_watched_is_refused_before_anything_is_created() -> None:
    run = {**batch_job("tf"), "apiVersion": "kubeflow.org/v1", "kind": "TFJob"}
    player = _started(new_trial("tf", run=run))
    failed = _condition(player, "Failed")
    assert failed.reason == "RunKindNotWatched"
    assert (
        "TFJob.v1.kubeflow.org is not among katib-config's trialResources (Job.v1.batch)"
        in failed.message
    )
    assert not player.runs and player.model.status.completion_time is not None
    watched = TrialContext(watched=watched_kinds(["Job.v1.batch", "TFJob.v1.kubeflow.org"]))
    assert _shape(_started(new_trial("tf", run=run), context=watched))[-1] == ("Running", "True")


def test_a_job_that_disappears_while_running_is_recreated() -> None:
    player = _started(new_trial("gone"))
    player.runs.clear()
    plan = player.reconcile()
    assert any(isinstance(a, Create) for a in plan.actions) and "gone" in player.runs
    assert _shape(player)[-1] == ("Running", "True")


def test_retain_run_keeps_the_job_and_a_completed_trial_does_not_recreate_it() -> None:
    player = _started(new_trial("kept", retain=True))
    player.set_run_status(job_status(("Failed", "True")))
    player.settle()
    assert "kept" in player.runs
    player.runs.clear()
    player.settle()
    assert not player.runs


def test_a_job_of_the_trials_name_controlled_by_another_object_is_not_adopted() -> None:
    player = TrialPlayer(new_trial("taken"))
    foreign = batch_job("taken")
    foreign["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "kubeflow.org/v1beta1",
            "kind": "Trial",
            "name": "taken",
            "uid": "old",
            "controller": True,
        }
    ]
    foreign["status"] = job_status(("Complete", "True"))
    player.runs["taken"] = foreign
    player.settle()
    assert _shape(player) == [("Created", "True")]
    assert player.events[-1].reason == "RunOwnedElsewhere"
