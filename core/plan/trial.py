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
from datetime import datetime

from katib_resume.core.actions import AddFinalizer, Create, RemoveFinalizer, Requeue
from katib_resume.core.katib_trial import TRIAL_FINALIZER, JobEvent
from katib_resume.core.katib_trial import TrialReason as R
from katib_resume.core.kube import Manifest, format_time
from katib_resume.core.lifecycle.states import Report
from katib_resume.core.lifecycle.trial import TrialState, derive
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import MetricRow
from katib_resume.core.plan.result import Step
from katib_resume.core.plan.trial_draft import (
    DeleteObservations,
    Draft,
    TrialAction,
    TrialContext,
    TrialPlan,
    trial_key,
    trial_ref,
)
from katib_resume.core.plan.trial_metrics import AWAITING_METRICS, observation, succeeded
from katib_resume.core.run_status import RunOutcome, Verdict, default_conditions, judge
from katib_resume.core.trial_run import controller_uid, desired_run, refusal

T = TrialState
__all__ = ["AWAITING_METRICS", "TrialContext", "decide_trial", "wants_observation"]


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
    if meta.is_deleting or TRIAL_FINALIZER not in meta.finalizers:
        return TrialPlan(Step(state, state), _finalizer(trial))
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


def _finalizer(trial: Trial) -> tuple[TrialAction, ...]:
    """Katib's ``clean-metrics-in-db``, alone in its pass: added to a live Trial; on a deleted
    one, the rows go, then the finalizer."""
    meta, ref = trial.metadata, trial_ref(trial)
    if not meta.is_deleting:
        return (AddFinalizer(ref, TRIAL_FINALIZER, meta.finalizers, meta.resource_version),)
    if TRIAL_FINALIZER not in meta.finalizers:
        return ()
    remove = RemoveFinalizer(ref, TRIAL_FINALIZER, meta.finalizers, meta.resource_version)
    return (DeleteObservations(trial_key(trial)), remove)


def _active(
    draft: Draft, run: Manifest | None, rows: Sequence[MetricRow], ctx: TrialContext
) -> None:
    run = _the_run(draft, run, ctx)
    if run is None:
        return
    verdict = verdict_of(draft.trial, run, draft.state)
    if verdict is None:
        return
    if verdict.outcome is RunOutcome.RUNNING:
        if draft.move("run_started"):
            draft.event("Normal", JobEvent.RUNNING, f"Job {draft.trial.metadata.name} is running")
    elif verdict.outcome is RunOutcome.FAILED:
        _failed(draft, verdict)
    else:
        succeeded(draft, verdict, rows, ctx)


def _the_run(draft: Draft, run: Manifest | None, ctx: TrialContext) -> Manifest | None:
    """The run object to judge: the observed one, or the one created now (None: none to judge,
    because the Trial was refused or the object of its name is another's)."""
    trial, name = draft.trial, draft.trial.metadata.name
    if run is not None:
        if _is_ours(trial, run):
            return run
        owner = controller_uid(run)
        message = f"Job {name} is controlled by {owner}: not adopted"
        draft.event("Warning", "RunOwnedElsewhere", message)
        draft.requeue = Requeue(ctx.poll * 5, "run object of another owner")
        return None
    why = refusal(trial, ctx.watched)
    if why is not None:
        draft.move("run_refused", report=Report(reason=R.RUN_KIND_NOT_WATCHED, message=why))
        draft.event("Warning", R.RUN_KIND_NOT_WATCHED, why)
        return None
    run = desired_run(trial)
    draft.before.append(Create(run))
    draft.event("Normal", JobEvent.CREATED, f"Job {name} has been created")
    return run


def _is_ours(trial: Trial, run: Manifest) -> bool:
    owner, uid = controller_uid(run), trial.metadata.uid
    return not owner or not uid or owner == uid


def _failed(draft: Draft, verdict: Verdict) -> None:
    if draft.move("run_failed", report=Report(verdict.reason, verdict.message)):
        detail = (
            f". {verdict.message} {verdict.reason}" if verdict.message or verdict.reason else ""
        )
        draft.event(
            "Normal", JobEvent.FAILED, f"Job {draft.trial.metadata.name} has failed{detail}"
        )


def _completed(draft: Draft, run: Manifest | None, rows: Sequence[MetricRow]) -> None:
    trial = draft.trial
    if draft.state is T.EarlyStopped:
        if trial.status.completion_time is None:
            draft.fields["completionTime"] = format_time(draft.now)
        if run is not None:  # refreshed while the run object exists (``wants_observation``)
            observation(draft, rows)
    if run is None or trial.spec.retain_run or not _is_ours(trial, run):
        return
    if (run.get("metadata") or {}).get("deletionTimestamp"):
        return  # foreground deletion in progress: Katib deletes (and tells) again every pass
    draft.delete(run)
    draft.event("Normal", JobEvent.DELETED, f"Job {trial.metadata.name} has been deleted")
