"""The two lifecycles against an oracle, as graphs, and through their condition round trip.

The oracle tables below are written by hand from docs/katib-contract.md#suggestion-sequences and
docs/katib-contract.md#experiment-sequences (plus our documented additions), independently of
``core.lifecycle``'s own tables: a change to either that the other does not share fails here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.conditions import Conditions, ConditionSpec, Status
from katib_resume.core.katib import (
    EXP_MAX_FAILED,
    EXP_MAX_TRIALS,
    SUG_DEPLOYMENT_NOT_READY,
    suggestion_failed,
)
from katib_resume.core.lifecycle import (
    EXPERIMENT,
    SUGGESTION,
    ExperimentFacts,
    ExperimentState,
    IllegalTransition,
    Lifecycle,
    Marks,
    SuggestionFacts,
    SuggestionState,
)
from katib_resume.core.lifecycle import experiment as exp_lc
from katib_resume.core.lifecycle import suggestion as sug_lc
from katib_resume.core.model import Suggestion

St = SuggestionState
X = ExperimentState
AnyLifecycle = Lifecycle[SuggestionState] | Lifecycle[ExperimentState]
LIVE = (St.Pending, St.Created, St.Deploying, St.Blocked, St.Running, St.Restarting)
SugRule = Callable[[SuggestionFacts], SuggestionState | None]


def _sug_oracle() -> dict[tuple[SuggestionState, str], SugRule]:
    oracle: dict[tuple[SuggestionState, str], SugRule] = {
        (St.Pending, "created"): lambda f: St.Created,
        (St.Created, "deployment_requested"): lambda f: St.Deploying,
        (St.Restarting, "deployment_requested"): lambda f: St.Deploying,
        (St.Blocked, "ownership_conflict_resolved"): lambda f: St.Deploying,
        (St.Deploying, "deployment_became_available"): lambda f: (
            St.Running if f.is_settings_valid else St.Failed if f.is_settings_invalid else None
        ),
        (St.Running, "deployment_became_unavailable"): lambda f: St.Deploying,
        (St.Succeeded, "restart_requested"): lambda f: St.Restarting if f.is_volume_kept else None,
    }
    for state in (St.Created, St.Deploying, St.Running, St.Restarting):
        oracle[(state, "ownership_conflict_found")] = lambda f: St.Blocked
    for state in LIVE:
        oracle[(state, "experiment_completed")] = lambda f: (
            St.Succeeded if f.is_service_released else None
        )
    for state in (*LIVE, St.Succeeded, St.Failed):
        oracle[(state, "deletion_requested")] = lambda f: St.Deleting
    return oracle


SUG_ORACLE = _sug_oracle()
EXP_ORACLE: dict[tuple[ExperimentState, str], Callable[[ExperimentFacts], ExperimentState | None]]
EXP_ORACLE = {
    (X.Pending, "created"): lambda f: X.Created,
    (X.Created, "trials_started"): lambda f: X.Running,
    (X.Succeeded, "restart_requested"): lambda f: (
        X.Running if f.is_restartable and f.has_budget else None
    ),
}
for _state in (X.Created, X.Running):
    EXP_ORACLE[(_state, "goal_reached")] = lambda f: X.Succeeded
    EXP_ORACLE[(_state, "max_trials_reached")] = lambda f: X.Succeeded
    EXP_ORACLE[(_state, "suggestion_end_reached")] = lambda f: X.Succeeded
    EXP_ORACLE[(_state, "max_failed_trials_reached")] = lambda f: X.Failed
    EXP_ORACLE[(_state, "suggestion_failed")] = lambda f: X.Failed

sug_facts = st.builds(
    SuggestionFacts,
    is_settings_valid=st.booleans(),
    is_settings_invalid=st.booleans(),
    is_service_released=st.booleans(),
    is_volume_kept=st.booleans(),
).filter(lambda f: not (f.is_settings_valid and f.is_settings_invalid))
exp_facts = st.builds(ExperimentFacts, is_restartable=st.booleans(), has_budget=st.booleans())


def agrees_with_oracle(
    lifecycle: AnyLifecycle,
    oracle: Mapping[tuple[Any, str], Callable[[Any], Any]],
    steps: list[tuple[str, Any]],
) -> None:
    """Fire ``steps`` from the initial state; every move is the oracle's, every gap is illegal."""
    state: Any = lifecycle.initial
    for trigger, facts in steps:
        rule = oracle.get((state, trigger))
        if rule is None:
            with pytest.raises(IllegalTransition):
                lifecycle.fire(state, trigger, facts)
            continue
        expected = rule(facts) or state
        state = lifecycle.fire(state, trigger, facts)
        assert state is expected


@given(st.lists(st.tuples(st.sampled_from(SUGGESTION.triggers), sug_facts), max_size=40))
def test_suggestion_machine_agrees_with_oracle(steps: list[tuple[str, SuggestionFacts]]) -> None:
    agrees_with_oracle(SUGGESTION, SUG_ORACLE, list(steps))


