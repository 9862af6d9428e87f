"""The trial planner: from a Trial, its run object and its observation log to one reconcile.

``decide_trial`` is pure. It follows Katib's trial controller (TRIALS.md §3): the finalizer
first, ``Created`` in a pass of its own, then the run object (created from ``spec.runSpec`` when
missing, recreated if it disappears before the Trial completes, deleted once it completes unless
``retainRun``), judged by ``failureCondition`` then ``successCondition``; a succeeded run needs the
objective's observation to succeed. The shell fetches the observation-log rows before calling
when ``wants_observation`` says so (Katib fetches on exactly those passes).

Fixed Katib bugs (``docs/katib-differences.md``): a succeeded run whose metrics never arrive is
awaited for ``metrics_wait`` seconds (measured from the Running condition's update, which records
the start of the wait) and then ends ``MetricsUnavailable`` with a message saying why, where Katib
requeues it every second forever; a run kind that is not watched is refused before anything is
created; an EarlyStopped Trial gets its ``completionTime``, and its observation is refreshed
before its run object is deleted (Katib deletes it first, #1377); rows are keyed by namespace and
name; a run object of the Trial's name controlled by another object is never adopted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from katib_resume.core.actions import AddFinalizer, Create, RemoveFinalizer, Requeue
from katib_resume.core.conditions import ConditionSpec, Status, find
from katib_resume.core.katib_trial import TRIAL_FINALIZER, UNAVAILABLE, ZERO_TIME, JobEvent
from katib_resume.core.katib_trial import TrialCondition as C
from katib_resume.core.katib_trial import TrialMessage as M
from katib_resume.core.katib_trial import TrialReason as R
from katib_resume.core.kube import Manifest, format_time
from katib_resume.core.lifecycle.trial import TrialFacts, TrialState, condition_for, derive
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import (
    Metric,
    MetricRow,
    ObservationError,
    from_status,
    is_available,
    observe,
    strategies,
)
from katib_resume.core.plan.result import Step
from katib_resume.core.plan.trial_draft import (
    DeleteObservations,
    Draft,
    ReportObservation,
    TrialPlan,
    trial_key,
    trial_ref,
)
from katib_resume.core.run_status import RunOutcome, Verdict, default_conditions, judge
from katib_resume.core.trial_run import Kind, controller_uid, desired_run, refusal, watched_kinds

T = TrialState
AWAITING_METRICS = ConditionSpec(
    C.RUNNING, Status.TRUE, R.RUNNING, "Trial is running: its run has succeeded, awaiting metrics"
)


@dataclass(frozen=True, slots=True)
class TrialContext:
    watched: frozenset[Kind] = field(default_factory=watched_kinds)
    metrics_wait: float = 300.0
    poll: float = 1.0


def conditions_of(trial: Trial) -> tuple[str, str]:
    """``(success, failure)``: the Trial's own, or the batch Job defaults when it gives neither."""
    spec = trial.spec
    if spec.success_condition or spec.failure_condition:
        return spec.success_condition, spec.failure_condition
    run = spec.run_spec or {}
    return default_conditions(str(run.get("apiVersion", "")), str(run.get("kind", "")))


def verdict_of(trial: Trial, run: Manifest, state: TrialState) -> Verdict | None:
    success, failure = conditions_of(trial)
    return judge(run, success, failure, running=state is T.Running)


def wants_observation(trial: Trial, run: Manifest | None) -> bool:
    """Whether the shell should fetch the observation-log rows before ``decide_trial``."""
    if run is None or trial.metadata.is_deleting:
        return False
    state = derive(trial.status.conditions)
    if state is T.EarlyStopped:
        return True
    if state not in (T.Created, T.Running):
        return False
    verdict = verdict_of(trial, run, state)
    return verdict is not None and verdict.outcome is RunOutcome.SUCCEEDED


def decide_trial(
    trial: Trial,
    run: Manifest | None,
    rows: Sequence[MetricRow],
    context: TrialContext,
    now: datetime,
) -> TrialPlan:
    """One reconcile of ``trial`` whose run object is ``run`` (None: absent)."""
    state = derive(trial.status.conditions)
    meta = trial.metadata
    if meta.is_deleting:
        return TrialPlan(_step(state), _finalize(trial))
    if TRIAL_FINALIZER not in meta.finalizers:
        add = AddFinalizer(
            trial_ref(trial), TRIAL_FINALIZER, meta.finalizers, meta.resource_version
        )
        return TrialPlan(_step(state), (add,))
    draft = Draft.of(trial, state, now)
    if state is T.Pending:
        draft.move("created")
        if trial.status.start_time is None:
            draft.fields["startTime"] = format_time(now)
    elif state in (T.Created, T.Running):
        _active(draft, run, rows, context)
    else:
        _completed(draft, run, rows)
    return draft.plan(state)


def _step(state: TrialState) -> Step:
    return Step(state, state)


def _finalize(trial: Trial) -> tuple[DeleteObservations | RemoveFinalizer, ...]:
    """Katib's ``clean-metrics-in-db``: the rows go, then the finalizer (nothing else runs)."""
    meta = trial.metadata
    if TRIAL_FINALIZER not in meta.finalizers:
        return ()
    remove = RemoveFinalizer(
        trial_ref(trial), TRIAL_FINALIZER, meta.finalizers, meta.resource_version
    )
    return (DeleteObservations(trial_key(trial)), remove)


