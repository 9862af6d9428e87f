"""What the planner needs from the suggestion service, at the edges (``core/plan/needs.py``):
an unanswered ``GetSuggestions`` is asked again after 5 s (docs/cluster.md), a Suggestion
that does not ask for assignments never waits for them, and no Suggestion needs nothing."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import pytest

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Requeue
from katib_resume.core.lifecycle.suggestion import SuggestionState
from katib_resume.core.plan import Plan, plan
from katib_resume.core.plan.needs import (
    NeedAssignments,
    NeedValidation,
    need,
    unanswered,
    wanted_assignments,
)
from tests.support.harness import shipped_config
from tests.unit.test_provision import experiment, observed, suggestion


def test_an_unanswered_request_is_asked_again_after_five_seconds() -> None:
    state = observed(experiment(), suggestion(3, 0), [], assignments=())
    decided = plan(state, shipped_config(), EPOCH)
    assert isinstance(decided, Plan)
    assert decided.actions[-1] == Requeue(5.0, "the suggestion service gave no assignments")


def test_only_a_state_that_asks_for_assignments_waits_for_them() -> None:
    state = observed(experiment(), suggestion(3, 0), [], assignments=())
    assert unanswered(state, SuggestionState.Running)
    assert not unanswered(state, SuggestionState.Deploying)
    assert not unanswered(state, SuggestionState.Succeeded)


def test_no_suggestion_needs_nothing() -> None:
    state = replace(observed(experiment(), suggestion(3, 0), []), suggestion=None)
    assert need(state, SuggestionState.Running) is None
    assert not unanswered(state, SuggestionState.Running)


def test_a_request_is_unanswered_only_when_asked_and_short() -> None:
    asked = observed(experiment(), suggestion(3, 2), [], assignments=())
    assert unanswered(asked, SuggestionState.Running)
    assert not unanswered(replace(asked, assignments=None), SuggestionState.Running)
    full = observed(experiment(), suggestion(3, 3), [], assignments=())
    assert not unanswered(full, SuggestionState.Running)
    assert wanted_assignments(full, full.suggestion, SuggestionState.Running) == 0  # type: ignore[arg-type]
    assert need(full, SuggestionState.Running) is None


def test_a_need_is_a_value() -> None:
    state = observed(experiment(), suggestion(3, 0), [])
    asked = need(state, SuggestionState.Running)
    assert asked == NeedAssignments(state.suggestion, 3)  # type: ignore[arg-type]
    for value in (asked, NeedValidation(state.suggestion)):  # type: ignore[arg-type]
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.suggestion = None  # type: ignore[misc,assignment]
