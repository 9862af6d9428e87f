"""How a Trial ended, and the Trial status that says so in Katib's words.

Katib's trial controller marks a started Trial ``Created`` then ``Running``; when its Job ends it
sets ``Running`` to False (keeping the reason and message it had) and appends one terminal
condition: ``Succeeded`` when the objective metric was observed, ``MetricsUnavailable`` when the
Job succeeded without it, ``Failed`` when the Job failed. The core classifies Trials by those
conditions (``core.trials.classify``), so the types, reasons and messages are Katib's own; the
one addition is ``TrialLost`` (a Failed reason), for a Trial whose runner died too many times.
Other status fields (``startTime``, anything a newer Katib writes) are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from katib_resume.adapters.local.trials.metrics import MetricRecord
from katib_resume.core.conditions import Conditions, ConditionSpec, Status, is_true, set_all
from katib_resume.core.kube import Manifest, format_time
from katib_resume.core.model.trial import Trial

CREATED = ConditionSpec("Created", Status.TRUE, "TrialCreated", "Trial is created")
RUNNING = ConditionSpec("Running", Status.TRUE, "TrialRunning", "Trial is running")
TERMINAL_TYPES = ("Succeeded", "Failed", "Killed", "EarlyStopped", "MetricsUnavailable")
REASON_FAILED = "TrialFailed"
REASON_LOST = "TrialLost"  # ours: the runner died while running it, max_attempts times


@dataclass(frozen=True, slots=True)
class Outcome:
    """The terminal condition of a finished Trial and the metrics it observed."""

    condition: ConditionSpec
    metrics: tuple[MetricRecord, ...] = ()

    @classmethod
    def failed(cls, message: str, reason: str = REASON_FAILED) -> Outcome:
        return cls(ConditionSpec("Failed", Status.TRUE, reason, message))

    @classmethod
    def observed(cls, metrics: Sequence[MetricRecord]) -> Outcome:
        """Succeeded if the objective metric (the first record) was seen, else unavailable."""
        records = tuple(metrics)
        if records and records[0].available:
            spec = ConditionSpec("Succeeded", Status.TRUE, "TrialSucceeded", "Trial has succeeded")
            return cls(spec, records)
        missing = records[0].name if records else "(none named)"
        message = f"Metrics are not available: objective metric {missing} was not reported"
        spec = ConditionSpec("MetricsUnavailable", Status.TRUE, "MetricsUnavailable", message)
        return cls(spec, records)


def is_terminal(trial: Trial) -> bool:
    return any(is_true(trial.status.conditions, type_) for type_ in TERMINAL_TYPES)


def is_running(trial: Trial) -> bool:
    return is_true(trial.status.conditions, RUNNING.type)


def started_status(trial: Trial, now: datetime) -> Manifest:
    """The status of a Trial that starts now: ``Created`` and ``Running`` True."""
    conditions = set_all(trial.status.conditions, (CREATED, RUNNING), now)
    return _status(trial, conditions, startTime=format_time(now))


def finished_status(trial: Trial, outcome: Outcome, now: datetime) -> Manifest:
    """``Running`` False (its reason and message kept, as Katib does), then the outcome."""
    old = next((c for c in trial.status.conditions if c.type == "Running"), None)
    stopped = ConditionSpec(
        "Running",
        Status.FALSE,
        old.reason if old else RUNNING.reason,
        old.message if old else RUNNING.message,
    )
    conditions = set_all(trial.status.conditions, (stopped, outcome.condition), now)
    extra: dict[str, Any] = {"completionTime": format_time(now)}
    if outcome.metrics:
        extra["observation"] = {"metrics": [m.to_dict() for m in outcome.metrics]}
    return _status(trial, conditions, **extra)


def _status(trial: Trial, conditions: Conditions, **fields: Any) -> Manifest:
    status = trial.status.to_dict()
    status.update(fields, conditions=[c.to_dict() for c in conditions])
    return status
