"""The Trial table as a graph: every walk marks conditions that derive back to its state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.conditions import Conditions, Status
from katib_resume.core.katib_trial import TrialCondition as C
from katib_resume.core.lifecycle import TRIAL, TrialFacts
from katib_resume.core.lifecycle.trial import COMPLETED, TrialState, derive, mark

START = datetime(2026, 1, 1, tzinfo=UTC)
TERMINAL_TYPES = (C.SUCCEEDED, C.FAILED, C.METRICS_UNAVAILABLE, C.EARLY_STOPPED)

facts = st.builds(TrialFacts, st.booleans(), st.booleans())


def _invariants(conditions: Conditions, state: TrialState) -> None:
    types = [c.type for c in conditions]
    assert len(types) == len(set(types)), "a condition type appears twice"
    terminal = [c.type for c in conditions if c.type in TERMINAL_TYPES]
    assert all(c.status is Status.TRUE for c in conditions if c.type in TERMINAL_TYPES)
    assert len(terminal) <= 1, "two completions"
    if state in COMPLETED:
        assert conditions[-1].type == state.value, "the printer column shows the completion"
    elif conditions:
        assert conditions[-1].type == state.value


@given(st.lists(st.tuples(st.sampled_from(TRIAL.triggers), facts), max_size=12))
def test_derive_reads_back_every_marked_state(steps: list[tuple[str, TrialFacts]]) -> None:
    state: TrialState = TRIAL.initial
    conditions: Conditions = ()
    for minute, (trigger, fact) in enumerate(steps):
        if not TRIAL.allows(state, trigger):
            continue
        after = TRIAL.fire(state, trigger, fact)
        conditions = mark(after, conditions, START + timedelta(minutes=minute))
        assert derive(conditions) is after
        _invariants(conditions, after)
        state = after


@given(st.sampled_from(list(TrialState)), st.integers(0, 3))
def test_mark_is_idempotent(state: TrialState, times: int) -> None:
    conditions: Conditions = ()
    for _ in range(times + 1):
        again = mark(state, conditions, START)
        if conditions:
            assert again == conditions
        conditions = again
    assert derive(conditions) is state
