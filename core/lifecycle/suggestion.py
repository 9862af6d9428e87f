"""The Suggestion lifecycle: Katib's condition workflow for the suggestion service.

Theory of operation. The state is never stored: ``derive`` reads it from the Suggestion's
conditions (and ``deletionTimestamp``) on every reconcile, and ``mark`` writes a state back as
conditions, following Katib's exact sequences (docs/katib-contract.md#suggestion-sequences), e.g.
for FromVolume::

    Pending  -> Created [C] -> Deploying [C, DR-] -> Running [C, DR+, R+]
             -> Succeeded [C, R-s, DR-s, S_V] -> Restarting [C, DR-s, R-r]
             -> Deploying [C, R-r, DR-] -> Running [C, DR+, R+] -> ...

Everything a state means is one row of ``STATES``: how it is recognised, the conditions it is
written as, what it holds the world to (``Holds``: the service's objects planned, ensured or
released), what it asks of the suggestion service (``Asks``), whether entering it is a warning.
The triggers are one ordered list (``DETECTORS``) over the planner's ``SuggestionSignals``.
A new state is a new enum member, a row of ``STATES`` and its rows of ``TABLE``.

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

from katib_resume.core.conditions import Conditions, ConditionSpec
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
from katib_resume.core.lifecycle.states import (
    Always,
    Detector,
    HasReason,
    IfPresent,
    IfTrue,
    IsTrue,
    Marked,
    MarkedForDeletion,
    Remove,
    StateSpec,
    StateTable,
    Stopped,
    Write,
)
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

DETECTORS: tuple[Detector, ...] = (
    Detector("experiment_completed", when=("experiment_completed",)),
    Detector("restart_requested", unless=("experiment_completed",)),
    Detector("created"),
    Detector("ownership_conflict_found", when=("conflicted",)),
    Detector("ownership_conflict_resolved", unless=("conflicted",)),
    Detector("deployment_requested", unless=("conflicted",)),
    Detector("deployment_became_available", when=("available",), unless=("conflicted",)),
    Detector("deployment_became_unavailable", unless=("conflicted", "available")),
)
"""Tried in this order: the Experiment's completion or restart first, then what the state waits
for. ``deletion_requested`` has no detector: a deleted Suggestion is recognised as Deleting."""

SUGGESTION = Lifecycle("Suggestion", SuggestionState, St.Pending, TABLE, DETECTORS)


@dataclass(frozen=True, slots=True)
class SuggestionFacts:
    """What the guards of ``TABLE`` read (built by the planner from the snapshot)."""

    is_settings_valid: bool = True
    is_settings_invalid: bool = False
    is_service_released: bool = False
    is_volume_kept: bool = False


@dataclass(frozen=True, slots=True)
class SuggestionSignals:
    """What ``DETECTORS`` read: what the world says since the last reconcile."""

    experiment_completed: bool = False
    conflicted: bool = False
    """An object under one of our names belongs to someone else."""
    available: bool = False
    """The live Deployment is Available."""


class Holds(Enum):
    """What a state holds the suggestion service's objects to."""

    NOTHING = "nothing"
    PLANNED = "planned"
    """Planned (so that a foreign object under our names is seen), none created yet."""
    ENSURED = "ensured"
    """PV, PVC, Service, RBAC and Deployment exist (katib-config must describe them)."""
    RELEASED = "released"
    """The Deployment and Service are deleted (a kept volume stays)."""
    CLEANED_UP = "cleaned up"
    """Our finalizer deletes the PV, then lets go."""


class Asks(Enum):
    """What a state needs from the suggestion service before a plan can decide."""

    NOTHING = "nothing"
    VALIDATION = "validation"
    """Its settings validated, once the Deployment is available."""
    ASSIGNMENTS = "assignments"
    """The assignments ``spec.requests`` calls for, recorded in the status."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SuggestionStateSpec(StateSpec[SuggestionState]):
    """A row of ``STATES``."""

    holds: Holds = Holds.NOTHING
    asks: Asks = Asks.NOTHING
    remarked: bool = False
    """Re-marked on every reconcile, not only on entry: its message follows the world."""
    starts: bool = False
    """Entering it stamps ``status.startTime`` if missing."""


_STOPPED_NOT_READY = IfTrue(S.RUNNING, SUG_NOT_RUNNING_NOT_READY)
_CLEAR_SUCCEEDED = (Remove(S.SUCCEEDED),)

STATES: StateTable[SuggestionState, SuggestionStateSpec] = StateTable(
    SuggestionState,
    (
        SuggestionStateSpec(
            state=St.Deleting, recognised=MarkedForDeletion(), holds=Holds.CLEANED_UP
        ),
        SuggestionStateSpec(
            state=St.Failed,
            recognised=IsTrue(S.FAILED),
            writes=(Write(SUG_DEPLOYMENT_READY), Stopped(S.RUNNING), Marked("failed")),
            holds=Holds.RELEASED,
            warning=True,
        ),
        SuggestionStateSpec(
            state=St.Succeeded,
            recognised=IsTrue(S.SUCCEEDED),
            writes=(
                IfPresent(S.RUNNING, SUG_RUNNING_STOPPED),
                IfPresent(S.DEPLOYMENT_READY, SUG_DEPLOYMENT_STOPPED),
                Marked("succeeded"),
            ),
            holds=Holds.RELEASED,
            remarked=True,  # a kept volume lost later is said so
        ),
        SuggestionStateSpec(
            state=St.Running,
            recognised=IsTrue(S.RUNNING),
            writes=(Write(SUG_DEPLOYMENT_READY), Marked("running")),
            removes=_CLEAR_SUCCEEDED,
            holds=Holds.ENSURED,
            asks=Asks.ASSIGNMENTS,
        ),
        SuggestionStateSpec(
            state=St.Blocked,
            recognised=HasReason(S.DEPLOYMENT_READY, R.OWNERSHIP_CONFLICT),
            writes=(Marked("blocked"), _STOPPED_NOT_READY),
            holds=Holds.PLANNED,
            warning=True,
            remarked=True,
        ),
        SuggestionStateSpec(
            state=St.Deploying,
            recognised=HasReason(S.DEPLOYMENT_READY, R.SUGGESTION_SUCCEEDED, other_than=True),
            writes=(Marked("waiting"), _STOPPED_NOT_READY),
            holds=Holds.ENSURED,
            asks=Asks.VALIDATION,
            remarked=True,
        ),
        SuggestionStateSpec(
            state=St.Restarting,
            recognised=HasReason(S.RUNNING, R.RESTARTING),
            writes=(Write(SUG_RESTARTING),),
            removes=_CLEAR_SUCCEEDED,
            holds=Holds.PLANNED,
        ),
        SuggestionStateSpec(
            state=St.Created,
            recognised=IsTrue(S.CREATED),
            writes=(Write(SUG_CREATED),),
            holds=Holds.PLANNED,
            starts=True,
        ),
        SuggestionStateSpec(state=St.Pending, recognised=Always()),
    ),
)
"""One row per state, in recognition order: a deleted Suggestion is Deleting whatever its
conditions, Failed wins over Succeeded, and so on down to Pending."""


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
    return STATES.derive(suggestion.status.conditions, suggestion.metadata.is_deleting)


def mark(state: SuggestionState, conditions: Conditions, marks: Marks, now: datetime) -> Conditions:
    """``conditions`` rewritten so that ``derive`` reads ``state`` (Katib's mark functions)."""
    return STATES.mark(state, conditions, marks, now)
