"""The Trial lifecycle: Katib's trial controller as data (TRIALS.md §1.5, §3.5, §3.6).

Theory of operation. As for the Suggestion, the state is never stored. ``STATES`` says, per state,
the condition that recognises it and the condition it is written as; ``derive`` walks that table
in its order (a completed state wins over ``Running``, ``Running`` over ``Created``) and ``mark``
writes a state back in Katib's order, which the printer column shows (the last condition)::

    Pending -> Created [Cr] -> Running [Cr, Ru+] -> Succeeded [Cr, Ru-, Su]
                                                 -> Failed [Cr, Ru-, F]
                                                 -> MetricsUnavailable [Cr, Ru-, MU]
                                                 -> EarlyStopped [Cr, Ru+, ES]

The completed states set ``Running`` to False first, keeping its reason and message (Katib's
``Mark*`` helpers), except ``EarlyStopped``, which the early-stopping service appends itself.
Two rows are ours: ``run_refused`` (a run object of a kind that is not watched could never be
observed: it is refused at once, where Katib leaves the Trial Running forever) and
``metrics_wait_expired`` (a succeeded run whose metrics never arrive ends MetricsUnavailable after
a bounded wait, where Katib requeues it every second forever).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from katib_resume.core.conditions import Conditions, ConditionSpec, Status, find, is_true, set_all
from katib_resume.core.katib_trial import TrialCondition as C
from katib_resume.core.katib_trial import TrialMessage as M
from katib_resume.core.katib_trial import TrialReason as R
from katib_resume.core.lifecycle.machine import Lifecycle, Transition


class TrialState(Enum):
    Pending = "Pending"
    Created = "Created"
    Running = "Running"
    Succeeded = "Succeeded"
    Failed = "Failed"
    MetricsUnavailable = "MetricsUnavailable"
    EarlyStopped = "EarlyStopped"


T = TrialState
_TRUE = Status.TRUE


@dataclass(frozen=True, slots=True)
class StateRow:
    """One state: the condition that recognises it (True) and the condition it is written as."""

    state: TrialState
    recognised_by: str | None
    writes: ConditionSpec | None
    stops_running: bool = False
    completed: bool = False


STATES: tuple[StateRow, ...] = (
    StateRow(T.Failed, C.FAILED, ConditionSpec(C.FAILED, _TRUE, R.FAILED, M.FAILED), True, True),
    StateRow(
        T.Succeeded,
        C.SUCCEEDED,
        ConditionSpec(C.SUCCEEDED, _TRUE, R.SUCCEEDED, M.SUCCEEDED),
        stops_running=True,
        completed=True,
    ),
    StateRow(
        T.EarlyStopped,
        C.EARLY_STOPPED,
        ConditionSpec(C.EARLY_STOPPED, _TRUE, R.EARLY_STOPPED, M.EARLY_STOPPED),
        completed=True,
    ),
    StateRow(
        T.MetricsUnavailable,
        C.METRICS_UNAVAILABLE,
        ConditionSpec(C.METRICS_UNAVAILABLE, _TRUE, R.METRICS_UNAVAILABLE, M.METRICS_UNAVAILABLE),
        stops_running=True,
        completed=True,
    ),
    StateRow(T.Running, C.RUNNING, ConditionSpec(C.RUNNING, _TRUE, R.RUNNING, M.RUNNING)),
    StateRow(T.Created, C.CREATED, ConditionSpec(C.CREATED, _TRUE, R.CREATED, M.CREATED)),
    StateRow(T.Pending, None, None),
)
"""Per state, in recognition order (``derive`` takes the first whose condition is True)."""

ROW = {row.state: row for row in STATES}
COMPLETED = frozenset(row.state for row in STATES if row.completed)
_ACTIVE = (T.Created, T.Running)

TABLE: tuple[Transition[TrialState], ...] = (
    Transition("created", T.Pending, T.Created),
    Transition("run_started", T.Created, T.Running),
    Transition("run_succeeded", _ACTIVE, T.Succeeded, conditions=("is_observation_available",)),
    Transition(
        "run_succeeded", _ACTIVE, T.MetricsUnavailable, conditions=("is_objective_unavailable",)
    ),
    Transition("run_failed", _ACTIVE, T.Failed),
    Transition("run_refused", _ACTIVE, T.Failed),
    Transition("metrics_wait_expired", T.Running, T.MetricsUnavailable),
    Transition("early_stopped", T.Running, T.EarlyStopped),
)

TRIAL = Lifecycle("Trial", TrialState, T.Pending, TABLE)


@dataclass(frozen=True, slots=True)
class TrialFacts:
    """What the guards of ``TABLE`` read: the observation after the run succeeded.

    Neither is true while the metrics are still awaited (the trigger then leaves the state as
    it is and the planner waits, for a bounded time).
    """

    is_observation_available: bool = False
    is_objective_unavailable: bool = False


def derive(conditions: Conditions) -> TrialState:
    """The lifecycle state that the Trial's observed conditions say it is in."""
    for row in STATES:
        if row.recognised_by is None or is_true(conditions, row.recognised_by):
            return row.state
    raise AssertionError("unreachable: Pending recognises every list")


def condition_for(state: TrialState, job_reason: str = "", job_message: str = "") -> ConditionSpec:
    """The condition ``state`` is written as, with Katib's ``. Job reason: ...`` and
    ``. Job message: ...`` suffixes when the run object gave a reason or message."""
    base = ROW[state].writes
    if base is None:
        raise ValueError(f"{state.name} is written as no condition")
    reason = f"{base.reason}. Job reason: {job_reason}" if job_reason else base.reason
    message = f"{base.message}. Job message: {job_message}" if job_message else base.message
    return ConditionSpec(base.type, base.status, reason, message)


def mark(
    state: TrialState,
    conditions: Conditions,
    now: datetime,
    written_as: ConditionSpec | None = None,
) -> Conditions:
    """``conditions`` rewritten so that ``derive`` reads ``state``.

    ``written_as`` replaces the state's own condition (a suffixed reason, a message saying why).
    """
    row = ROW[state]
    want = written_as or row.writes
    if want is None:
        return conditions
    wants: list[ConditionSpec] = []
    running = find(conditions, C.RUNNING)
    if row.stops_running and running is not None:
        wants.append(ConditionSpec(C.RUNNING, Status.FALSE, running.reason, running.message))
    wants.append(want)
    return set_all(conditions, wants, now)
