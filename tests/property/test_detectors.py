"""The detectors against an oracle: which trigger one reconcile tries, in which order.

The oracles below are written by hand from the planners' documented priorities (the
Experiment's completion or restart first, then what the state waits for), independently of the
``DETECTORS`` lists: for every state, signals and facts, ``Lifecycle.step`` must fire what the
oracle's first moving candidate is, and never a trigger the graph does not allow.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.lifecycle import (
    EXPERIMENT,
    SUGGESTION,
    ExperimentFacts,
    ExperimentState,
    Lifecycle,
    SuggestionFacts,
    SuggestionState,
)
from katib_resume.core.lifecycle.suggestion import SuggestionSignals
from tests.property.test_lifecycle import exp_facts, sug_facts

St, X = SuggestionState, ExperimentState


def suggestion_candidates(state: SuggestionState, signals: SuggestionSignals) -> list[str]:
    if state is St.Succeeded:
        return [] if signals.experiment_completed else ["restart_requested"]
    if state in (St.Failed, St.Deleting):
        return []
    first = ["experiment_completed"] if signals.experiment_completed else []
    if state is St.Pending:
        return [*first, "created"]
    if signals.conflicted:
        blockable = state in (St.Created, St.Deploying, St.Running, St.Restarting)
        return [*first, "ownership_conflict_found"] if blockable else first
    follow = {
        St.Blocked: "ownership_conflict_resolved",
        St.Created: "deployment_requested",
        St.Restarting: "deployment_requested",
        St.Deploying: "deployment_became_available" if signals.available else None,
        St.Running: None if signals.available else "deployment_became_unavailable",
    }[state]
    return [*first, follow] if follow else first


def first_move(
    lifecycle: Lifecycle[Any], state: Any, candidates: list[str], facts: object
) -> tuple[str | None, Any]:
    for trigger in candidates:
        after = lifecycle.fire(state, trigger, facts)
        if after is not state:
            return trigger, after
    return None, state


signals = st.builds(
    SuggestionSignals,
    experiment_completed=st.booleans(),
    conflicted=st.booleans(),
    available=st.booleans(),
)


@given(st.sampled_from(SuggestionState), signals, sug_facts)
def test_the_suggestion_fires_the_oracles_first_moving_candidate(
    state: SuggestionState, seen: SuggestionSignals, facts: SuggestionFacts
) -> None:
    expected = first_move(SUGGESTION, state, suggestion_candidates(state, seen), facts)
    assert SUGGESTION.step(state, seen, facts) == expected


def experiment_candidates(state: ExperimentState, seen: SimpleNamespace) -> list[str]:
    if state is X.Pending:
        return ["created"]
    if state is X.Succeeded:
        return ["restart_requested"]
    if state is X.Failed:
        return []
    if seen.is_suggestion_failed:
        return ["suggestion_failed"]
    if not seen.has_trials:
        return []
    for name, trigger in (
        ("is_goal_reached", "goal_reached"),
        ("is_max_failed_trials_reached", "max_failed_trials_reached"),
        ("is_max_trials_reached", "max_trials_reached"),
        ("is_suggestion_end_reached", "suggestion_end_reached"),
    ):
        if getattr(seen, name):
            return [trigger]
    return ["trials_started"] if state is X.Created else []


outcomes = st.sampled_from(
    [None, "is_goal_reached", "is_max_failed_trials_reached", "is_max_trials_reached"]
)


@given(
    st.sampled_from(ExperimentState),
    st.booleans(),
    st.booleans(),
    st.tuples(outcomes, st.booleans()),
    exp_facts,
)
def test_the_experiment_fires_the_oracles_first_moving_candidate(
    state: ExperimentState,
    failed: bool,
    has_trials: bool,
    completion: tuple[str | None, bool],
    facts: ExperimentFacts,
) -> None:
    outcome, exhausted = completion  # one of Katib's first three rules; the service's "no more"
    flags = {
        name: has_trials and outcome == name
        for name in ("is_goal_reached", "is_max_failed_trials_reached", "is_max_trials_reached")
    }
    seen = SimpleNamespace(
        is_suggestion_failed=failed,
        has_trials=has_trials,
        is_suggestion_end_reached=has_trials and exhausted,
        **flags,
    )
    expected = first_move(EXPERIMENT, state, experiment_candidates(state, seen), facts)
    assert EXPERIMENT.step(state, seen, facts) == expected
