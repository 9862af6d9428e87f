"""What one Trial reconcile accumulates before it becomes a plan: the lifecycle state, the
conditions and status fields it rewrites, and the actions around the status write.

The trial planner (``core.plan.trial``) makes its decisions in small steps; each step records
into this draft, and ``plan`` turns it into Katib's order of effects: the run object created and
a ``Push`` placeholder reported first, then the status (written only when it changed), then the
run object deleted, the events, and a requeue when the world is awaited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from katib_resume.core.actions import (
    Action,
    Delete,
    EventType,
    ObjectRef,
    RecordEvent,
    Requeue,
    UpdateStatus,
)
from katib_resume.core.conditions import Conditions
from katib_resume.core.lifecycle.states import NO_REPORT, Report
from katib_resume.core.lifecycle.trial import (
    COMPLETED,
    TRIAL,
    TrialFacts,
    TrialSignals,
    TrialState,
    mark,
)
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.model.trial import Trial
from katib_resume.core.observation import Metric, MetricRow, TrialKey
from katib_resume.core.plan.result import Step
from katib_resume.core.trial_run import Kind, watched_kinds


@dataclass(frozen=True, slots=True)
class ReportObservation:
    """Insert rows into the Trial's observation log (the ``Push`` ``unavailable`` placeholder)."""

    key: TrialKey
    rows: tuple[MetricRow, ...]


@dataclass(frozen=True, slots=True)
class DeleteObservations:
    """Delete the Trial's observation-log rows (the ``clean-metrics-in-db`` finalizer's work)."""

    key: TrialKey


NO_FACTS = TrialFacts()


@dataclass(frozen=True, slots=True)
class TrialContext:
    """What the trial planner is told besides the Trial: the run kinds that are watched (from
    katib-config's ``trialResources``), how long a succeeded run's metrics are awaited, and how
    often to look meanwhile (Katib's 1 s)."""

    watched: frozenset[Kind] = field(default_factory=watched_kinds)
    metrics_wait: float = 300.0
    poll: float = 1.0


TrialAction = Action | ReportObservation | DeleteObservations


@dataclass(frozen=True, slots=True)
class TrialPlan:
    step: Step
    actions: tuple[TrialAction, ...] = ()


def trial_ref(trial: Trial) -> ObjectRef:
    return ObjectRef(trial.api_version, "Trial", trial.namespace, trial.metadata.name)


def trial_key(trial: Trial) -> TrialKey:
    return TrialKey(trial.namespace, trial.metadata.name)


@dataclass
class Draft:
    trial: Trial
    now: datetime
    state: TrialState
    conditions: Conditions
    trigger: str | None = None
    fields: dict[str, object] = field(default_factory=dict)
    before: list[TrialAction] = field(default_factory=list)
    after: list[TrialAction] = field(default_factory=list)
    events: list[TrialAction] = field(default_factory=list)
    requeue: Requeue | None = None

    @classmethod
    def of(cls, trial: Trial, state: TrialState, now: datetime) -> Draft:
        return cls(trial, now, state, trial.status.conditions)

    def step(
        self,
        signals: TrialSignals,
        facts: TrialFacts = NO_FACTS,
        report: Callable[[str], Report] = lambda trigger: NO_REPORT,
    ) -> str | None:
        """Fire the first trigger the detectors find (``Lifecycle.step``); on a move, write the
        new state with the trigger's ``report`` (and ``completionTime``)."""
        trigger, after = TRIAL.step(self.state, signals, facts)
        if trigger is None:
            return None
        self.conditions = mark(after, self.conditions, self.now, report(trigger))
        if after in COMPLETED:
            self.fields["completionTime"] = format_time(self.now)
        self.state, self.trigger = after, trigger
        return trigger

    def rewrite(self, report: Report) -> None:
        """Write the current state with another report (no transition)."""
        self.conditions = mark(self.state, self.conditions, self.now, report)

    def observe(self, metrics: tuple[Metric, ...]) -> None:
        self.fields["observation"] = {"metrics": [metric.to_dict() for metric in metrics]}

    def event(self, type_: EventType, reason: str, message: str) -> None:
        self.events.append(RecordEvent(trial_ref(self.trial), type_, reason, message))

    def delete(self, run: Manifest) -> None:
        meta = run["metadata"]
        ref = ObjectRef(run["apiVersion"], run["kind"], meta.get("namespace"), meta["name"])
        self.after.append(Delete(ref, str(meta.get("uid") or "")))

    def plan(self, before: TrialState) -> TrialPlan:
        status = self._status()
        writes: list[TrialAction] = [*self.before]
        if status is not None:
            rv = self.trial.metadata.resource_version
            writes.append(UpdateStatus(trial_ref(self.trial), status, rv))
        actions = [*writes, *self.after, *self.events]
        if self.requeue is not None:
            actions.append(self.requeue)
        step = Step(before, self.state, self.trigger if self.state is not before else None)
        return TrialPlan(step, tuple(actions))

    def _status(self) -> Manifest | None:
        """The new status, or None when it equals the observed one (no no-op writes)."""
        old = self.trial.status.to_dict()
        new = dict(old)
        if self.conditions is not self.trial.status.conditions:
            new["conditions"] = [c.to_dict() for c in self.conditions]
        new.update(self.fields)
        return None if new == old else new
