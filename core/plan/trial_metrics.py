"""A succeeded run and its metrics: the observation, Succeeded or MetricsUnavailable, and the
bounded wait for metrics that have not arrived (docs/katib-contract.md#trial-controller,
docs/katib-contract.md#trial-conditions, docs/katib-contract.md#push-metrics).

A run that succeeded needs the objective's observation. Rows from the log become the observation
(``core.observation``); with none, a ``Push`` Trial reports the ``unavailable`` placeholder and
ends MetricsUnavailable at once, as Katib does, and any other Trial waits: Katib requeues it
every second forever (#1795), here for ``TrialContext.metrics_wait`` seconds. The start of the
wait is recorded where it is visible and costs no field of ours: the Running condition's message
says "awaiting metrics", and its ``lastUpdateTime`` is when that began.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from katib_resume.core.actions import Requeue
from katib_resume.core.conditions import find
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
from katib_resume.core.plan.trial_draft import NO_FACTS, Draft, TrialContext

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


@dataclass(frozen=True, slots=True)
class Judged:
    """What a succeeded run's metrics say: the guards of ``run_succeeded`` (neither holds while
    the metrics are awaited), whether they are awaited and whether that wait has expired."""

    facts: TrialFacts = NO_FACTS
    awaited: bool = False
    expired: bool = False


UNJUDGED = Judged()


def judge_metrics(draft: Draft, rows: Sequence[MetricRow], ctx: TrialContext) -> Judged:
    """The run succeeded: its observation decides Succeeded or MetricsUnavailable, or the metrics
    are awaited (a ``Push`` Trial reports none: it is decided at once)."""
    metrics = observation(draft, rows)
    if metrics is None and draft.trial.spec.collector_kind != "Push":
        return Judged(awaited=True, expired=_await_metrics(draft, ctx))
    objective = draft.trial.spec.objective
    objective_name = objective.objective_metric_name if objective else None
    available = is_available(metrics or (), objective_name)
    return Judged(TrialFacts(available, not available))


def _await_metrics(draft: Draft, ctx: TrialContext) -> bool:
    """The bounded wait for metrics of a succeeded run (Katib: every second, forever); True
    once it has expired. From Created the wait starts with ``run_started``."""
    draft.requeue = Requeue(ctx.poll, "metrics are not reported yet")
    if draft.state is T.Created:
        return False
    running = find(draft.conditions, C.RUNNING)
    since = running.last_update_time if running is not None else None
    if running is None or running.message != AWAITING_METRICS.message or since is None:
        draft.rewrite(AWAITING_METRICS)  # the wait starts now
        return False
    waited = (draft.now - since).total_seconds()
    if waited < ctx.metrics_wait:
        draft.requeue = Requeue(min(ctx.poll, ctx.metrics_wait - waited), draft.requeue.reason)
        return False
    draft.requeue = None
    return True


def wait_expired(metrics_wait: float) -> str:
    """The MetricsUnavailable message after the wait: why, and what usually causes it."""
    return (
        f"{M.METRICS_UNAVAILABLE}: none were reported within {metrics_wait:g}s after the run "
        "succeeded (is the namespace labelled katib.kubeflow.org/metrics-collector-injection="
        "enabled, and did the metrics collector reach katib-db-manager?)"
    )
