"""The planner's answer (``core/plan/result.py``): a step moved only when its states differ,
both answers are frozen values, and a trigger read as Katib's event reason."""

from __future__ import annotations

import dataclasses

import pytest

from katib_resume.core.lifecycle.trial import TrialState
from katib_resume.core.plan.result import Plan, Step, event_reason

T = TrialState


def test_a_step_moved_only_between_two_states() -> None:
    assert Step(T.Created, T.Running, "run_started").moved
    assert not Step(T.Running, T.Running).moved


def test_steps_and_plans_are_values() -> None:
    step = Step(T.Pending, T.Created, "created")
    plan = Plan((), step)
    assert hash(plan) == hash(Plan((), Step(T.Pending, T.Created, "created")))
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.trigger = None  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.actions = ()  # type: ignore[misc]


def test_a_trigger_reads_as_an_event_reason() -> None:
    assert event_reason("restart_requested") == "RestartRequested"
    assert event_reason("created") == "Created"
