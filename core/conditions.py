"""Status conditions: Katib's vocabulary with Kubernetes semantics.

Katib's rule for setting a condition (docs/katib-contract.md#condition-rules): a condition of a type
that is absent, or present with another status or reason, is removed and appended at the end of the
list; the list order is visible (the CRDs' printer columns show the *last* condition). We keep that
ordering and add what ``meta.SetStatusCondition`` guarantees: no type appears twice,
``lastTransitionTime`` changes only when the status changes, and setting an identical condition
changes nothing at all (so a steady-state reconcile writes nothing). Where Katib silently drops a
new message for the same status and reason, we update the message in place (position and transition
time kept), so that a message never lies about the present.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from katib_resume.core.condition_spec import ConditionSpec, Status
from katib_resume.core.kube import KubeModel, KubeTime

__all__ = [
    "Condition",
    "ConditionSpec",
    "Conditions",
    "Status",
    "find",
    "is_true",
    "remove_condition",
    "renew_condition",
    "set_all",
    "set_condition",
]


class Condition(KubeModel):
    type: str
    status: Status
    reason: str = ""
    message: str = ""
    last_update_time: KubeTime | None = None
    last_transition_time: KubeTime | None = None


Conditions = tuple[Condition, ...]


def find(conditions: Iterable[Condition], type_: str) -> Condition | None:
    """The condition of ``type_``, if present."""
    for condition in conditions:
        if condition.type == type_:
            return condition
    return None


def is_true(conditions: Iterable[Condition], type_: str) -> bool:
    """Katib's ``hasCondition``: a condition of that type exists with status True."""
    condition = find(conditions, type_)
    return condition is not None and condition.status is Status.TRUE


def set_condition(conditions: Conditions, want: ConditionSpec, now: datetime) -> Conditions:
    """Katib's ``setCondition`` with Kubernetes semantics (see the module docstring)."""
    old = find(conditions, want.type)
    if want.matches(old):
        return conditions
    if old is not None and old.status == want.status and old.reason == want.reason:
        updated = old.model_copy(update={"message": want.message, "last_update_time": now})
        return tuple(updated if c is old else c for c in conditions)
    transition = old.last_transition_time if old and old.status == want.status else now
    return (*remove_condition(conditions, want.type), _condition(want, now, transition))


def renew_condition(conditions: Conditions, want: ConditionSpec, now: datetime) -> Conditions:
    """``want`` with both times ``now``, in place if its type is present (appended if not).

    For a condition that records an event which can recur with the same status, reason and
    message (a restart): ``set_condition`` would keep the first occurrence's times.
    """
    new = _condition(want, now, now)
    if find(conditions, want.type) is None:
        return (*conditions, new)
    return tuple(new if c.type == want.type else c for c in conditions)


def _condition(want: ConditionSpec, updated: datetime, transition: datetime | None) -> Condition:
    return Condition(
        type=want.type,
        status=want.status,
        reason=want.reason,
        message=want.message,
        last_update_time=updated,
        last_transition_time=transition,
    )


def remove_condition(conditions: Conditions, type_: str) -> Conditions:
    """Katib's ``removeCondition``: the list without that type (order of the rest kept)."""
    if find(conditions, type_) is None:
        return conditions
    return tuple(c for c in conditions if c.type != type_)


def set_all(conditions: Conditions, wants: Iterable[ConditionSpec], now: datetime) -> Conditions:
    """Set several conditions in order (each may move to the end of the list)."""
    for want in wants:
        conditions = set_condition(conditions, want, now)
    return conditions
