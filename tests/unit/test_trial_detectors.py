"""The Trial lifecycle in the shared vocabulary: its rows, its ``Reported`` conditions and its
ordered detectors, as the Suggestion's and the Experiment's are."""

from __future__ import annotations

from datetime import UTC, datetime

from katib_resume.core.conditions import Status
from katib_resume.core.lifecycle import EXPERIMENT, SUGGESTION, TRIAL, TrialFacts, TrialSignals
from katib_resume.core.lifecycle.states import Report, StateTable
from katib_resume.core.lifecycle.trial import STATES, TrialState, condition_for, derive, mark
from katib_resume.core.plan.trial_effects import EFFECTS

T = TrialState
NOW = datetime(2026, 1, 1, tzinfo=UTC)
AWAITED = TrialFacts()  # neither guard of run_succeeded: the metrics are awaited
OBSERVED = TrialFacts(is_observation_available=True)


def test_every_trigger_but_the_early_stopping_services_has_a_detector_and_an_effect() -> None:
    detected = [d.trigger for d in TRIAL.detectors]
    assert set(TRIAL.triggers) - set(detected) == {"early_stopped"}
    assert set(EFFECTS) == set(detected)
    assert isinstance(STATES, StateTable)
    for lifecycle in (SUGGESTION, EXPERIMENT, TRIAL):
        assert lifecycle.detectors, f"{lifecycle.name} has no detectors"


def test_a_failed_run_wins_over_a_started_one() -> None:
    both = TrialSignals(failed=True, started=True)
    assert TRIAL.step(T.Created, both, AWAITED) == ("run_failed", T.Failed)


def test_a_succeeded_run_whose_metrics_are_awaited_starts_from_created_and_waits_when_running() -> (
    None
):
    awaited = TrialSignals(succeeded=True, started=True)
    assert TRIAL.step(T.Created, awaited, AWAITED) == ("run_started", T.Running)
    assert TRIAL.step(T.Running, awaited, AWAITED) == (None, T.Running)
    expired = TrialSignals(succeeded=True, started=True, wait_expired=True)
    assert TRIAL.step(T.Running, expired, AWAITED) == (
        "metrics_wait_expired",
        T.MetricsUnavailable,
    )
    assert TRIAL.step(T.Running, awaited, OBSERVED) == ("run_succeeded", T.Succeeded)


def test_only_a_pending_trial_is_created_without_a_signal() -> None:
    assert TRIAL.step(T.Pending, TrialSignals(), AWAITED) == ("created", T.Created)
    assert TRIAL.step(T.Created, TrialSignals(), AWAITED) == (None, T.Created)


def test_a_report_appends_the_job_reason_and_replaces_a_message_of_the_planners() -> None:
    running = mark(T.Running, mark(T.Created, (), NOW), NOW)
    report = Report(job_reason="DeadlineExceeded", message="none were reported")
    ended = mark(T.MetricsUnavailable, running, NOW, report)
    assert derive(ended) is T.MetricsUnavailable
    last = ended[-1]
    assert last.reason == "MetricsUnavailable. Job reason: DeadlineExceeded"
    assert last.message == "none were reported"
    assert ended[1].status is Status.FALSE
    refused = mark(T.Failed, running, NOW, Report(reason="RunKindNotWatched", message="why"))
    assert (refused[-1].reason, refused[-1].message) == ("RunKindNotWatched", "why")
    assert condition_for(T.Failed, "", "gone").message == "Trial has failed. Job message: gone"
