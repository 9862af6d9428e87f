"""The trial planner's edges (docs/katib-contract.md#trial-controller): Katib's exact Job Events,
which conditions judge a run, when the shell fetches the observation, a deleted Trial without the
finalizer, a run object already being deleted, and a run object another object controls."""

from __future__ import annotations

from typing import Any

from katib_resume.core.actions import Delete, RecordEvent, Requeue
from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import MetricRow, TrialKey
from katib_resume.core.plan.trial import TrialContext, conditions_of, wants_observation
from tests.support.trial_player import TrialPlayer
from tests.support.trials import batch_job, job_status, new_trial

ROW = MetricRow("2020-01-01T00:00:00Z", "accuracy", "1")


def _events(player: TrialPlayer) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in player.events]


def _trial(**spec: Any) -> Trial:
    raw = new_trial("t")
    raw["spec"].pop("successCondition")
    raw["spec"].pop("failureCondition")
    raw["spec"].update(spec)
    return Trial.model_validate(raw)


def test_the_job_is_created_and_deleted_with_katibs_normal_events() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.log.report(TrialKey("default", "t"), [ROW])
    player.set_run_status(job_status(("Complete", "True")))
    player.settle()
    assert not player.runs
    created, deleted = player.events[0], player.events[-1]
    assert (created.type, created.reason, created.message) == (
        "Normal",
        "JobCreated",
        "Job t has been created",
    )
    assert (deleted.type, deleted.reason, deleted.message) == (
        "Normal",
        "JobDeleted",
        "Job t has been deleted",
    )


def test_a_run_object_being_deleted_is_not_deleted_again() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.set_run_status(job_status(("Failed", "True")))
    player.reconcile()
    player.runs["t"]["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z"
    plan = player.reconcile()
    assert not any(isinstance(a, Delete | RecordEvent) for a in plan.actions)
    del player.runs["t"]["metadata"]["deletionTimestamp"]
    plan = player.reconcile()
    assert [a.ref.name for a in plan.actions if isinstance(a, Delete)] == ["t"]


def test_a_run_object_of_another_owner_is_told_and_looked_at_again_later() -> None:
    player = TrialPlayer(new_trial("taken"), context=TrialContext(poll=2.0))
    foreign = batch_job("taken")
    foreign["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Trial", "name": "taken", "uid": "old", "controller": True}
    ]
    player.runs["taken"] = foreign
    player.settle()
    plan = player.reconcile()
    assert _events(player)[-1] == (
        "Warning",
        "RunOwnedElsewhere",
        "Job taken is controlled by old: not adopted",
    )
    assert plan.actions[-1] == Requeue(10.0, "run object of another owner")


def test_the_trials_own_conditions_judge_else_the_batch_jobs_defaults() -> None:
    assert conditions_of(_trial(successCondition="status.ok")) == ("status.ok", "")
    assert conditions_of(_trial(failureCondition="status.bad")) == ("", "status.bad")
    assert conditions_of(_trial()) == (JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION)
    other = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "t"}}
    assert conditions_of(_trial(runSpec=other)) == ("", "")


def test_the_observation_is_fetched_only_for_a_live_trial_whose_run_succeeded() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.set_run_status(job_status(("Complete", "True")))
    run = player.runs["t"]
    assert wants_observation(player.model, run)
    assert not wants_observation(player.model, None)
    player.delete_trial(player.clock.now())
    assert not wants_observation(player.model, run)
    player.trial = new_trial("t")
    player.settle()
    player.log.report(TrialKey("default", "t"), [ROW])
    player.set_run_status(job_status(("Complete", "True")))
    player.reconcile()
    assert player.model.status.conditions[-1].type == "Succeeded"
    assert not wants_observation(player.model, player.runs["t"]), "a completed Trial: no fetch"


def test_a_deleted_trial_without_the_finalizer_is_left_alone() -> None:
    player = TrialPlayer(new_trial("t"))
    player.delete_trial(player.clock.now())
    assert player.reconcile().actions == ()
    assert player.log.calls == []
