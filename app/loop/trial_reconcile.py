"""One Trial reconcile, the shell around the trial planner: gather, decide, act.

``gather_trial`` reads the Trial and its run object (same name, the kind its ``runSpec`` names);
the observation log is read only when ``core.plan.trial.wants_observation`` says the planner will
look at it (Katib fetches on exactly those passes); ``decide_trial`` decides; ``apply_trial``
performs the actions in order, the observation-log ones through the ``ObservationLog`` port and
the others as an Experiment reconcile's are. A failing action stops the pass (the loop backs
off and the next pass decides again), so the ``Push`` placeholder row is reported before the
Trial is marked MetricsUnavailable, or not at all.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from katib_resume.app.loop.reconcile import Parsed, apply
from katib_resume.core.actions import Action, ObjectRef
from katib_resume.core.config import KatibConfig
from katib_resume.core.katib import API_VERSION
from katib_resume.core.manifest import Manifest
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import MetricRow, ObservationLog, metric_names
from katib_resume.core.plan import Plan
from katib_resume.core.plan.trial import TrialContext, decide_trial, wants_observation
from katib_resume.core.plan.trial_draft import (
    DeleteObservations,
    ReportObservation,
    TrialPlan,
    trial_key,
)
from katib_resume.core.ports import Cluster, NotFound
from katib_resume.core.trial_run import Kind, run_kind, watched_kinds


@dataclass(frozen=True, slots=True)
class TrialWiring:
    """What a controller needs to run Trials: the observation log, and the bounded wait."""

    log: ObservationLog
    metrics_wait: float = 300.0
    served: frozenset[Kind] | None = None
    """The run kinds the cluster adapter watches (None: every kind katib-config names)."""

    def context(self, config: KatibConfig) -> TrialContext:
        """The planner's context under ``config``: the watched kinds are its ``trialResources``
        that the adapter actually watches (a kind whose CRD was missing at start is not).
        Made once per distinct ``trialResources`` (every Trial reconcile asks)."""
        return _context(config.init.controller.trial_resources, self.served, self.metrics_wait)


@functools.lru_cache(maxsize=16)
def _context(
    resources: tuple[str, ...], served: frozenset[Kind] | None, metrics_wait: float
) -> TrialContext:
    watched = watched_kinds(resources)
    if served is not None:
        watched &= served
    return TrialContext(watched=watched, metrics_wait=metrics_wait)


def as_plan(decided: TrialPlan | None) -> Plan:
    """A Trial's plan as the loop accounts for plans (the observation-log calls left out)."""
    if decided is None:
        return Plan()
    kept = [a for a in decided.actions if not isinstance(a, ReportObservation | DeleteObservations)]
    return Plan(tuple(kept))


def trial_ref(namespace: str, name: str) -> ObjectRef:
    return ObjectRef(API_VERSION, "Trial", namespace, name)


def gather_trial(
    cluster: Cluster, ref: ObjectRef, parsed: Parsed
) -> tuple[Trial | None, Manifest | None]:
    """The Trial (None: gone) and its run object (None: absent, or no kind to look for)."""
    try:
        trial = parsed.parse(Trial, cluster.get(ref))
    except NotFound:
        return None, None
    kind = run_kind(trial)
    if kind is None:
        return trial, None
    try:
        run = cluster.get(ObjectRef(kind[0], kind[1], trial.namespace, trial.metadata.name))
    except NotFound:
        return trial, None
    return trial, run


def apply_trial(cluster: Cluster, log: ObservationLog, decided: TrialPlan) -> float | None:
    """Perform ``decided`` in order; the shortest requested requeue delay, if any."""
    requeue: float | None = None
    pending: list[Action] = []
    for action in (*decided.actions, None):
        if action is not None and not isinstance(action, ReportObservation | DeleteObservations):
            pending.append(action)
            continue
        if pending:
            delay = apply(cluster, Plan(tuple(pending)))
            if delay is not None:
                requeue = delay if requeue is None else min(requeue, delay)
            pending = []
        if isinstance(action, ReportObservation):
            log.report(action.key, action.rows)
        elif isinstance(action, DeleteObservations):
            log.delete(action.key)
    return requeue


def reconcile_trial(
    cluster: Cluster,
    log: ObservationLog,
    ref: ObjectRef,
    context: TrialContext,
    now: datetime,
    *,
    parsed: Parsed | None = None,
) -> tuple[TrialPlan | None, float | None]:
    """Gather, decide, act for the Trial ``ref``: its plan (None: gone) and requeue delay."""
    trial, run = gather_trial(cluster, ref, parsed or Parsed())
    if trial is None:
        return None, None
    rows: tuple[MetricRow, ...] = ()
    if wants_observation(trial, run):
        rows = log.get(trial_key(trial), metric_names(trial.spec.objective))
    decided = decide_trial(trial, run, rows, context, now)
    return decided, apply_trial(cluster, log, decided)
