"""The trial planner: from a Trial, its run object and its observation log to one reconcile.

``decide_trial`` is pure. It follows Katib's trial controller
(docs/katib-contract.md#trial-controller): the finalizer first, ``Created`` in a pass of its own,
then the run object (created from ``spec.runSpec`` when missing, recreated if it disappears before
the Trial completes, deleted once it completes unless ``retainRun``), judged by ``failureCondition``
then ``successCondition``; a succeeded run needs the objective's observation to succeed. What the
run object says becomes ``TrialSignals``; the lifecycle's detectors pick the trigger, and
``trial_effects`` says what it reports and tells. The shell fetches the observation-log rows before
calling when ``wants_observation`` says so (Katib fetches on exactly those passes).

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
from katib_resume.core.lifecycle.trial import TrialSignals, TrialState, derive
from katib_resume.core.manifest import Manifest, format_time
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
from katib_resume.core.plan.trial_effects import Seen
from katib_resume.core.plan.trial_metrics import (
    AWAITING_METRICS,
    UNJUDGED,
    judge_metrics,
    observation,
)
from katib_resume.core.run_status import RunOutcome, Verdict, default_conditions, judge
from katib_resume.core.trial_run import controller_uid, desired_run, refusal

T = TrialState
QUIET = TrialSignals()
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
        draft.step(QUIET)  # ``created``: in a pass of its own
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
    """The run object decides: the signals of what it says, then the first trigger the
    lifecycle's detectors find, with its report and events (``trial_effects``)."""
    run, why = _the_run(draft, run, ctx)
    verdict = None if run is None else verdict_of(draft.trial, run, draft.state)
    outcome = None if verdict is None else verdict.outcome
    judged = judge_metrics(draft, rows, ctx) if outcome is RunOutcome.SUCCEEDED else UNJUDGED
    signals = TrialSignals(
        refused=why is not None,
        failed=outcome is RunOutcome.FAILED,
        succeeded=outcome is RunOutcome.SUCCEEDED,
        wait_expired=judged.expired,
        started=outcome is RunOutcome.RUNNING or judged.awaited,
    )
    seen = Seen(verdict, why, judged.awaited, ctx.metrics_wait)
    trigger = draft.step(signals, judged.facts, seen.report)
    if trigger is not None:
        seen.tell(draft, trigger)


def _the_run(
    draft: Draft, run: Manifest | None, ctx: TrialContext
) -> tuple[Manifest | None, str | None]:
    """The run object to judge: the observed one, or the one created now; None when there is
    none to judge, with why when the Trial is refused (the object of its name is another's
    otherwise)."""
    trial, name = draft.trial, draft.trial.metadata.name
    if run is not None:
        if _is_ours(trial, run):
            return run, None
        owner = controller_uid(run)
        message = f"Job {name} is controlled by {owner}: not adopted"
        draft.event("Warning", "RunOwnedElsewhere", message)
        draft.requeue = Requeue(ctx.poll * 5, "run object of another owner")
        return None, None
    why = refusal(trial, ctx.watched)
    if why is not None:
        return None, why
    run = desired_run(trial)
    draft.before.append(Create(run))
    draft.event("Normal", JobEvent.CREATED, f"Job {name} has been created")
    return run, None


def _is_ours(trial: Trial, run: Manifest) -> bool:
    owner, uid = controller_uid(run), trial.metadata.uid
    return not owner or not uid or owner == uid


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
