"""How a Trial ended, and the Trial status that says so in Katib's words.

Katib's trial controller marks a started Trial ``Created`` then ``Running``; when its Job ends it
sets ``Running`` to False (keeping the reason and message it had) and appends one terminal
condition: ``Succeeded`` when the objective metric was observed, ``MetricsUnavailable`` when the
Job succeeded without it, ``Failed`` when the Job failed. The core classifies Trials by those
conditions (``core.trials.classify``), so the types, reasons and messages are Katib's own; the
one addition is ``TrialLost`` (a Failed reason), for a Trial whose runner died too many times.
Other status fields (``startTime``, anything a newer Katib writes) are kept. The conditions are
written by the Trial lifecycle's own ``mark`` (``core.lifecycle.trial``), the table the cluster's
trial planner writes with, so both runtimes leave the same condition lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from katib_resume.adapters.local.trials.metrics import MetricRecord
from katib_resume.core.conditions import Conditions, ConditionSpec, Status, is_true
from katib_resume.core.lifecycle.states import Report
from katib_resume.core.lifecycle.trial import TrialState, condition_for, mark
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model.trial import Trial

T = TrialState
CREATED = condition_for(T.Created)
RUNNING = condition_for(T.Running)
TERMINAL_TYPES = ("Succeeded", "Failed", "Killed", "EarlyStopped", "MetricsUnavailable")
REASON_FAILED = condition_for(T.Failed).reason
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
            return cls(condition_for(T.Succeeded), records)
        missing = records[0].name if records else "(none named)"
        message = f"Metrics are not available: objective metric {missing} was not reported"
        base = condition_for(T.MetricsUnavailable)
        return cls(ConditionSpec(base.type, base.status, base.reason, message), records)

    @property
    def state(self) -> TrialState:
        return TrialState(self.condition.type)


def is_terminal(trial: Trial) -> bool:
    return any(is_true(trial.status.conditions, type_) for type_ in TERMINAL_TYPES)


def is_running(trial: Trial) -> bool:
    return is_true(trial.status.conditions, RUNNING.type)


def started_status(trial: Trial, now: datetime) -> Manifest:
    """The status of a Trial that starts now: ``Created`` and ``Running`` True."""
    conditions = mark(T.Running, mark(T.Created, trial.status.conditions, now), now)
    return _status(trial, conditions, startTime=format_time(now))


def finished_status(trial: Trial, outcome: Outcome, now: datetime) -> Manifest:
    """``Running`` False (its reason and message kept, as Katib does), then the outcome."""
    written = Report(reason=outcome.condition.reason, message=outcome.condition.message)
    conditions = mark(outcome.state, trial.status.conditions, now, written)
    extra: dict[str, Any] = {"completionTime": format_time(now)}
    if outcome.metrics:
        extra["observation"] = {"metrics": [m.to_dict() for m in outcome.metrics]}
    return _status(trial, conditions, **extra)


def _status(trial: Trial, conditions: Conditions, **fields: Any) -> Manifest:
    status = trial.status.to_dict()
    status.update(fields, conditions=[c.to_dict() for c in conditions])
    return status
