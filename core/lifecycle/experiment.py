"""The Experiment's completion and restart lifecycle (BEHAVIOR.md §3.5).

Theory of operation. As for the Suggestion, the state is derived from the observed conditions on
every reconcile and written back by ``mark`` in Katib's order::

    Pending -> Created [Cr] -> Running [Cr, Ru+] -> Succeeded [Cr, Ru-, SM]
            -> (budget raised) Running [Cr, Rs, Ru+] -> Succeeded [Cr, Rs, Ru-, SM] -> ...

Two of Katib's bugs are fixed here, in the table and the marks rather than in scattered code:
``restart_requested`` is guarded by ``is_restartable`` *and* ``has_budget``, so an Experiment
without ``maxTrialCount`` that completed by goal or failure is never restarted (bug 1, Katib's
endless restart loop). ``Restarting`` stays True once set, as in Katib, so that a client that
polls for it after raising the budget finds it even when the restarted run has already
completed; but every restart renews it (both times, in place), where Katib leaves the first
restart's times for ever (bug 2). With ``status.observedGeneration`` (``plan.experiment``) a
client can tell a status that has seen its edit from one that has not. A Failed Experiment is
terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from katib_resume.core.conditions import (
    Conditions,
    ConditionSpec,
    Status,
    find,
    is_true,
    remove_condition,
    renew_condition,
    set_all,
)
from katib_resume.core.katib import EXP_CREATED, EXP_RESTARTING, EXP_RUNNING
from katib_resume.core.katib import ExperimentCondition as E
from katib_resume.core.lifecycle.machine import Lifecycle, Transition


class ExperimentState(Enum):
    Pending = "Pending"
    Created = "Created"
    Running = "Running"
    Succeeded = "Succeeded"
    Failed = "Failed"


X = ExperimentState
_ACTIVE = (X.Created, X.Running)

TABLE: tuple[Transition[ExperimentState], ...] = (
    Transition("created", X.Pending, X.Created),
    Transition("trials_started", X.Created, X.Running),
    Transition("goal_reached", _ACTIVE, X.Succeeded),
    Transition("max_trials_reached", _ACTIVE, X.Succeeded),
    Transition("max_failed_trials_reached", _ACTIVE, X.Failed),
    Transition("suggestion_failed", _ACTIVE, X.Failed),
    Transition(
        "restart_requested", X.Succeeded, X.Running, conditions=("is_restartable", "has_budget")
    ),
)

EXPERIMENT = Lifecycle("Experiment", ExperimentState, X.Pending, TABLE)


@dataclass(frozen=True, slots=True)
class ExperimentFacts:
    """What the guards of ``TABLE`` read."""

    is_restartable: bool = False
    has_budget: bool = False


def derive(conditions: Conditions) -> ExperimentState:
    """The lifecycle state that the Experiment's observed conditions say it is in."""
    if is_true(conditions, E.FAILED):
        return X.Failed
    if is_true(conditions, E.SUCCEEDED):
        return X.Succeeded
    if is_true(conditions, E.RUNNING):
        return X.Running
    return X.Created if is_true(conditions, E.CREATED) else X.Pending


def mark(
    state: ExperimentState,
    conditions: Conditions,
    now: datetime,
    completion: ConditionSpec | None = None,
) -> Conditions:
    """``conditions`` rewritten so that ``derive`` reads ``state``.

    ``completion`` is the Succeeded or Failed condition to write when ``state`` is terminal.
    """
    if state is X.Created:
        return set_all(conditions, [EXP_CREATED], now)
    if state is X.Running:
        return _running(conditions, now)
    assert completion is not None, "a completed state needs its completion condition"
    return set_all(conditions, [*_stopped(conditions), completion], now)


def _running(conditions: Conditions, now: datetime) -> Conditions:
    if is_true(conditions, E.SUCCEEDED) or is_true(conditions, E.FAILED):
        conditions = remove_condition(remove_condition(conditions, E.SUCCEEDED), E.FAILED)
        conditions = renew_condition(conditions, EXP_RESTARTING, now)  # this restart's times
    return set_all(conditions, [EXP_RUNNING], now)


def _stopped(conditions: Conditions) -> list[ConditionSpec]:
    """Running to False (reason and message kept); ``Restarting`` stays as it is."""
    running = find(conditions, E.RUNNING)
    if running is None:
        return []
    return [ConditionSpec(E.RUNNING, Status.FALSE, running.reason, running.message)]
