"""The Suggestion lifecycle: Katib's condition workflow for the suggestion service.

Theory of operation. The state is never stored: ``derive`` reads it from the Suggestion's
conditions (and ``deletionTimestamp``) on every reconcile, and ``mark`` writes a state back as
conditions, following Katib's exact sequences (BEHAVIOR.md §2.3), e.g. for FromVolume::

    Pending  -> Created [C] -> Deploying [C, DR-] -> Running [C, DR+, R+]
             -> Succeeded [C, R-s, DR-s, S_V] -> Restarting [C, DR-s, R-r]
             -> Deploying [C, R-r, DR-] -> Running [C, DR+, R+] -> ...

``mark`` is idempotent, so re-marking the current state in a steady reconcile changes nothing.
Three states are ours: ``Blocked`` (a PV, PVC or other child of that name belongs to someone else:
never adopted, reported on DeploymentReady), ``Deploying`` re-entered from ``Running`` when the
Deployment stops being available (so Running=True always means a live, available service), and
``Deleting`` (our finalizer is removing the cluster-scoped PV that no owner reference can collect).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from katib_resume.core.conditions import (
    Condition,
    Conditions,
    ConditionSpec,
    Status,
    find,
    remove_condition,
    set_all,
)
from katib_resume.core.katib import (
    SUG_CREATED,
    SUG_DEPLOYMENT_READY,
    SUG_DEPLOYMENT_STOPPED,
    SUG_NOT_RUNNING_NOT_READY,
    SUG_RESTARTING,
    SUG_RUNNING,
    SUG_RUNNING_STOPPED,
    SuggestionCondition,
    SuggestionReason,
)
from katib_resume.core.lifecycle.machine import Lifecycle, Transition
from katib_resume.core.model import Suggestion

S, R = SuggestionCondition, SuggestionReason


class SuggestionState(Enum):
    Pending = "Pending"
    Created = "Created"
    Deploying = "Deploying"
    Blocked = "Blocked"
    Running = "Running"
    Succeeded = "Succeeded"
    Restarting = "Restarting"
    Failed = "Failed"
    Deleting = "Deleting"


St = SuggestionState
_LIVE = (St.Pending, St.Created, St.Deploying, St.Blocked, St.Running, St.Restarting)

TABLE: tuple[Transition[SuggestionState], ...] = (
    Transition("created", St.Pending, St.Created),
    Transition("deployment_requested", (St.Created, St.Restarting), St.Deploying),
    Transition(
        "ownership_conflict_found",
        (St.Created, St.Deploying, St.Running, St.Restarting),
        St.Blocked,
    ),
    Transition("ownership_conflict_resolved", St.Blocked, St.Deploying),
    Transition(
        "deployment_became_available", St.Deploying, St.Running, conditions=("is_settings_valid",)
    ),
    Transition(
        "deployment_became_available", St.Deploying, St.Failed, conditions=("is_settings_invalid",)
    ),
    Transition("deployment_became_unavailable", St.Running, St.Deploying),
    Transition("experiment_completed", _LIVE, St.Succeeded, conditions=("is_service_released",)),
    Transition("restart_requested", St.Succeeded, St.Restarting, conditions=("is_volume_kept",)),
    Transition("deletion_requested", (*_LIVE, St.Succeeded, St.Failed), St.Deleting),
)

SUGGESTION = Lifecycle("Suggestion", SuggestionState, St.Pending, TABLE)


@dataclass(frozen=True, slots=True)
class SuggestionFacts:
    """What the guards of ``TABLE`` read (built by the planner from the snapshot)."""

    is_settings_valid: bool = True
    is_settings_invalid: bool = False
    is_service_released: bool = False
    is_volume_kept: bool = False


@dataclass(frozen=True, slots=True)
class Marks:
    """The variable parts of the conditions a state is written as (the planner fills them in:
    why the Deployment is not ready yet, what blocks it, how the service ended)."""

    waiting: ConditionSpec
    blocked: ConditionSpec
    succeeded: ConditionSpec
    failed: ConditionSpec
    running: ConditionSpec = SUG_RUNNING


def derive(suggestion: Suggestion) -> SuggestionState:
    """The lifecycle state that the Suggestion's observed conditions say it is in."""
    if suggestion.metadata.is_deleting:
        return St.Deleting
    conditions = suggestion.status.conditions
    if suggestion.has(S.FAILED):
        return St.Failed
    if suggestion.has(S.SUCCEEDED):
        return St.Succeeded
    if suggestion.has(S.RUNNING):
        return St.Running
    ready = find(conditions, S.DEPLOYMENT_READY)
    if ready is not None and ready.reason == R.OWNERSHIP_CONFLICT:
        return St.Blocked
    if ready is not None and ready.reason != R.SUGGESTION_SUCCEEDED:
        return St.Deploying
    running = find(conditions, S.RUNNING)
    if running is not None and running.reason == R.RESTARTING:
        return St.Restarting
    return St.Created if suggestion.has(S.CREATED) else St.Pending


def mark(state: SuggestionState, conditions: Conditions, marks: Marks, now: datetime) -> Conditions:
    """``conditions`` rewritten so that ``derive`` reads ``state`` (Katib's mark functions)."""
    wants = _wants(state, conditions, marks)
    if state in (St.Running, St.Restarting):
        conditions = remove_condition(conditions, S.SUCCEEDED)
    return set_all(conditions, wants, now)


def _wants(state: SuggestionState, conditions: Conditions, marks: Marks) -> list[ConditionSpec]:
    running = find(conditions, S.RUNNING)
    still_running = running is not None and running.status is Status.TRUE
    if state is St.Created:
        return [SUG_CREATED]
    if state in (St.Deploying, St.Blocked):
        ready = marks.waiting if state is St.Deploying else marks.blocked
        return [ready, SUG_NOT_RUNNING_NOT_READY] if still_running else [ready]
    if state is St.Running:
        return [SUG_DEPLOYMENT_READY, marks.running]
    if state is St.Restarting:
        return [SUG_RESTARTING]
    if state is St.Failed:
        stopped = [_stopped(running)] if running is not None else []
        return [SUG_DEPLOYMENT_READY, *stopped, marks.failed]
    if state is St.Succeeded:
        readiness = find(conditions, S.DEPLOYMENT_READY)
        return [
            *([SUG_RUNNING_STOPPED] if running is not None else []),
            *([SUG_DEPLOYMENT_STOPPED] if readiness is not None else []),
            marks.succeeded,
        ]
    return []


def _stopped(running: Condition) -> ConditionSpec:
    """Running set to False keeping its reason and message (Katib's MarkSuggestionStatusFailed)."""
    return ConditionSpec(S.RUNNING, Status.FALSE, running.reason, running.message)
