"""Judging a run object at the edges (``core/run_status.py``): a kind with no conditions to
judge by, and a match that is not an object (no status, never an error)."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION
from katib_resume.core.run_status import RunOutcome, Verdict, default_conditions, judge, matches

RUN = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "t"},
    "status": {"tags": ["done"], "phase": "Succeeded"},
}


def test_no_condition_matches_nothing_so_the_run_is_running() -> None:
    assert matches(RUN, "") is None
    assert judge(RUN, "", "", running=False) == Verdict(RunOutcome.RUNNING)
    assert judge(RUN, "", "", running=True) is None


def test_a_match_that_is_no_object_is_no_status() -> None:
    assert matches(RUN, "status.tags") == "done"
    assert judge(RUN, "status.tags", "", running=False) is None
    assert judge(RUN, "", "status.tags", running=False) is None


def test_a_condition_that_is_no_object_is_skipped_as_in_gos_gjson() -> None:
    """Go's gjson skips an array element that is not an object when a query names a field (so
    does the default conditions' reading); gjson-py would drop the whole array instead."""
    complete = {"type": "Complete", "status": "True", "reason": "Done", "message": ""}
    job = {"metadata": {"name": "j"}, "status": {"conditions": [None, 3, complete]}}
    assert matches(job, JOB_SUCCESS_CONDITION) == complete
    verdict = judge(job, JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION, running=True)
    assert verdict == Verdict(RunOutcome.SUCCEEDED, "Done")


def test_only_the_batch_job_has_default_conditions() -> None:
    assert default_conditions("batch/v1", "Job") == (JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION)
    assert default_conditions("example.com/v1", "Job") == ("", "")
    assert default_conditions("batch/v1", "CronJob") == ("", "")


def test_a_verdict_is_a_value() -> None:
    verdict = Verdict(RunOutcome.FAILED, "r", "m")
    assert hash(verdict) == hash(Verdict(RunOutcome.FAILED, "r", "m"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.reason = "other"  # type: ignore[misc]
