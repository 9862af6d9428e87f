"""Edges of trial accounting that nothing else held (``python -m tools.mutate --module
core/trials.py``): the restart guard's "no maxTrialCount is budget", and ``counts_match``,
the steady reconcile's shortcut, which must say True exactly when the status already holds
every trial field as ``replace_status_counts`` would write it."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.core.model.experiment import ExperimentSpec, ExperimentStatus
from katib_resume.core.trial_phases import COMPLETED_STATUS_KEYS
from katib_resume.core.trials import (
    TrialCounts,
    counts_match,
    has_budget,
    replace_status_counts,
    status_counts,
)

COUNTS = TrialCounts(
    killed_trials=("k",),
    failed_trials=("f1", "f2"),
    succeeded_trials=("s1", "s2", "s3"),
    early_stopped_trials=("e",),
    running_trials=("r1", "r2"),
    metrics_unavailable_trials=("m",),
    pending_trials=("p",),
)
"""Every phase, each with a count of its own, so that a swapped counter shows."""


def _spec(max_trials: int | None) -> ExperimentSpec:
    raw: dict[str, Any] = {"algorithm": {"algorithmName": "random"}}
    if max_trials is not None:
        raw["maxTrialCount"] = max_trials
    return ExperimentSpec.model_validate(raw)


def test_no_max_trial_count_always_leaves_budget() -> None:
    assert has_budget(_spec(None), 0) and has_budget(_spec(None), 10_000)
    assert has_budget(_spec(3), 2) and not has_budget(_spec(3), 3)


def _status(**fields: Any) -> ExperimentStatus:
    return ExperimentStatus.model_validate(fields)


def test_a_status_written_from_the_counts_matches_them() -> None:
    written = replace_status_counts({"startTime": "2026-01-01T00:00:00Z"}, COUNTS)
    assert counts_match(_status(**written), COUNTS)


@pytest.mark.parametrize(
    "key",
    [
        "trials",
        "trialsSucceeded",
        "trialsFailed",
        "trialsKilled",
        "trialsPending",
        "trialsRunning",
        "trialsEarlyStopped",
        "trialMetricsUnavailable",
    ],
)
def test_one_counter_off_does_not_match(key: str) -> None:
    written = replace_status_counts({}, COUNTS)
    counter = written[key]
    assert isinstance(counter, int)
    assert not counts_match(_status(**{**written, key: counter + 1}), COUNTS)
    missing = {k: v for k, v in written.items() if k != key}
    assert not counts_match(_status(**missing), COUNTS)


def test_a_stale_or_missing_list_does_not_match() -> None:
    written = replace_status_counts({}, COUNTS)
    assert not counts_match(_status(**{**written, "succeededTrialList": ["s1"]}), COUNTS)
    fewer = TrialCounts(succeeded_trials=("s1",))
    assert not counts_match(_status(**replace_status_counts({}, COUNTS)), fewer)


def test_the_status_fields_have_katibs_names() -> None:
    assert status_counts(COUNTS) == {
        "trials": 11,
        "trialsSucceeded": 3,
        "trialsFailed": 2,
        "trialsKilled": 1,
        "trialsPending": 1,
        "trialsRunning": 2,
        "trialsEarlyStopped": 1,
        "trialMetricsUnavailable": 1,
        "succeededTrialList": ["s1", "s2", "s3"],
        "failedTrialList": ["f1", "f2"],
        "killedTrialList": ["k"],
        "pendingTrialList": ["p"],
        "runningTrialList": ["r1", "r2"],
        "earlyStoppedTrialList": ["e"],
        "metricsUnavailableTrialList": ["m"],
    }


def test_a_list_that_emptied_is_removed_from_the_status() -> None:
    old = replace_status_counts({"startTime": "t"}, COUNTS)
    new = replace_status_counts(old, TrialCounts(succeeded_trials=("s1",)))
    assert new == {
        "startTime": "t",
        **status_counts(TrialCounts(succeeded_trials=("s1",))),
    }
    assert "failedTrialList" not in new and "pendingTrialList" not in new


def test_the_completed_counters_are_those_of_the_trials_that_will_not_run_again() -> None:
    """What ``katib-resume run`` adds up to report the Trials completed."""
    assert set(COMPLETED_STATUS_KEYS) == {
        "trialsSucceeded",
        "trialsFailed",
        "trialsKilled",
        "trialsEarlyStopped",
        "trialMetricsUnavailable",
    }


def test_stale_lists_of_every_empty_phase_do_not_match() -> None:
    """Counters right, but each phase that has no Trial now still lists old ones."""
    fewer = TrialCounts(succeeded_trials=("s1",))
    stale = {
        key: value
        for key, value in status_counts(COUNTS).items()
        if key.endswith("List") and key != "succeededTrialList"
    }
    status = _status(**{**replace_status_counts({}, fewer), **stale})
    assert not counts_match(status, fewer)
