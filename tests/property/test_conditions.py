"""Condition semantics: Katib's ordering plus Kubernetes' guarantees, for any sequence of sets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.conditions import (
    Conditions,
    ConditionSpec,
    Status,
    find,
    remove_condition,
    renew_condition,
    set_all,
    set_condition,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
specs = st.builds(
    ConditionSpec,
    type=st.sampled_from(["Created", "Running", "Succeeded", "Failed", "DeploymentReady"]),
    status=st.sampled_from(list(Status)),
    reason=st.sampled_from(["A", "B", "Experiment is succeeded"]),
    message=st.sampled_from(["m1", "m2"]),
)
ops = st.lists(st.one_of(specs, st.sampled_from(["Running", "Succeeded"])), max_size=30)


@given(ops)
def test_any_sequence_keeps_kubernetes_semantics(steps: list[ConditionSpec | str]) -> None:
    conditions: Conditions = ()
    for i, step in enumerate(steps):
        now = T0 + timedelta(seconds=i + 1)
        if isinstance(step, str):
            after = remove_condition(conditions, step)
            assert find(after, step) is None
            assert [c for c in conditions if c.type != step] == list(after)
            conditions = after
            continue
        old = find(conditions, step.type)
        after = set_condition(conditions, step, now)
        new = find(after, step.type)
        assert new is not None and step.matches(new)
        assert len({c.type for c in after}) == len(after), "no type appears twice"
        if step.matches(old):
            assert after is conditions, "an identical set is a no-op"
        elif old is not None and old.status == step.status:
            assert new.last_transition_time == old.last_transition_time
        else:
            assert new.last_transition_time == now
        if old is None or (old.status, old.reason) != (step.status, step.reason):
            assert after[-1] is new, "a new or changed condition is appended (Katib's order)"
        conditions = after


@given(st.lists(specs, max_size=8), specs)
def test_renewing_sets_both_times_in_place_and_leaves_the_rest(
    before: list[ConditionSpec], want: ConditionSpec
) -> None:
    conditions = set_all((), before, T0)
    now = T0 + timedelta(seconds=5)
    after = renew_condition(conditions, want, now)
    new = find(after, want.type)
    assert new is not None and want.matches(new)
    assert new.last_transition_time == now and new.last_update_time == now
    assert [c.type for c in after] == [c.type for c in conditions] + (
        [] if find(conditions, want.type) else [want.type]
    ), "in place if present, appended if not"
    assert [c for c in after if c.type != want.type] == [
        c for c in conditions if c.type != want.type
    ]
