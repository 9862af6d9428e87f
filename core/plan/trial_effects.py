"""What each Trial trigger writes and tells: its ``Report`` and its events, per trigger.

The trial planner gathers what it saw of the run object in one reconcile (``Seen``), lets the
lifecycle's detectors pick the trigger (``core.lifecycle.trial.DETECTORS``), and then looks the
trigger up here: ``EFFECTS`` says, per trigger, what the new state's condition reports (Katib's
``. Job reason: ...`` suffixes, or our own words for a refusal or an expired wait) and which
events Katib's trial controller records for it (``trial_controller_status.go``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from katib_resume.core.katib_trial import UNAVAILABLE, ZERO_TIME, JobEvent
from katib_resume.core.katib_trial import TrialReason as R
from katib_resume.core.lifecycle.states import NO_REPORT, Report
from katib_resume.core.lifecycle.trial import TRIAL, TrialState
from katib_resume.core.observation import MetricRow
from katib_resume.core.plan.trial_draft import Draft, ReportObservation, trial_key
from katib_resume.core.plan.trial_metrics import AWAITING_METRICS, wait_expired
from katib_resume.core.run_status import Verdict


@dataclass(frozen=True, slots=True)
class Seen:
    """What one reconcile saw of the run object."""

    verdict: Verdict | None = None
    refusal: str | None = None
    """Why no run object may be created (its kind is not watched)."""
    awaited: bool = False
    """It succeeded and its metrics are awaited."""
    metrics_wait: float = 0.0

    def report(self, trigger: str) -> Report:
        return EFFECTS[trigger].report(self)

    def tell(self, draft: Draft, trigger: str) -> None:
        EFFECTS[trigger].tell(draft, self)


def _plain(seen: Seen) -> Report:
    return NO_REPORT


def _job(seen: Seen) -> Report:
    verdict = seen.verdict
    return NO_REPORT if verdict is None else Report(verdict.reason, verdict.message)


def _refused(seen: Seen) -> Report:
    return Report(reason=R.RUN_KIND_NOT_WATCHED, message=seen.refusal)


def _started(seen: Seen) -> Report:
    return AWAITING_METRICS if seen.awaited else NO_REPORT


def _expired(seen: Seen) -> Report:
    reason = seen.verdict.reason if seen.verdict is not None else ""
    return Report(job_reason=reason, message=wait_expired(seen.metrics_wait))


def _nothing(draft: Draft, seen: Seen) -> None:
    return None


def _tell_started(draft: Draft, seen: Seen) -> None:
    draft.event("Normal", JobEvent.RUNNING, f"Job {draft.trial.metadata.name} is running")


def _tell_failed(draft: Draft, seen: Seen) -> None:
    verdict = seen.verdict
    reason, message = (verdict.reason, verdict.message) if verdict is not None else ("", "")
    detail = f". {message} {reason}" if message or reason else ""
    draft.event("Normal", JobEvent.FAILED, f"Job {draft.trial.metadata.name} has failed{detail}")


def _tell_succeeded(draft: Draft, seen: Seen) -> None:
    trial = draft.trial
    if draft.state is TrialState.Succeeded:
        draft.event("Normal", JobEvent.SUCCEEDED, f"Job {trial.metadata.name} has succeeded")
        return
    objective = trial.spec.objective
    objective_name = objective.objective_metric_name if objective else None
    if trial.spec.collector_kind == "Push" and objective_name:
        row = MetricRow(ZERO_TIME, objective_name, UNAVAILABLE)
        draft.before.append(ReportObservation(trial_key(trial), (row,)))
    _tell_unavailable(draft, seen)


def _tell_unavailable(draft: Draft, seen: Seen) -> None:
    message = f"Metrics are not available for Job {draft.trial.metadata.name}"
    draft.event("Warning", JobEvent.METRICS_UNAVAILABLE, message)


def _tell_refused(draft: Draft, seen: Seen) -> None:
    draft.event("Warning", R.RUN_KIND_NOT_WATCHED, seen.refusal or "")


@dataclass(frozen=True, slots=True)
class Effect:
    report: Callable[[Seen], Report]
    tell: Callable[[Draft, Seen], None]


EFFECTS: dict[str, Effect] = {
    "created": Effect(_plain, _nothing),
    "run_refused": Effect(_refused, _tell_refused),
    "run_failed": Effect(_job, _tell_failed),
    "run_succeeded": Effect(_job, _tell_succeeded),
    "metrics_wait_expired": Effect(_expired, _tell_unavailable),
    "run_started": Effect(_started, _tell_started),
}
"""Per trigger the planner fires (``early_stopped`` is the early-stopping service's)."""

if set(EFFECTS) != {detector.trigger for detector in TRIAL.detectors}:
    raise ValueError("trial_effects: one effect per detected trigger")