@given(st.lists(st.tuples(st.sampled_from(EXPERIMENT.triggers), exp_facts), max_size=40))
def test_experiment_machine_agrees_with_oracle(steps: list[tuple[str, ExperimentFacts]]) -> None:
    agrees_with_oracle(EXPERIMENT, EXP_ORACLE, list(steps))


def test_oracles_cover_every_compiled_transition() -> None:
    assert set(SUGGESTION.compiled) == set(SUG_ORACLE)
    assert set(EXPERIMENT.compiled) == set(EXP_ORACLE)


def _edges(lifecycle: AnyLifecycle) -> dict[Enum, set[Enum]]:
    edges: dict[Enum, set[Enum]] = {state: set() for state in lifecycle.states}
    for (source, _), branches in lifecycle.compiled.items():
        edges[source] |= {branch.dest for branch in branches}
    return edges


def _reachable(edges: dict[Enum, set[Enum]], start: Enum) -> set[Enum]:
    seen, todo = {start}, [start]
    while todo:
        for nxt in edges[todo.pop()] - seen:
            seen.add(nxt)
            todo.append(nxt)
    return seen


@pytest.mark.parametrize("lifecycle", [SUGGESTION, EXPERIMENT], ids=lambda lc: lc.name)
def test_every_state_is_reachable(lifecycle: AnyLifecycle) -> None:
    assert _reachable(_edges(lifecycle), lifecycle.initial) == set(lifecycle.states)


TERMINAL: dict[str, set[Enum]] = {"Suggestion": {St.Failed, St.Deleting}, "Experiment": {X.Failed}}
RESTARTABLE: dict[str, dict[Enum, Enum]] = {
    "Suggestion": {St.Succeeded: St.Restarting},
    "Experiment": {X.Succeeded: X.Running},
}


@pytest.mark.parametrize("lifecycle", [SUGGESTION, EXPERIMENT], ids=lambda lc: lc.name)
def test_no_trap_states_and_completion_leaves_only_by_restart(
    lifecycle: AnyLifecycle,
) -> None:
    edges = _edges(lifecycle)
    terminal = TERMINAL[lifecycle.name]
    restart = RESTARTABLE[lifecycle.name]
    for state in lifecycle.states:
        if state in terminal:
            assert edges[state] <= {St.Deleting}, f"{state} must be terminal"
            continue
        reach = _reachable(edges, state)
        assert reach & (terminal | set(restart)), f"{state} is a trap"
    for done, again in restart.items():
        assert edges[done] - {St.Deleting} == {again}


NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
MARKS = Marks(
    waiting=SUG_DEPLOYMENT_NOT_READY,
    blocked=ConditionSpec("DeploymentReady", Status.FALSE, "OwnershipConflict", "x"),
    succeeded=ConditionSpec("Succeeded", Status.TRUE, "Experiment is succeeded", "m"),
    failed=suggestion_failed("bad settings"),
)
_SUG_PATHS = st.lists(st.sampled_from(SUGGESTION.triggers), max_size=30)


def _suggestion(conditions: Conditions) -> Suggestion:
    return Suggestion.model_validate(
        {
            "metadata": {"name": "s", "namespace": "ns"},
            "spec": {"algorithm": {"algorithmName": "random"}},
            "status": {"conditions": [c.to_dict() for c in conditions]},
        }
    )


@given(_SUG_PATHS, st.data())
def test_suggestion_state_round_trips_through_conditions(
    triggers: list[str], data: st.DataObject
) -> None:
    state, now = St.Pending, NOW
    conditions: Conditions = ()
    for trigger in triggers:
        if trigger == "deletion_requested" or not SUGGESTION.allows(state, trigger):
            continue
        after = SUGGESTION.fire(state, trigger, data.draw(sug_facts))
        now += timedelta(seconds=1)
        if after is not state:
            conditions = sug_lc.mark(after, conditions, MARKS, now)
            state = after
        assert sug_lc.derive(_suggestion(conditions)) is state
        assert sug_lc.mark(state, conditions, MARKS, now + timedelta(1)) == conditions or (
            state is St.Failed
        )
        assert len({c.type for c in conditions}) == len(conditions)


@given(st.lists(st.sampled_from(EXPERIMENT.triggers), max_size=30), st.data())
def test_experiment_state_round_trips_through_conditions(
    triggers: list[str], data: st.DataObject
) -> None:
    state, now = X.Pending, NOW
    conditions: Conditions = ()
    for trigger in triggers:
        if not EXPERIMENT.allows(state, trigger):
            continue
        after = EXPERIMENT.fire(state, trigger, data.draw(exp_facts))
        now += timedelta(seconds=1)
        if after is not state:
            done = EXP_MAX_FAILED if after is X.Failed else EXP_MAX_TRIALS
            conditions = exp_lc.mark(after, conditions, now, done)
            state = after
        assert exp_lc.derive(conditions) is state
        assert len({c.type for c in conditions}) == len(conditions)
