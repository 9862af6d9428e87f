"""The Experiment's completion and restart lifecycle (docs/katib-contract.md#experiment-sequences).

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

from katib_resume.core.conditions import Conditions, ConditionSpec
from katib_resume.core.katib import (
    EXP_CREATED,
    EXP_GOAL_REACHED,
    EXP_MAX_FAILED,
    EXP_MAX_TRIALS,
    EXP_RESTARTING,
    EXP_RUNNING,
    EXP_SUGGESTION_END,
    EXP_SUGGESTION_FAILED,
)
from katib_resume.core.katib import ExperimentCondition as E
from katib_resume.core.lifecycle.machine import Lifecycle, Transition
from katib_resume.core.lifecycle.states import (
    Always,
    AnyTrue,
    Detector,
    IfAnyTrue,
    IsTrue,
    Marked,
    Remove,
    Renewed,
    StateSpec,
    StateTable,
    Stopped,
    Write,
)


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
    Transition("suggestion_end_reached", _ACTIVE, X.Succeeded),
    Transition(
        "restart_requested", X.Succeeded, X.Running, conditions=("is_restartable", "has_budget")
    ),
)

DETECTORS: tuple[Detector, ...] = (
    Detector("created"),
    Detector("restart_requested"),
    Detector("suggestion_failed", when=("is_suggestion_failed",)),
    Detector("goal_reached", when=("is_goal_reached",)),
    Detector("max_trials_reached", when=("is_max_trials_reached",)),
    Detector("max_failed_trials_reached", when=("is_max_failed_trials_reached",)),
    Detector("suggestion_end_reached", when=("is_suggestion_end_reached",)),
    Detector("trials_started", when=("has_trials",)),
)
"""Tried in this order; the signals are ``core.plan.experiment``'s (the completion signals are
true only once a trial exists: Katib recomputes nothing before the first trial)."""

EXPERIMENT = Lifecycle("Experiment", ExperimentState, X.Pending, TABLE, DETECTORS)

COMPLETIONS: dict[str, ConditionSpec] = {
    "goal_reached": EXP_GOAL_REACHED,
    "max_trials_reached": EXP_MAX_TRIALS,
    "max_failed_trials_reached": EXP_MAX_FAILED,
    "suggestion_failed": EXP_SUGGESTION_FAILED,
    "suggestion_end_reached": EXP_SUGGESTION_END,
}
"""The condition each completing trigger appends (``Marked("completion")``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExperimentStateSpec(StateSpec[ExperimentState]):
    """A row of ``STATES``: besides its conditions, what the state asks of the planner."""

    active: bool = False
    """Trials flow: the Suggestion is created if missing and Trials are provisioned."""
    completed: bool = False
    """Succeeded or Failed: Katib's one definition of a completed Experiment."""


_STOP = (Stopped(E.RUNNING), Marked("completion"))
"""Running to False (reason and message kept), then the completion condition; ``Restarting``
stays as it is (True after a restarted run, as in Katib)."""
_RESTARTED = (E.SUCCEEDED, E.FAILED)

STATES: StateTable[ExperimentState, ExperimentStateSpec] = StateTable(
    ExperimentState,
    (
        ExperimentStateSpec(
            state=X.Failed, recognised=IsTrue(E.FAILED), writes=_STOP, warning=True, completed=True
        ),
        ExperimentStateSpec(
            state=X.Succeeded, recognised=IsTrue(E.SUCCEEDED), writes=_STOP, completed=True
        ),
        ExperimentStateSpec(
            state=X.Running,
            recognised=IsTrue(E.RUNNING),
            writes=(Renewed(IfAnyTrue(_RESTARTED, EXP_RESTARTING)), Write(EXP_RUNNING)),
            removes=tuple(Remove(type_, when=AnyTrue(_RESTARTED)) for type_ in _RESTARTED),
            active=True,
        ),
        ExperimentStateSpec(
            state=X.Created, recognised=IsTrue(E.CREATED), writes=(Write(EXP_CREATED),), active=True
        ),
        ExperimentStateSpec(state=X.Pending, recognised=Always()),
    ),
)
"""One row per state, in recognition order (Failed wins over Succeeded, and so on)."""


@dataclass(frozen=True, slots=True)
class ExperimentFacts:
    """What the guards of ``TABLE`` read."""

    is_restartable: bool = False
    has_budget: bool = False


@dataclass(frozen=True, slots=True)
class _Completion:
    completion: ConditionSpec | None


def derive(conditions: Conditions) -> ExperimentState:
    """The lifecycle state that the Experiment's observed conditions say it is in."""
    return STATES.derive(conditions)


def mark(
    state: ExperimentState,
    conditions: Conditions,
    now: datetime,
    completion: ConditionSpec | None = None,
) -> Conditions:
    """``conditions`` rewritten so that ``derive`` reads ``state``.

    ``completion`` is the Succeeded or Failed condition to write when ``state`` is terminal.
    """
    return STATES.mark(state, conditions, _Completion(completion), now)
