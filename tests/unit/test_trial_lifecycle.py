"""The Trial lifecycle's table, its condition shapes (docs/katib-contract.md#trial-sequences) and
Katib's suffixes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from katib_resume.core.conditions import Conditions, Status
from katib_resume.core.katib_trial import TrialCondition as C
from katib_resume.core.lifecycle import LIFECYCLES, TRIAL, IllegalTransition, TrialFacts
from katib_resume.core.lifecycle.trial import TrialState, condition_for, derive, mark
from katib_resume.core.trial_phases import TrialPhase

T = TrialState
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _walk(*states: TrialState) -> Conditions:
    conditions: Conditions = ()
    for state in states:
        conditions = mark(state, conditions, NOW)
    return conditions


def _shape(conditions: Conditions) -> list[tuple[str, str]]:
    return [(c.type, c.status.value) for c in conditions]


@pytest.mark.parametrize(
    ("end", "shape"),
    [
        (T.Succeeded, [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]),
        (T.Failed, [("Created", "True"), ("Running", "False"), ("Failed", "True")]),
        (
            T.MetricsUnavailable,
            [("Created", "True"), ("Running", "False"), ("MetricsUnavailable", "True")],
        ),
        (T.EarlyStopped, [("Created", "True"), ("Running", "True"), ("EarlyStopped", "True")]),
    ],
)
def test_katib_condition_shapes(end: TrialState, shape: list[tuple[str, str]]) -> None:
    conditions = _walk(T.Created, T.Running, end)
    assert _shape(conditions) == shape
    assert derive(conditions) is end


def test_running_keeps_its_reason_and_message_when_it_stops() -> None:
    conditions = _walk(T.Created, T.Running, T.Succeeded)
    running = next(c for c in conditions if c.type == C.RUNNING)
    assert (running.status, running.reason, running.message) == (
        Status.FALSE,
        "TrialRunning",
        "Trial is running",
    )


def test_created_and_running_are_katibs_strings() -> None:
    created, running = _walk(T.Created, T.Running)
    assert (created.reason, created.message) == ("TrialCreated", "Trial is created")
    assert (running.reason, running.message) == ("TrialRunning", "Trial is running")


def test_a_complete_job_seen_at_creation_ends_without_running() -> None:
    """docs/katib-contract.md#trial-controller-tests T4: an already-complete run object; no Running
    condition to stop."""
    conditions = _walk(T.Created, T.MetricsUnavailable)
    assert _shape(conditions) == [("Created", "True"), ("MetricsUnavailable", "True")]


def test_job_reason_and_message_are_suffixed() -> None:
    spec = condition_for(T.Failed, "BackoffLimitExceeded", "Job has reached the backoff limit")
    assert spec.reason == "TrialFailed. Job reason: BackoffLimitExceeded"
    assert spec.message == "Trial has failed. Job message: Job has reached the backoff limit"
    assert condition_for(T.Succeeded).reason == "TrialSucceeded"


def test_pending_is_written_as_no_condition() -> None:
    with pytest.raises(ValueError, match="no condition"):
        condition_for(T.Pending)
    assert mark(T.Pending, (), NOW) == ()


def test_run_succeeded_waits_when_neither_guard_holds() -> None:
    assert TRIAL.fire(T.Running, "run_succeeded", TrialFacts()) is T.Running
    available = TrialFacts(is_observation_available=True)
    assert TRIAL.fire(T.Running, "run_succeeded", available) is T.Succeeded
    missing = TrialFacts(is_objective_unavailable=True)
    assert TRIAL.fire(T.Created, "run_succeeded", missing) is T.MetricsUnavailable


@pytest.mark.parametrize("state", [T.Succeeded, T.Failed, T.MetricsUnavailable, T.EarlyStopped])
def test_completed_states_are_terminal(state: TrialState) -> None:
    for trigger in TRIAL.triggers:
        assert not TRIAL.allows(state, trigger)
    with pytest.raises(IllegalTransition):
        TRIAL.fire(state, "run_failed", TrialFacts())


def test_the_trial_lifecycle_is_listed_for_the_diagram_command() -> None:
    assert LIFECYCLES["trial"] is TRIAL


@pytest.mark.parametrize(
    ("state", "phase"),
    [
        (T.Pending, TrialPhase.PENDING),
        (T.Created, TrialPhase.PENDING),
        (T.Running, TrialPhase.RUNNING),
        (T.Succeeded, TrialPhase.SUCCEEDED),
        (T.Failed, TrialPhase.FAILED),
        (T.MetricsUnavailable, TrialPhase.METRICS_UNAVAILABLE),
        (T.EarlyStopped, TrialPhase.EARLY_STOPPED),
    ],
)
def test_the_experiment_counts_a_trial_in_the_phase_of_its_state(
    state: TrialState, phase: TrialPhase
) -> None:
    from katib_resume.core.model.meta import ObjectMeta
    from katib_resume.core.model.trial import Trial, TrialStatus
    from katib_resume.core.trials import classify

    path = {
        T.Pending: (),
        T.Created: (T.Created,),
        T.Running: (T.Created, T.Running),
    }.get(state, (T.Created, T.Running, state))
    trial = Trial(metadata=ObjectMeta(name="t"), status=TrialStatus(conditions=_walk(*path)))
    assert classify(trial) is phase


def test_the_diagram_command_draws_the_trial_lifecycle(capsys: pytest.CaptureFixture[str]) -> None:
    from katib_resume.app.cli.main import main

    assert main(["diagram", "trial"]) == 0
    drawn = capsys.readouterr().out
    assert drawn == TRIAL.diagram()
    assert "Running --> MetricsUnavailable: run_succeeded [is_objective_unavailable]" in drawn
