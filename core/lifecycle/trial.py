"""The Trial lifecycle: Katib's trial controller as data (docs/katib-contract.md#trial-conditions,
docs/katib-contract.md#trial-sequences).

Theory of operation. As for the Suggestion and the Experiment, the state is never stored: each row
of ``STATES`` says how the state is recognised (its condition True; a completed state wins over
``Running``, ``Running`` over ``Created``) and the conditions it is written as, in Katib's order,
which the printer column shows (the last condition)::

    Pending -> Created [Cr] -> Running [Cr, Ru+] -> Succeeded [Cr, Ru-, Su]
                                                 -> Failed [Cr, Ru-, F]
                                                 -> MetricsUnavailable [Cr, Ru-, MU]
                                                 -> EarlyStopped [Cr, Ru+, ES]

The completed states set ``Running`` to False first, keeping its reason and message (Katib's
``Mark*`` helpers, ``Stopped``), except ``EarlyStopped``, which the early-stopping service appends
itself. A state's own condition is ``Reported``: the planner's ``Report`` appends the run object's
reason and message as Katib does, or says why in its own words. Two rows are ours:
``run_refused`` (a run object of a kind that is not watched could never be observed: it is refused
at once, where Katib leaves the Trial Running forever) and ``metrics_wait_expired`` (a succeeded
run whose metrics never arrive ends MetricsUnavailable after a bounded wait, where Katib requeues
it every second forever).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from katib_resume.core.conditions import Conditions, ConditionSpec, Status
from katib_resume.core.katib_trial import TrialCondition as C
from katib_resume.core.katib_trial import TrialMessage as M
from katib_resume.core.katib_trial import TrialReason as R
from katib_resume.core.lifecycle.machine import Lifecycle, Transition
from katib_resume.core.lifecycle.states import (
    NO_REPORT,
    Always,
    Detector,
    IsTrue,
    Report,
    Reported,
    StateSpec,
    StateTable,
    Stopped,
)


class TrialState(Enum):
    Pending = "Pending"
    Created = "Created"
    Running = "Running"
    Succeeded = "Succeeded"
    Failed = "Failed"
    MetricsUnavailable = "MetricsUnavailable"
    EarlyStopped = "EarlyStopped"


T = TrialState
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

DETECTORS: tuple[Detector, ...] = (
    Detector("created"),
    Detector("run_refused", when=("refused",)),
    Detector("run_failed", when=("failed",)),
    Detector("run_succeeded", when=("succeeded",)),
    Detector("metrics_wait_expired", when=("wait_expired",)),
    Detector("run_started", when=("started",)),
)
"""Tried in this order over the planner's ``TrialSignals``: a Pending Trial is created in a pass
of its own, then the run object decides. ``run_succeeded`` does not move while the metrics are
awaited (neither guard holds), so the wait's expiry or, from Created, ``run_started`` fires
instead. ``early_stopped`` has no detector: the early-stopping service writes it."""

TRIAL = Lifecycle("Trial", TrialState, T.Pending, TABLE, DETECTORS)


@dataclass(frozen=True, slots=True)
class TrialSignals:
    """What ``DETECTORS`` read: what the run object says in this reconcile."""

    refused: bool = False
    """No run object exists and its kind is not watched, so none is created."""
    failed: bool = False
    """The run object meets its ``failureCondition``."""
    succeeded: bool = False
    """The run object meets its ``successCondition``."""
    wait_expired: bool = False
    """It succeeded and its metrics have been awaited for the bounded wait."""
    started: bool = False
    """It is running, or it succeeded and its metrics are awaited."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialStateSpec(StateSpec[TrialState]):
    """A row of ``STATES``."""

    completed: bool = False
    """Katib's one definition of a completed Trial: ``completionTime`` is stamped on entry, the
    run object is deleted (unless ``retainRun``) and the Experiment counts it as finished."""


def _own(type_: str, reason: str, message: str) -> Reported:
    return Reported(ConditionSpec(type_, Status.TRUE, reason, message))


_STOP_RUNNING = Stopped(C.RUNNING)

STATES: StateTable[TrialState, TrialStateSpec] = StateTable(
    TrialState,
    (
        TrialStateSpec(
            state=T.Failed,
            recognised=IsTrue(C.FAILED),
            writes=(_STOP_RUNNING, _own(C.FAILED, R.FAILED, M.FAILED)),
            completed=True,
        ),
        TrialStateSpec(
            state=T.Succeeded,
            recognised=IsTrue(C.SUCCEEDED),
            writes=(_STOP_RUNNING, _own(C.SUCCEEDED, R.SUCCEEDED, M.SUCCEEDED)),
            completed=True,
        ),
        TrialStateSpec(
            state=T.EarlyStopped,
            recognised=IsTrue(C.EARLY_STOPPED),
            writes=(_own(C.EARLY_STOPPED, R.EARLY_STOPPED, M.EARLY_STOPPED),),
            completed=True,
        ),
        TrialStateSpec(
            state=T.MetricsUnavailable,
            recognised=IsTrue(C.METRICS_UNAVAILABLE),
            writes=(
                _STOP_RUNNING,
                _own(C.METRICS_UNAVAILABLE, R.METRICS_UNAVAILABLE, M.METRICS_UNAVAILABLE),
            ),
            completed=True,
        ),
        TrialStateSpec(
            state=T.Running,
            recognised=IsTrue(C.RUNNING),
            writes=(_own(C.RUNNING, R.RUNNING, M.RUNNING),),
        ),
        TrialStateSpec(
            state=T.Created,
            recognised=IsTrue(C.CREATED),
            writes=(_own(C.CREATED, R.CREATED, M.CREATED),),
        ),
        TrialStateSpec(state=T.Pending, recognised=Always()),
    ),
)
"""One row per state, in recognition order (a completed state wins over Running, and so on
down to Pending, which is written as no condition)."""

COMPLETED = frozenset(row.state for row in STATES.rows if row.completed)


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
    return STATES.derive(conditions)


def condition_for(state: TrialState, job_reason: str = "", job_message: str = "") -> ConditionSpec:
    """The condition ``state`` is written as (its ``Reported`` row), with Katib's
    ``. Job reason: ...`` and ``. Job message: ...`` suffixes when the run object gave them."""
    report = Report(job_reason, job_message)
    for writer in STATES[state].writes:
        if isinstance(writer, Reported):
            return writer.written(report)
    raise ValueError(f"{state.name} is written as no condition")


def mark(
    state: TrialState, conditions: Conditions, now: datetime, report: Report = NO_REPORT
) -> Conditions:
    """``conditions`` rewritten so that ``derive`` reads ``state`` (Katib's mark functions);
    ``report`` is what the planner observed (``Reported``)."""
    return STATES.mark(state, conditions, report, now)
