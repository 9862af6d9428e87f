"""What the planner needs from the suggestion service, at the edges (``core/plan/needs.py``):
an unanswered ``GetSuggestions`` is asked again after 5 s (docs/cluster.md), a Suggestion
that does not ask for assignments never waits for them, and no Suggestion needs nothing."""

from __future__ import annotations

from dataclasses import replace

from katib_resume.adapters.fake.clock import EPOCH
from katib_resume.core.actions import Requeue
from katib_resume.core.lifecycle.suggestion import SuggestionState
from katib_resume.core.plan import Plan, plan
from katib_resume.core.plan.needs import need, unanswered
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
