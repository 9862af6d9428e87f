"""``core.admission``: the one admission step every way in calls, and the restart it promises."""

from __future__ import annotations

from typing import Any

import pytest

from katib_resume.core.admission import NO_VOLUMES, admit, restarts
from katib_resume.core.defaults import default_experiment
from katib_resume.core.denied import Denied
from katib_resume.core.model import Experiment
from tests.unit.test_validation import (
    FAILED,
    SUCCEEDED_GOAL,
    SUCCEEDED_MAX_TRIALS,
    FakeCatalog,
    fake_instance,
)

RUNNING = {"type": "Running", "status": "True", "reason": "ExperimentRunning"}


def test_an_admitted_create_comes_back_defaulted() -> None:
    admitted = admit(fake_instance(), catalog=FakeCatalog(), existing_pvs=NO_VOLUMES)
    assert admitted.spec.parallel_trial_count == 3 and admitted.spec.resume_policy == "Never"


def test_a_denied_create_carries_katibs_message_and_the_decision() -> None:
    with pytest.raises(Denied) as denied:
        admit(fake_instance(maxTrialCount=0), catalog=FakeCatalog(), existing_pvs=NO_VOLUMES)
    assert str(denied.value) == (
        "[spec.maxTrialCount: Invalid value: 0: must be greater than 0, "
        "spec.parallelTrialCount: Invalid value: 3: should be less than or equal to "
        "spec.maxTrialCount]"
    )
    assert not denied.value.decision.allowed


def test_defaults_come_first_as_the_mutating_webhook_runs_first() -> None:
    """Unset ``parallelTrialCount`` is 3 by the time the validator looks, so a budget of 2 is
    refused on the command line as on a cluster, and by the validating webhook whether or not
    the mutating one ran first (defaulting twice is defaulting once)."""
    small = fake_instance(maxTrialCount=2)
    for given in (small, default_experiment(small)):
        with pytest.raises(Denied, match=r"spec\.parallelTrialCount: Invalid value: 3: should be"):
            admit(given, catalog=FakeCatalog(), existing_pvs=NO_VOLUMES)


def test_the_stale_pv_rule_reads_the_volumes_the_caller_gives() -> None:
    new = fake_instance(resumePolicy="FromVolume")
    with pytest.raises(Denied, match="PV: fake-test-fakens is not deleted"):
        admit(new, catalog=FakeCatalog(), existing_pvs={"fake-test-fakens"})
    assert admit(new, catalog=FakeCatalog(), existing_pvs=NO_VOLUMES).spec.resume_policy


def completed(conditions: tuple[dict[str, str], ...], **spec: Any) -> Experiment:
    return fake_instance(conditions=conditions, trials=6, **spec)


@pytest.mark.parametrize(
    ("policy", "conditions", "budget", "expected"),
    [
        ("LongRunning", (SUCCEEDED_MAX_TRIALS,), 12, True),
        ("FromVolume", (SUCCEEDED_MAX_TRIALS,), None, True),  # unset: no limit
        ("FromVolume", (SUCCEEDED_MAX_TRIALS,), 6, False),  # not above the Trials made
        ("Never", (SUCCEEDED_MAX_TRIALS,), 12, False),
        ("LongRunning", (SUCCEEDED_GOAL,), 12, False),
        ("LongRunning", (FAILED,), 12, False),
        ("LongRunning", (RUNNING,), 12, False),  # still running: nothing to restart
    ],
)
def test_restarts_is_the_controllers_guard(
    policy: str, conditions: tuple[dict[str, str], ...], budget: int | None, expected: bool
) -> None:
    old = completed(conditions, resumePolicy=policy)
    new = completed(conditions, resumePolicy=policy, maxTrialCount=budget)
    assert restarts(old, new) is expected
