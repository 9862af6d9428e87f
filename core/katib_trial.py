"""Katib's Trial vocabulary, quoted exactly (docs/katib-contract.md#trials,
docs/katib-contract.md#trial-constants, docs/katib-contract.md#trial-conditions): UIs, the SDK and
scripts match these strings.

The few strings that are ours (the bounded metrics wait, the refused run kind) are marked so.
"""

from __future__ import annotations

from typing import Final

TRIAL_FINALIZER: Final = "clean-metrics-in-db"
LABEL_TRIAL: Final = "katib.kubeflow.org/trial"
UNAVAILABLE: Final = "unavailable"
ZERO_TIME: Final = "0001-01-01T00:00:00Z"
DEFAULT_TRIAL_RESOURCES: Final = ("Job.v1.batch",)

JOB_SUCCESS_CONDITION: Final = 'status.conditions.#(type=="Complete")#|#(status=="True")#'
JOB_FAILURE_CONDITION: Final = 'status.conditions.#(type=="Failed")#|#(status=="True")#'


class TrialCondition:
    """Condition types (exact strings; ``Killed`` is declared by Katib but never set)."""

    CREATED = "Created"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    KILLED = "Killed"
    FAILED = "Failed"
    METRICS_UNAVAILABLE = "MetricsUnavailable"
    EARLY_STOPPED = "EarlyStopped"


class TrialReason:
    CREATED = "TrialCreated"
    RUNNING = "TrialRunning"
    SUCCEEDED = "TrialSucceeded"
    METRICS_UNAVAILABLE = "MetricsUnavailable"
    FAILED = "TrialFailed"
    EARLY_STOPPED = "TrialEarlyStopped"
    RUN_KIND_NOT_WATCHED = "RunKindNotWatched"  # ours: refused instead of left Running


class TrialMessage:
    CREATED = "Trial is created"
    RUNNING = "Trial is running"
    SUCCEEDED = "Trial has succeeded"
    METRICS_UNAVAILABLE = "Metrics are not available"
    FAILED = "Trial has failed"
    EARLY_STOPPED = "Trial is early stopped"


class JobEvent:
    """Event reasons about the run object (``trial_controller_status.go``)."""

    CREATED = "JobCreated"
    DELETED = "JobDeleted"
    SUCCEEDED = "JobSucceeded"
    METRICS_UNAVAILABLE = "MetricsUnavailable"
    FAILED = "JobFailed"
    RUNNING = "JobRunning"
