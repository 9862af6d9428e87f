"""The variable texts of the Suggestion's conditions, chosen so that they never lie.

Katib writes "Experiment is succeeded ... can be restarted" even when the Experiment failed or
cannot be restarted (bug 10), and says nothing while a PVC stays unbound (bug 16). The exact Katib
texts are kept wherever they are true.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from katib_resume.core.conditions import ConditionSpec, Status
from katib_resume.core.katib import (
    MSG_CAN_RESTART_FROM_VOLUME,
    MSG_CANNOT_RESTART,
    MSG_VOLUME_KEPT_CANNOT_RESTART,
    MSG_VOLUME_LOST,
    MSG_VOLUME_LOST_CAN_RESTART,
    SUG_DEPLOYMENT_NOT_READY,
    SUG_RUNNING,
    SuggestionCondition,
    SuggestionReason,
    suggestion_failed,
)
from katib_resume.core.model import PersistentVolumeClaim
from katib_resume.core.observed import Observed, Outcome
from katib_resume.core.volumes import VolumePlan

if TYPE_CHECKING:
    from katib_resume.core.plan.suggestion import Context

RESTART_ON_NEW_VOLUME = "the service starts on a new volume without its saved state"
"""What a restart after the kept volume was lost says in its Warning event."""
BIND_GRACE = timedelta(seconds=30)
"""How long a new PVC may stay unbound before we say so (WaitForFirstConsumer binds late)."""


def waiting_mark(observed: Observed, volume: VolumePlan | None, now: datetime) -> ConditionSpec:
    """DeploymentReady=False: Katib's "Deployment is not ready", or why the volume holds it up."""
    pvc = observed.pvc
    if volume is not None and pvc is not None and pvc.metadata.is_deleting:
        return ConditionSpec(
            SuggestionCondition.DEPLOYMENT_READY,
            Status.FALSE,
            SuggestionReason.VOLUME_TERMINATING,
            f"Deployment is not ready: PersistentVolumeClaim {_name(pvc)} is terminating; "
            "once it is gone a new claim is made, without the saved state",
        )
    if volume is None or pvc is None or pvc.is_bound():
        return SUG_DEPLOYMENT_NOT_READY
    if unbound_for(observed, now) < BIND_GRACE:
        return SUG_DEPLOYMENT_NOT_READY
    phase = pvc.status.phase or "Pending"
    return ConditionSpec(
        SuggestionCondition.DEPLOYMENT_READY,
        Status.FALSE,
        SuggestionReason.VOLUME_NOT_BOUND,
        f"Deployment is not ready: PersistentVolumeClaim {_name(pvc)} is not bound (phase {phase})",
    )


def _name(pvc: PersistentVolumeClaim) -> str:
    return f"{pvc.metadata.namespace}/{pvc.metadata.name}"


def volume_lost(observed: Observed, claim: str) -> str | None:
    """How the kept volume's claim ``claim`` (its name) is lost: missing or terminating."""
    pvc = observed.pvc
    if pvc is None:
        return f"PersistentVolumeClaim {observed.namespace}/{claim} is missing"
    if pvc.metadata.is_deleting:
        return f"PersistentVolumeClaim {_name(pvc)} is terminating"
    return None


def unbound_for(observed: Observed, now: datetime) -> timedelta:
    """How long the observed PVC has existed (unknown creation time: long enough)."""
    created = observed.pvc.metadata.creation_timestamp if observed.pvc else None
    return BIND_GRACE if created is None else now - created


def succeeded_mark(context: Context, has_volume: bool, lost: str | None = None) -> ConditionSpec:
    """The Succeeded condition written when the service is released (``lost``: how the kept
    volume's claim is lost, if it is; Katib would still say the volume is there)."""
    if has_volume and lost is not None:
        then = MSG_VOLUME_LOST_CAN_RESTART if context.restartable else "can't be restarted"
        message = f"{MSG_VOLUME_LOST} ({lost}), {then}"
    elif context.restartable and has_volume:
        message = MSG_CAN_RESTART_FROM_VOLUME
    elif has_volume:
        message = MSG_VOLUME_KEPT_CANNOT_RESTART
    else:
        message = MSG_CANNOT_RESTART
    reason = (
        SuggestionReason.FAILED_BY_EXPERIMENT
        if context.failed
        else SuggestionReason.SUCCEEDED_BY_EXPERIMENT
    )
    return ConditionSpec(SuggestionCondition.SUCCEEDED, Status.TRUE, reason, message)


def running_mark(observed: Observed) -> ConditionSpec:
    """Katib's "Suggestion is running", plus what the service said about its state when that is
    news (e.g. its saved state was missing and it rebuilt it by replaying the trial history)."""
    validation = observed.validation
    if validation is None or validation.outcome is not Outcome.VALID or not validation.message:
        return SUG_RUNNING
    return ConditionSpec(
        SUG_RUNNING.type,
        SUG_RUNNING.status,
        SUG_RUNNING.reason,
        f"{SUG_RUNNING.message}: {validation.message}",
    )


def failed_mark(observed: Observed) -> ConditionSpec:
    """Failed with the suggestion service's own explanation (Katib's "Validation failed: ...")."""
    validation = observed.validation
    detail = validation.message if validation and validation.outcome is Outcome.INVALID else ""
    return suggestion_failed(detail)
