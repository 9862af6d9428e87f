"""Judging run objects with GJSON (docs/katib-contract.md#job-status-tests, job_util_test J1-J4, and
docs/katib-contract.md#trial-judging's rules)."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION
from katib_resume.core.run_status import RunOutcome, Verdict, default_conditions, judge, matches


def _job(failed: str, complete: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "test-job"},
        "status": {
            "succeeded": 1,
            "conditions": [
                {
                    "type": "Failed",
                    "status": failed,
                    "reason": "test-reason",
                    "message": "test-message",
                },
                {
                    "type": "Complete",
                    "status": complete,
                    "reason": "test-reason",
                    "message": "test-message",
                },
            ],
        },
    }


def _judge(
    job: dict[str, Any], success: str = JOB_SUCCESS_CONDITION, running: bool = False
) -> Verdict | None:
    return judge(job, success, JOB_FAILURE_CONDITION, running=running)


def test_j1_job_status_is_running() -> None:
    assert _judge(_job("False", "False")) == Verdict(RunOutcome.RUNNING)


def test_j2_succeeded_with_reason_and_message() -> None:
    assert _judge(_job("False", "True")) == Verdict(
        RunOutcome.SUCCEEDED, "test-reason", "test-message"
    )


def test_j3_failed_with_reason_and_message() -> None:
    assert _judge(_job("True", "False")) == Verdict(
        RunOutcome.FAILED, "test-reason", "test-message"
    )


def test_j4_succeeded_because_status_succeeded_is_one() -> None:
    verdict = _judge(_job("False", "False"), success="status.[@this].#(succeeded==1)")
    assert verdict == Verdict(RunOutcome.SUCCEEDED)


def test_a_running_trial_with_a_job_that_matches_nothing_gets_no_status() -> None:
    assert _judge(_job("False", "False"), running=True) is None


def test_failure_wins_when_both_match() -> None:
    verdict = _judge(_job("True", "True"))
    assert verdict is not None and verdict.outcome is RunOutcome.FAILED


def test_a_job_without_status_matches_nothing() -> None:
    """gjson-py raises on the missing ``status`` key; Go's library answers "no match"."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
    assert matches(job, JOB_SUCCESS_CONDITION) is None
    assert _judge(job) == Verdict(RunOutcome.RUNNING)
    assert _judge({"metadata": {}}) is None, "a run object without a name is not running"


@pytest.mark.parametrize("query", ["", "[[[", "status.nothing.#(x==1)"])
def test_empty_and_malformed_queries_never_match(query: str) -> None:
    assert matches(_job("True", "True"), query) is None


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"status": {"x": True}}, None),
        ({"status": {"x": 3}}, None),
        ({"status": {"x": "yes"}}, None),
        ({"status": {"x": None}}, None),
        ({"status": {"x": []}}, None),
        ({"status": {"x": [{"reason": "r"}]}}, {"reason": "r"}),
        ({"status": {"x": {"message": "m"}}}, {"message": "m"}),
    ],
)
def test_only_objects_and_non_empty_arrays_match(result: dict[str, Any], expected: object) -> None:
    assert matches(result, "status.x") == expected


def test_a_match_that_does_not_decode_is_no_status() -> None:
    job = {"metadata": {"name": "j"}, "status": {"x": [{"reason": 7}], "y": [1]}}
    assert judge(job, "status.y", "status.x", running=True) is None


def test_defaults_for_a_hand_made_job_trial() -> None:
    assert default_conditions("batch/v1", "Job") == (JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION)
    assert default_conditions("kubeflow.org/v1", "TFJob") == ("", "")
