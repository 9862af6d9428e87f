"""A succeeded run and its metrics: the observation, Succeeded or MetricsUnavailable, and the
bounded wait for metrics that have not arrived (TRIALS.md §3.3 steps 3-5, §3.5, §4.6).

A run that succeeded needs the objective's observation. Rows from the log become the observation
(``core.observation``); with none, a ``Push`` Trial reports the ``unavailable`` placeholder and
ends MetricsUnavailable at once, as Katib does, and any other Trial waits: Katib requeues it
every second forever (#1795), here for ``TrialContext.metrics_wait`` seconds. The start of the
wait is recorded where it is visible and costs no field of ours: the Running condition's message
says "awaiting metrics", and its ``lastUpdateTime`` is when that began.
"""

from __future__ import annotations

from collections.abc import Sequence

from katib_resume.core.actions import Requeue
from katib_resume.core.conditions import find
from katib_resume.core.katib_trial import UNAVAILABLE, ZERO_TIME, JobEvent
from katib_resume.core.katib_trial import TrialCondition as C
from katib_resume.core.katib_trial import TrialMessage as M
from katib_resume.core.lifecycle.states import Report
from katib_resume.core.lifecycle.trial import TrialFacts, TrialState
from katib_resume.core.observation import (
    Metric,
    MetricRow,
    ObservationError,
    from_status,
    is_available,
    observe,
    strategies,
)
from katib_resume.core.plan.trial_draft import Draft, ReportObservation, TrialContext, trial_key
from katib_resume.core.run_status import Verdict

T = TrialState
AWAITING_METRICS = Report(message="Trial is running: its run has succeeded, awaiting metrics")
"""Running, written with this message while a succeeded run's metrics are awaited."""


def observation(draft: Draft, rows: Sequence[MetricRow]) -> tuple[Metric, ...] | None:
    """The observation after ``rows`` (recorded in the draft when they gave one), else the
    stored one; rows that cannot be read are reported and count as none."""
    objective = draft.trial.spec.objective
    extra = draft.trial.status.model_extra or {}
    stored = from_status(extra.get("observation"))
    if not rows:
        return stored
    try:
        metrics = observe((name for name, _ in strategies(objective)), rows)
    except ObservationError as error:
        draft.event("Warning", "ObservationUnreadable", str(error))
        return stored
    if metrics != stored:
        draft.observe(metrics)
    return metrics


def succeeded(draft: Draft, verdict: Verdict, rows: Sequence[MetricRow], ctx: TrialContext) -> None:
    """The run succeeded: Succeeded with the objective, MetricsUnavailable without, or wait."""
    metrics = observation(draft, rows)
    push = draft.trial.spec.collector_kind == "Push"
    if metrics is None and not push:
        _await_metrics(draft, verdict, ctx)
        return
    objective = draft.trial.spec.objective
    objective_name = objective.objective_metric_name if objective else None
    available = is_available(metrics or (), objective_name)
    facts = TrialFacts(is_observation_available=available, is_objective_unavailable=not available)
    report = Report(verdict.reason, verdict.message)
    if available:
        draft.move("run_succeeded", facts, report)
        draft.event("Normal", JobEvent.SUCCEEDED, f"Job {draft.trial.metadata.name} has succeeded")
        return
    if push and objective_name:
        row = MetricRow(ZERO_TIME, objective_name, UNAVAILABLE)
        draft.before.append(ReportObservation(trial_key(draft.trial), (row,)))
    draft.move("run_succeeded", facts, report)
    _tell_unavailable(draft)


def _await_metrics(draft: Draft, verdict: Verdict, ctx: TrialContext) -> None:
    """The bounded wait for metrics of a succeeded run (Katib: every second, forever)."""
    draft.requeue = Requeue(ctx.poll, "metrics are not reported yet")
    if draft.state is T.Created:
        if draft.move("run_started", report=AWAITING_METRICS):
            draft.event("Normal", JobEvent.RUNNING, f"Job {draft.trial.metadata.name} is running")
        return
    running = find(draft.conditions, C.RUNNING)
    since = running.last_update_time if running is not None else None
    if running is None or running.message != AWAITING_METRICS.message or since is None:
        draft.rewrite(AWAITING_METRICS)  # the wait starts now
        return
    waited = (draft.now - since).total_seconds()
    if waited < ctx.metrics_wait:
        draft.requeue = Requeue(min(ctx.poll, ctx.metrics_wait - waited), draft.requeue.reason)
        return
    draft.requeue = None
    _wait_expired(draft, verdict, ctx)


def _wait_expired(draft: Draft, verdict: Verdict, ctx: TrialContext) -> None:
    why = (
        f"{M.METRICS_UNAVAILABLE}: none were reported within {ctx.metrics_wait:g}s after the run "
        "succeeded (is the namespace labelled katib.kubeflow.org/metrics-collector-injection="
        "enabled, and did the metrics collector reach katib-db-manager?)"
    )
    draft.move("metrics_wait_expired", report=Report(job_reason=verdict.reason, message=why))
    _tell_unavailable(draft)


def _tell_unavailable(draft: Draft) -> None:
    name = draft.trial.metadata.name
    message = f"Metrics are not available for Job {name}"
    draft.event("Warning", JobEvent.METRICS_UNAVAILABLE, message)
