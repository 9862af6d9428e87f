"""A succeeded run's metrics at the edges (``core/plan/trial_metrics.py``): the wait starts
when the run succeeds (not when the Trial started running), a Job already complete at creation
leaves Created as Katib writes it, a stored observation decides when the log has no rows, and an
unreadable row is told."""

from __future__ import annotations

from typing import Any

from katib_resume.core.actions import RecordEvent
from katib_resume.core.observation import MetricRow
from katib_resume.core.plan.trial import TrialContext, decide_trial
from katib_resume.core.plan.trial_metrics import wait_expired
from tests.support.trial_player import TrialPlayer
from tests.support.trials import batch_job, job_status, new_trial

AWAITING = "Trial is running: its run has succeeded, awaiting metrics"


def _condition(player: TrialPlayer, type_: str) -> Any:
    return next(c for c in player.model.status.conditions if c.type == type_)


def test_the_wait_starts_when_the_run_succeeds() -> None:
    player = TrialPlayer(new_trial("t"), context=TrialContext(metrics_wait=60))
    player.settle()
    player.clock.advance(600)
    player.set_run_status(job_status(("Complete", "True")))
    player.reconcile()
    running = _condition(player, "Running")
    assert (running.status, running.message) == ("True", AWAITING)
    assert running.last_update_time == player.clock.now()


def test_a_job_complete_at_creation_leaves_created_as_written() -> None:
    player = TrialPlayer(new_trial("t"))
    player.runs["t"] = {**batch_job("t"), "status": job_status(("Complete", "True"))}
    for _ in range(3):  # the finalizer, Created, then the Job decides
        player.reconcile()
    created = _condition(player, "Created")
    assert created.message == "Trial is created"
    assert _condition(player, "Running").message == AWAITING


def test_a_stored_observation_decides_when_the_log_has_no_rows() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    assert player.trial is not None
    metric = {"name": "accuracy", "min": "0.5", "max": "0.5", "latest": "0.5"}
    player.trial["status"]["observation"] = {"metrics": [metric]}
    player.set_run_status(job_status(("Complete", "True")))
    player.reconcile()
    assert player.model.status.conditions[-1].type == "Succeeded"


def test_an_unreadable_row_is_told_and_counts_as_none() -> None:
    player = TrialPlayer(new_trial("t"))
    player.settle()
    player.set_run_status(job_status(("Complete", "True")))
    rows = [MetricRow("yesterday", "accuracy", "1")]
    plan = decide_trial(player.model, player.runs["t"], rows, TrialContext(), player.clock.now())
    told = [(a.type, a.reason, a.message) for a in plan.actions if isinstance(a, RecordEvent)]
    assert told == [
        (
            "Warning",
            "ObservationUnreadable",
            "failed to parse timestamps 'yesterday': not RFC 3339 with a zone",
        )
    ]


def test_the_expired_wait_says_why_and_what_usually_causes_it() -> None:
    assert wait_expired(90) == (
        "Metrics are not available: none were reported within 90s after the run succeeded "
        "(is the namespace labelled katib.kubeflow.org/metrics-collector-injection=enabled, "
        "and did the metrics collector reach katib-db-manager?)"
    )
