"""Katib's condition sequences produced by the set/remove rules
(docs/katib-contract.md#condition-rules, docs/katib-contract.md#suggestion-sequences)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from katib_resume.core.conditions import Conditions, ConditionSpec, Status, set_all, set_condition
from katib_resume.core.katib import (
    MSG_CAN_RESTART_FROM_VOLUME,
    SUG_CREATED,
    SUG_DEPLOYMENT_NOT_READY,
    SUG_DEPLOYMENT_READY,
    SUG_RUNNING,
    SUG_RUNNING_STOPPED,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def kinds(conditions: Conditions) -> list[tuple[str, str]]:
    return [(c.type, c.status.value) for c in conditions]


def test_first_run_sequence() -> None:
    conditions = set_all((), [SUG_CREATED, SUG_DEPLOYMENT_NOT_READY], T0)
    assert kinds(conditions) == [("Created", "True"), ("DeploymentReady", "False")]
    conditions = set_all(conditions, [SUG_DEPLOYMENT_READY, SUG_RUNNING], T0 + timedelta(1))
    assert kinds(conditions) == [
        ("Created", "True"),
        ("DeploymentReady", "True"),
        ("Running", "True"),
    ]


def test_same_status_other_reason_keeps_transition_time_but_moves_to_the_end() -> None:
    first = set_all((), [SUG_RUNNING_STOPPED, SUG_CREATED], T0)
    restarting = ConditionSpec("Running", Status.FALSE, "Experiment is restarting", "x")
    after = set_condition(first, restarting, T0 + timedelta(hours=1))
    assert [c.type for c in after] == ["Created", "Running"]
    assert after[-1].last_transition_time == T0
    assert after[-1].last_update_time == T0 + timedelta(hours=1)


def test_message_change_updates_in_place() -> None:
    first = set_all((), [SUG_DEPLOYMENT_NOT_READY, SUG_CREATED], T0)
    changed = ConditionSpec(
        "DeploymentReady", Status.FALSE, "DeploymentNotReady", "Deployment is not ready: x"
    )
    after = set_condition(first, changed, T0 + timedelta(1))
    assert [c.type for c in after] == ["DeploymentReady", "Created"]
    assert after[0].message == "Deployment is not ready: x"
    assert after[0].last_transition_time == T0


def test_serialised_like_katib() -> None:
    succeeded = ConditionSpec(
        "Succeeded", Status.TRUE, "Experiment is succeeded", MSG_CAN_RESTART_FROM_VOLUME
    )
    (condition,) = set_all((), [succeeded], T0)
    assert condition.to_dict() == {
        "type": "Succeeded",
        "status": "True",
        "reason": "Experiment is succeeded",
        "message": "Suggestion is succeeded, suggestion volume is not deleted, can be restarted",
        "lastUpdateTime": "2026-01-01T00:00:00Z",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