def _active(
    draft: Draft, run: Manifest | None, rows: Sequence[MetricRow], ctx: TrialContext
) -> None:
    trial = draft.trial
    name = trial.metadata.name
    if run is None:
        why = refusal(trial, ctx.watched)
        if why is not None:
            refused = ConditionSpec(C.FAILED, Status.TRUE, R.RUN_KIND_NOT_WATCHED, why)
            draft.move("run_refused", as_=refused)
            draft.event("Warning", R.RUN_KIND_NOT_WATCHED, why)
            return
        run = desired_run(trial)
        draft.before.append(Create(run))
        draft.event("Normal", JobEvent.CREATED, f"Job {name} has been created")
    elif not _is_ours(trial, run):
        owner = controller_uid(run)
        draft.event(
            "Warning", "RunOwnedElsewhere", f"Job {name} is controlled by {owner}: not adopted"
        )
        draft.requeue = Requeue(ctx.poll * 5, "run object of another owner")
        return
    verdict = verdict_of(trial, run, draft.state)
    if verdict is None:
        return
    if verdict.outcome is RunOutcome.RUNNING:
        if draft.move("run_started"):
            draft.event("Normal", JobEvent.RUNNING, f"Job {name} is running")
    elif verdict.outcome is RunOutcome.FAILED:
        _failed(draft, verdict)
    else:
        _succeeded(draft, verdict, rows, ctx)


def _is_ours(trial: Trial, run: Manifest) -> bool:
    owner, uid = controller_uid(run), trial.metadata.uid
    return not owner or not uid or owner == uid


def _failed(draft: Draft, verdict: Verdict) -> None:
    if draft.move("run_failed", as_=condition_for(T.Failed, verdict.reason, verdict.message)):
        detail = (
            f". {verdict.message} {verdict.reason}" if verdict.message or verdict.reason else ""
        )
        draft.event(
            "Normal", JobEvent.FAILED, f"Job {draft.trial.metadata.name} has failed{detail}"
        )


def _observation(draft: Draft, rows: Sequence[MetricRow]) -> tuple[Metric, ...] | None:
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


def _succeeded(
    draft: Draft, verdict: Verdict, rows: Sequence[MetricRow], ctx: TrialContext
) -> None:
    trial = draft.trial
    objective = trial.spec.objective
    metrics = _observation(draft, rows)
    push = trial.spec.collector_kind == "Push"
    if metrics is None and not push:
        _await_metrics(draft, verdict, ctx)
        return
    objective_name = objective.objective_metric_name if objective else None
    available = is_available(metrics or (), objective_name)
    facts = TrialFacts(is_observation_available=available, is_objective_unavailable=not available)
    name = trial.metadata.name
    if available:
        draft.move(
            "run_succeeded", facts, condition_for(T.Succeeded, verdict.reason, verdict.message)
        )
        draft.event("Normal", JobEvent.SUCCEEDED, f"Job {name} has succeeded")
        return
    if push and objective_name:
        row = MetricRow(ZERO_TIME, objective_name, UNAVAILABLE)
        draft.before.append(ReportObservation(trial_key(trial), (row,)))
    unavailable = condition_for(T.MetricsUnavailable, verdict.reason, verdict.message)
    draft.move("run_succeeded", facts, unavailable)
    draft.event(
        "Warning", JobEvent.METRICS_UNAVAILABLE, f"Metrics are not available for Job {name}"
    )


def _await_metrics(draft: Draft, verdict: Verdict, ctx: TrialContext) -> None:
    """The bounded wait for metrics of a succeeded run (Katib: every second, forever)."""
    draft.requeue = Requeue(ctx.poll, "metrics are not reported yet")
    if draft.state is T.Created:
        if draft.move("run_started", as_=AWAITING_METRICS):
            draft.event("Normal", JobEvent.RUNNING, f"Job {draft.trial.metadata.name} is running")
        return
    running = find(draft.conditions, C.RUNNING)
    if (
        running is None
        or running.message != AWAITING_METRICS.message
        or not running.last_update_time
    ):
        draft.rewrite(AWAITING_METRICS)
        return
    waited = (draft.now - running.last_update_time).total_seconds()
    if waited < ctx.metrics_wait:
        draft.requeue = Requeue(min(ctx.poll, ctx.metrics_wait - waited), draft.requeue.reason)
        return
    draft.requeue = None
    why = (
        f"{M.METRICS_UNAVAILABLE}: none were reported within {ctx.metrics_wait:g}s after the run "
        "succeeded (is the namespace labelled katib.kubeflow.org/metrics-collector-injection="
        "enabled, and did the metrics collector reach katib-db-manager?)"
    )
    base = condition_for(T.MetricsUnavailable, verdict.reason, verdict.message)
    draft.move("metrics_wait_expired", as_=ConditionSpec(base.type, base.status, base.reason, why))
    name = draft.trial.metadata.name
    draft.event(
        "Warning", JobEvent.METRICS_UNAVAILABLE, f"Metrics are not available for Job {name}"
    )


def _completed(draft: Draft, run: Manifest | None, rows: Sequence[MetricRow]) -> None:
    trial = draft.trial
    if draft.state is T.EarlyStopped:
        if trial.status.completion_time is None:
            draft.fields["completionTime"] = format_time(draft.now)
        _observation(draft, rows)
    if run is None or trial.spec.retain_run or not _is_ours(trial, run):
        return
    if (run.get("metadata") or {}).get("deletionTimestamp"):
        return  # foreground deletion in progress: Katib deletes (and tells) again every pass
    draft.delete(run)
    draft.event("Normal", JobEvent.DELETED, f"Job {trial.metadata.name} has been deleted")
